package archdoc

import (
	"cmp"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
)

// handRow is a row of the hand-written Packages table: a line starting
// with "| `"; its first cell names one or more package directories in
// backquotes, each ending in "/" (or "." for the module root). Other
// backquoted words in the cell (main.go) are not directories.
var handRow = regexp.MustCompile("(?m)^\\|\\s*(`[^|]*)\\|")

// dirName is a backquoted name of a package directory.
var dirName = regexp.MustCompile("`(\\.|[A-Za-z0-9_.-]+(?:/[A-Za-z0-9_.-]+)*/)`")

// handNames returns the directory names the hand-written rows give, in
// the order they appear.
func handNames(hand string) []string {
	var names []string
	for _, row := range handRow.FindAllStringSubmatch(hand, -1) {
		for _, m := range dirName.FindAllStringSubmatch(row[1], -1) {
			names = append(names, m[1])
		}
	}
	return names
}

// rowProblems lists every package without a hand-written row and every
// row that names no package: a directory that does not exist, or one with
// Go files that go list does not know. A directory without Go files (e2e/,
// the clients in other languages) may have a row. Each problem says what
// to change in the doc.
func rowProblems(root string, pkgs []pkg, names []string) []string {
	var out []string
	named := map[string]bool{}
	for _, n := range names {
		if named[n] {
			out = append(out, fmt.Sprintf("%s: `%s` has two rows in the Packages table: keep one", docPath, n))
		}
		named[n] = true
	}
	known := map[string]bool{}
	for _, p := range pkgs {
		known[p.name] = true
		if !named[p.name] {
			out = append(out, fmt.Sprintf("%s: package %s (directory `%s`) has no row in the Packages table: add a line\n\t| `%s` | what it owns, and why it is a package of its own |\nabove the generated table", docPath, p.path, p.name, p.name))
		}
	}
	for _, n := range names {
		if known[n] {
			continue
		}
		dir := filepath.Join(root, filepath.FromSlash(strings.TrimSuffix(n, "/")))
		info, err := os.Stat(dir)
		switch {
		case err != nil || !info.IsDir():
			out = append(out, fmt.Sprintf("%s: the Packages table names `%s`, but there is no such directory: it was moved or removed; change the row to the package's new directory, or delete it", docPath, n))
		case hasGoFiles(dir):
			out = append(out, fmt.Sprintf("%s: the Packages table names `%s`, a directory with Go files that `go list ./...` does not report as a package (a build constraint, or a name go ignores?): fix the directory or delete the row", docPath, n))
		}
	}
	return out
}

// hasGoFiles reports whether dir itself holds a .go file.
func hasGoFiles(dir string) bool {
	m, _ := filepath.Glob(filepath.Join(dir, "*.go"))
	return len(m) > 0
}

// importTable is the generated table: every package with its level (0
// imports none of ours; otherwise one more than the highest level it
// imports) and the module's packages it imports, by level then name.
func importTable(pkgs []pkg) string {
	byName := map[string]pkg{}
	for _, p := range pkgs {
		byName[p.name] = p
	}
	level := map[string]int{}
	var levelOf func(string) int
	levelOf = func(n string) int {
		if l, ok := level[n]; ok {
			return l
		}
		l := 0
		for _, imp := range byName[n].imports {
			l = max(l, levelOf(imp)+1)
		}
		level[n] = l
		return l
	}
	rows := make([]pkg, len(pkgs))
	copy(rows, pkgs)
	for _, p := range rows {
		levelOf(p.name)
	}
	slices.SortFunc(rows, func(a, b pkg) int {
		return cmp.Or(cmp.Compare(level[a.name], level[b.name]), strings.Compare(a.name, b.name))
	})
	var b strings.Builder
	b.WriteString("| level | package | imports (of ours, non-test) |\n| --- | --- | --- |\n")
	for _, p := range rows {
		imps := "none"
		if len(p.imports) > 0 {
			imps = "`" + strings.Join(p.imports, "`, `") + "`"
		}
		fmt.Fprintf(&b, "| %d | `%s` | %s |\n", level[p.name], p.name, imps)
	}
	return b.String()
}

// rowDiff lists the rows only in the doc ("-") and only in go list ("+").
func rowDiff(got, want string) string {
	in := func(s string) map[string]bool {
		m := map[string]bool{}
		for _, l := range strings.Split(s, "\n") {
			m[l] = true
		}
		return m
	}
	g, w := in(got), in(want)
	var b strings.Builder
	for _, l := range strings.Split(got, "\n") {
		if !w[l] {
			fmt.Fprintf(&b, "\t- %s   (in the doc, not in go list)\n", l)
		}
	}
	for _, l := range strings.Split(want, "\n") {
		if !g[l] {
			fmt.Fprintf(&b, "\t+ %s   (in go list, not in the doc)\n", l)
		}
	}
	return b.String()
}
