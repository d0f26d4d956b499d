package main

import (
	"strings"
	"testing"
)

// TestTemplateExtractJS: the script read from templates/page_extract.go is
// the whole constant — the function and the text rule it is built from.
func TestTemplateExtractJS(t *testing.T) {
	js, err := templateExtractJS()
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(js, "((cfg) => {\n  const clean = ") || strings.Count(js, "const elementText =") != 1 ||
		!strings.Contains(js, "contentVisibility === 'auto'") || !strings.HasSuffix(strings.TrimSpace(js), "})(%s)") {
		t.Fatalf("the script read is not extractJS with textJS inside:\n%.300s\n…\n%s", js, js[max(0, len(js)-200):])
	}
}
