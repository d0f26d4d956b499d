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
// template having to export it.
func templateExtractJS() (string, error) {
	path := filepath.Join(repoRoot(), "templates", "page_extract.go")
	f, err := parser.ParseFile(token.NewFileSet(), path, nil, 0)
	if err != nil {
		return "", fmt.Errorf("read the extraction script: %w", err)
	}
	for _, d := range f.Decls {
		g, ok := d.(*ast.GenDecl)
		if !ok || g.Tok != token.CONST {
			continue
		}
		for _, s := range g.Specs {
			vs := s.(*ast.ValueSpec)
			for i, n := range vs.Names {
				if n.Name != "extractJS" || i >= len(vs.Values) {
					continue
				}
				lit, ok := vs.Values[i].(*ast.BasicLit)
				if !ok {
					return "", fmt.Errorf("%s: extractJS is not a string literal", path)
				}
				return strconv.Unquote(lit.Value)
			}
		}
	}
	return "", fmt.Errorf("%s: no extractJS constant", path)
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
