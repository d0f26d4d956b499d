package templates

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"reflect"
	"strings"
	"testing"

	"github.com/browsertask/browsertask/engine"
	"github.com/browsertask/browsertask/internal/fixture"
)

// honestPage is shaped like a Sphinx chapter: a section whose text starts
// "9. Classes" and cites "RFC 7159", a list of three, no table.
const honestPage = `<!doctype html><html><head><title>9. Classes</title></head><body><div class="body">
<section id="classes"><h1>9. Classes<a class="headerlink" href="#classes">¶</a></h1>
<p>JSON is specified by RFC 7159 (which obsoletes RFC 4627).</p>
<ul>
<li>one</li>
<li>two</li>
<li>three</li>
</ul>
</section></div></body></html>`

// honestSchema's properties: "chapter" reads a number from the whole
// section (several candidates) unless dropped; the others read it right.
func honestSchema(t *testing.T, withChapter bool, extra map[string]any, required ...string) json.RawMessage {
	props := map[string]any{
		"rfc":    map[string]any{"type": "integer", "x-selector": "div.body section", "x-pattern": `RFC (\d+)`},
		"first":  map[string]any{"type": "integer", "x-selector": "div.body section", "x-pattern": `^(\d+)`},
		"items":  map[string]any{"type": "integer", "x-selector": "li", "x-count": true},
		"tables": map[string]any{"type": "integer", "x-selector": "table", "x-count": true},
		"rows":   map[string]any{"type": "array", "items": map[string]any{"type": "string"}, "x-selector": "tr"},
	}
	if withChapter {
		props["chapter"] = map[string]any{"type": "integer", "x-selector": "div.body section"}
	}
	for k, v := range extra {
		props[k] = v
	}
	s := map[string]any{"type": "object", "properties": props}
	if len(required) > 0 {
		s["required"] = required
	}
	return json.RawMessage(mustJSON(t, s))
}

// runHonest runs extract_structured over urls with render and schema and
// returns the result's items.
func runHonest(t *testing.T, urls []string, render string, schema json.RawMessage) []structuredEntry {
	t.Helper()
	tpl := NewExtractStructured(nil, nil)
	if render == renderBrowser {
		tpl = NewExtractStructured(testManager(t), nil)
	}
	env := schemaEnv{newEnv(t, mustJSON(t, map[string]any{"urls": urls, "render": render})), schema}
	ctx, cancel := fixture.Context(t)
	defer cancel()
	out, err := runStructured(t, ctx, tpl, env)
	if err != nil && engine.CodeOf(err) != engine.StepExecutionFailed {
		t.Fatalf("%s: %v", render, err)
	}
	if out == nil {
		items := itemsJSON(t, env.fakeEnv)
		entries := make([]structuredEntry, len(items))
		for i, it := range items {
			entries[i] = structuredEntry{URL: it.URL, Object: it.Object, Error: it.Error}
		}
		return entries
	}
	return out.Result.(structuredResult).Items
}

// TestExtractStructuredHonestScalars: on both paths, an integer read from
// a section holding "9" and "7159" fails the page naming the property,
// the text and the numbers (the same message on both paths), while
// x-pattern, x-count and an array with no match ([]) give their values;
// without that property the page succeeds with exactly those values; a
// required array with minItems and no match still fails, naming minItems.
func TestExtractStructuredHonestScalars(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		_, _ = w.Write([]byte(honestPage))
	}))
	defer srv.Close()
	urls := []string{srv.URL + "/tutorial/classes.html"}
	good := map[string]any{"rfc": 7159, "first": 9, "items": 3, "tables": 0, "rows": []any{}}
	messages := map[string]string{}
	for _, render := range []string{renderHTTP, renderBrowser} {
		items := runHonest(t, urls, render, honestSchema(t, true, nil))
		e := items[0].Error
		if items[0].Object != nil || e == nil || e.Code != engine.StepExecutionFailed {
			t.Fatalf("%s: object %v, error %+v; want the page to fail", render, items[0].Object, e)
		}
		for _, says := range []string{`chapter: selector:div.body section: the text "9. Classes¶ JSON is specified by RFC 7159 (which obsoletes RFC 4627). one two t…" holds several numbers (9, 7159, 4627)`, `"x-pattern"`} {
			if !strings.Contains(e.Message, says) {
				t.Errorf("%s: the error %q does not say %q", render, e.Message, says)
			}
		}
		if strings.Contains(e.Message, "no model is configured") {
			t.Errorf("%s: the error %q blames a missing model for a schema problem", render, e.Message)
		}
		messages[render] = e.Message

		items = runHonest(t, urls, render, honestSchema(t, false, nil, "rows"))
		if items[0].Error != nil || !reflect.DeepEqual(roundTrip(t, items[0].Object), roundTrip(t, good)) {
			t.Fatalf("%s: object %v, error %v; want %v", render, items[0].Object, items[0].Error, good)
		}

		cells := map[string]any{"cells": map[string]any{"type": "array", "minItems": 1, "x-selector": "td"}}
		items = runHonest(t, urls, render, honestSchema(t, false, cells, "cells"))
		e = items[0].Error
		if e == nil || !strings.Contains(e.Message, "cells: required property is missing") || !strings.Contains(e.Message, "cells: selector:td matches no element, and the schema refuses an empty list") || !strings.Contains(e.Message, "minItems") {
			t.Fatalf("%s: a required minItems array with no match: %+v", render, e)
		}
	}
	if messages[renderHTTP] != messages[renderBrowser] {
		t.Fatalf("the paths word the error differently:\nhttp:    %s\nbrowser: %s", messages[renderHTTP], messages[renderBrowser])
	}
}

// pythonDocs is Debian's python3-doc, the real Sphinx site of the issue.
const pythonDocs = "/usr/share/doc/python3/html"

// TestExtractStructuredHonestOnPythonDocs: on python3-doc's json.html
// ("RFC 7159 (which obsoletes RFC 4627) and by ECMA-404") and the
// tutorial's "9. Classes", over HTTP and in Chromium: an integer from the
// whole section fails each page naming its text, x-pattern reads 7159 and
// 9, x-count counts the headerlinks the files hold, and a selector
// matching nothing gives [].
func TestExtractStructuredHonestOnPythonDocs(t *testing.T) {
	if _, err := os.Stat(pythonDocs + "/library/json.html"); err != nil {
		if os.Getenv("CI") != "" {
			t.Fatalf("python3-doc is missing (%v): .ci/run installs it", err)
		}
		t.Skipf("python3-doc is not installed (%v)", err)
	}
	srv := httptest.NewServer(http.FileServer(http.Dir(pythonDocs)))
	defer srv.Close()
	pages := []string{"library/json.html", "tutorial/classes.html"}
	urls := []string{srv.URL + "/" + pages[0], srv.URL + "/" + pages[1]}
	var headerlinks []int
	for _, p := range pages {
		raw, err := os.ReadFile(pythonDocs + "/" + p)
		if err != nil {
			t.Fatal(err)
		}
		headerlinks = append(headerlinks, strings.Count(string(raw), `class="headerlink"`))
	}
	schema := json.RawMessage(mustJSON(t, map[string]any{"type": "object", "properties": map[string]any{
		"n": map[string]any{"type": "integer", "x-selector": "div.body section"},
	}}))
	read := json.RawMessage(mustJSON(t, map[string]any{"type": "object", "properties": map[string]any{
		"rfc":     map[string]any{"type": "integer", "x-selector": "div.body > section > p", "x-pattern": `RFC (\d+)`},
		"chapter": map[string]any{"type": "integer", "x-selector": "div.body h1", "x-pattern": `^(\d+)\.`},
		"links":   map[string]any{"type": "integer", "x-selector": "a.headerlink", "x-count": true},
		"none":    map[string]any{"type": "array", "x-selector": "div.no-such-thing"},
	}}))
	for _, render := range []string{renderHTTP, renderBrowser} {
		items := runHonest(t, urls, render, schema)
		for i, says := range []string{`the text "json — JSON encoder and decoder`, `the text "9. Classes`} {
			e := items[i].Error
			if e == nil || !strings.Contains(e.Message, "n: selector:div.body section: "+says) || !strings.Contains(e.Message, "holds several numbers (") {
				t.Errorf("%s %s: %+v; want n's error naming %q", render, pages[i], e, says)
			}
		}
		if e := items[0].Error; e != nil && !strings.Contains(e.Message, "7159") {
			t.Errorf("%s json.html: %q does not name 7159", render, e.Message)
		}
		items = runHonest(t, urls, render, read)
		want := []map[string]any{
			{"rfc": 7159, "links": headerlinks[0], "none": []any{}},
			{"chapter": 9, "links": headerlinks[1], "none": []any{}},
		}
		for i := range want {
			if items[i].Error != nil || !reflect.DeepEqual(roundTrip(t, items[i].Object), roundTrip(t, want[i])) {
				t.Errorf("%s %s: object %v, error %v; want %v", render, pages[i], items[i].Object, items[i].Error, want[i])
			}
		}
	}
}
