package main

import (
	"encoding/json"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"runtime"
	"strconv"
)

// repoRoot returns the repository's root directory (the parent of bench/).
func repoRoot() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Dir(filepath.Dir(file))
}

// templateExtractJS reads the extraction script batch_extract_pages runs
// (the extractJS constant of templates/page_extract.go) from the
// source, so the baseline evaluates exactly the same JavaScript without the
// template having to export it. The constant may be built from other string
// constants of the file with +; that expression is evaluated here.
func templateExtractJS() (string, error) {
	path := filepath.Join(repoRoot(), "templates", "page_extract.go")
	f, err := parser.ParseFile(token.NewFileSet(), path, nil, 0)
	if err != nil {
		return "", fmt.Errorf("read the extraction script: %w", err)
	}
	consts := map[string]ast.Expr{}
	for _, d := range f.Decls {
		g, ok := d.(*ast.GenDecl)
		if !ok || g.Tok != token.CONST {
			continue
		}
		for _, s := range g.Specs {
			vs := s.(*ast.ValueSpec)
			for i, n := range vs.Names {
				if i < len(vs.Values) {
					consts[n.Name] = vs.Values[i]
				}
			}
		}
	}
	if _, ok := consts["extractJS"]; !ok {
		return "", fmt.Errorf("%s: no extractJS constant", path)
	}
	var eval func(e ast.Expr, depth int) (string, error)
	eval = func(e ast.Expr, depth int) (string, error) {
		if depth > 16 {
			return "", fmt.Errorf("%s: extractJS refers to itself", path)
		}
		switch e := e.(type) {
		case *ast.BasicLit:
			if e.Kind == token.STRING {
				return strconv.Unquote(e.Value)
			}
		case *ast.ParenExpr:
			return eval(e.X, depth+1)
		case *ast.Ident:
			if v, ok := consts[e.Name]; ok {
				return eval(v, depth+1)
			}
		case *ast.BinaryExpr:
			if e.Op == token.ADD {
				x, err := eval(e.X, depth+1)
				if err != nil {
					return "", err
				}
				y, err := eval(e.Y, depth+1)
				return x + y, err
			}
		}
		return "", fmt.Errorf("%s: extractJS is not built from string constants of the file (%T)", path, e)
	}
	return eval(consts["extractJS"], 0)
}

// extractConfig is the configuration batch_extract_pages passes to the
// script for benchFields with its defaults (text on, links and meta off).
func extractConfig() string {
	fields := map[string]any{}
	for name, sel := range benchFields {
		fields[name] = map[string]any{"selector": sel}
	}
	b, _ := json.Marshal(map[string]any{"fields": fields, "text": true, "links": false, "meta": false,
		"maxText": 20000, "maxLinks": 1000})
	return string(b)
}

// benchFields are the fields both sides extract from every page.
var benchFields = map[string]string{"name": "#name", "price": ".price"}
