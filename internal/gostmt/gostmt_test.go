package gostmt

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
)

// excludedDirs are skipped whole, by rule: code that never runs in the
// daemon (benchmarks, test fixtures and suites, black-box tests, other
// languages' clients) and data.
var excludedDirs = map[string]string{
	"bench":            "the benchmark command",
	"internal/fixture": "test fixture sites and the fixtured command",
	"db/storetest":     "the Store test suite (run by tests only)",
	"test":             "black-box tests",
	"e2e":              "clients in other languages",
	"testdata":         "data",
	"node_modules":     "data",
	".git":             "data",
	".cache":           "data",
}

// allowed are the goroutines started without engine.Go, as file:function
// (the innermost named function holding the statement), each with why.
var allowed = map[string]string{
	"engine/goroutine.go:Go":  "the helper itself",
	"main.go:main":            "the second-signal exit, before anything runs",
	"cli/http.go:serveHTTP":   "the process's HTTP listener (net/http recovers handler panics)",
	"engine/lifecycle.go:Run": "the engine's loops (errgroup); every tick is guarded (Engine.every)",
	"cli/serve.go:cmdServe":   "the process's errgroup: engine, listeners (process-level)",
	"cli/mcp.go:cmdMCP":       "the process's errgroup: engine, stdio, listeners (process-level)",
}

// finding is one goroutine started outside engine.Go.
type finding struct {
	pos  token.Position
	key  string // file:function
	what string
}

// goStarts lists the go statements and .Go(...) method calls of one
// parsed file, each with the innermost named function holding it.
func goStarts(fset *token.FileSet, rel string, f *ast.File) []finding {
	var out []finding
	var stack []string
	var visit func(n ast.Node) bool
	visit = func(n ast.Node) bool {
		switch x := n.(type) {
		case *ast.FuncDecl:
			stack = append(stack, x.Name.Name)
			if x.Body != nil {
				ast.Inspect(x.Body, visit)
			}
			stack = stack[:len(stack)-1]
			return false
		case *ast.GoStmt:
			out = append(out, finding{fset.Position(x.Pos()), key(rel, stack), "go statement"})
		case *ast.CallExpr:
			if sel, ok := x.Fun.(*ast.SelectorExpr); ok && sel.Sel.Name == "Go" {
				if id, ok := sel.X.(*ast.Ident); !ok || id.Name != "engine" {
					out = append(out, finding{fset.Position(x.Pos()), key(rel, stack), "call of a method Go"})
				}
			}
		}
		return true
	}
	ast.Inspect(f, visit)
	return out
}

// key is file:function for the innermost named function of stack ("" at
// file level).
func key(rel string, stack []string) string {
	fn := ""
	if len(stack) > 0 {
		fn = stack[len(stack)-1]
	}
	return rel + ":" + fn
}

// moduleRoot is the directory of go.mod above the test's directory.
func moduleRoot(t *testing.T) string {
	t.Helper()
	dir, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			t.Fatal("go.mod not found above the test's directory")
		}
		dir = parent
	}
}

// TestNoBareGoStatements: every goroutine of the daemon starts through
// engine.Go (a panic becomes that page's or run's EXECUTION_ERROR, never a
// process exit), except the allow-list; an allow-list entry that matches
// nothing any more is an error too, so the list stays short and true.
func TestNoBareGoStatements(t *testing.T) {
	root := moduleRoot(t)
	fset := token.NewFileSet()
	var found []finding
	files := 0
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, path)
		rel = filepath.ToSlash(rel)
		if d.IsDir() {
			if _, skip := excludedDirs[rel]; skip || (rel != "." && excludedDirs[d.Name()] == "data") {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(rel, ".go") || strings.HasSuffix(rel, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(fset, path, nil, parser.SkipObjectResolution)
		if err != nil {
			return err
		}
		files++
		found = append(found, goStarts(fset, rel, f)...)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if files < 100 {
		t.Fatalf("only %d Go files checked under %s: the walk is broken", files, root)
	}
	used := map[string]bool{}
	var bad []string
	for _, f := range found {
		if _, ok := allowed[f.key]; ok {
			used[f.key] = true
			continue
		}
		bad = append(bad, fmt.Sprintf("%s:%d: %s in %s", strings.TrimPrefix(f.pos.Filename, root+"/"), f.pos.Line, f.what, f.key))
	}
	sort.Strings(bad)
	for _, b := range bad {
		t.Errorf("%s: start it with engine.Go (engine/goroutine.go) so a panic fails its page or run instead of the process, or add a process-level loop to the allow-list with the reason", b)
	}
	for k := range allowed {
		if !used[k] {
			t.Errorf("allow-list entry %s matches no goroutine any more: remove it", k)
		}
	}
}

// TestGoStartsFindsEveryForm: the checker sees a go statement in a
// function, a method and a closure, and a method Go, but not engine.Go.
func TestGoStartsFindsEveryForm(t *testing.T) {
	src := `package p
func f() { go g() }
func (r *T) m() { h := func() { go func() {}() }; h() }
func k(g *errgroup.Group) { g.Go(nil) }
func ok() { engine.Go(nil, nil, "s", nil, nil) }
var v = func() { go g() }
`
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, "p.go", src, 0)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, x := range goStarts(fset, "p.go", f) {
		got = append(got, fmt.Sprintf("%d %s %s", x.pos.Line, x.key, x.what))
	}
	want := []string{"2 p.go:f go statement", "3 p.go:m go statement", "4 p.go:k call of a method Go", "6 p.go: go statement"}
	if strings.Join(got, "|") != strings.Join(want, "|") {
		t.Fatalf("found %q, want %q", got, want)
	}
}
