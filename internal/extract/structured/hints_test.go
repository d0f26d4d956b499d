package structured

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"
)

// sphinxLike is a page shaped like a Sphinx chapter: a section whose text
// starts "9. Classes" and cites "RFC 7159", a list, no table rows.
const sphinxLike = `<html><head><title>Classes</title></head><body><div class="body">
<section id="classes"><h1>9. Classes<a class="headerlink" href="#classes">¶</a></h1>
<p>JSON is specified by RFC 7159 (which obsoletes RFC 4627).</p>
<ul><li>one</li><li>two</li><li>three</li></ul>
<p class="edition">Edition 3</p><p class="range">pages 10-20</p>
</section></div></body></html>`

// TestHintsHonestScalars: over one page, an integer read from a section
// holding several numbers is a property error naming the text and the
// numbers (the page is not valid, the property neither filled nor
// missing); x-pattern takes the one meant; a text with one number keeps
// working; x-count counts; an array with no match is [] unless minItems
// refuses it (then it is missing, the note naming minItems).
func TestHintsHonestScalars(t *testing.T) {
	page, err := ParsePage(sphinxLike, "http://127.0.0.1/classes.html")
	if err != nil {
		t.Fatal(err)
	}
	s, err := Compile(json.RawMessage(`{"type":"object","required":["rows"],"properties":{
		"chapter": {"type": "integer", "x-selector": "div.body section"},
		"rfc": {"type": "integer", "x-selector": "div.body section", "x-pattern": "RFC (\\d+)"},
		"first": {"type": "integer", "x-selector": "div.body section", "x-pattern": "^(\\d+)"},
		"edition": {"type": "integer", "x-selector": "p.edition"},
		"items": {"type": "integer", "x-selector": "li", "x-count": true},
		"tables": {"type": "integer", "x-selector": "table", "x-count": true},
		"rows": {"type": "array", "items": {"type": "string"}, "x-selector": "tr"},
		"cells": {"type": "array", "minItems": 1, "x-selector": "td"},
		"pages": {"type": "array", "items": {"type": "integer"}, "x-selector": "p.range"}
	}}`), "options.outputSchema")
	if err != nil {
		t.Fatal(err)
	}
	r := s.Extract(page)
	want := map[string]any{"rfc": int64(7159), "first": int64(9), "edition": int64(3), "items": int64(3), "tables": int64(0), "rows": []any{}}
	if !reflect.DeepEqual(r.Object, want) {
		t.Fatalf("object = %#v, want %#v", r.Object, want)
	}
	if r.Sources["items"] != "count:selector:li" || r.Sources["rows"] != "selector:tr" || r.Sources["rfc"] != "selector:div.body section" {
		t.Fatalf("sources = %v", r.Sources)
	}
	if !reflect.DeepEqual(r.Missing, []string{"cells"}) {
		t.Fatalf("missing = %v, want [cells] (chapter and pages have errors, not gaps)", r.Missing)
	}
	if len(r.Notes) != 1 || !strings.Contains(r.Notes[0], "cells: selector:td matches no element, and the schema refuses an empty list") || !strings.Contains(r.Notes[0], "minItems") {
		t.Fatalf("notes = %q, want the one on cells naming minItems", r.Notes)
	}
	if len(r.Errors) != 2 || len(r.Problems) != 2 || r.Valid() {
		t.Fatalf("errors %v, problems %q: want chapter and pages", r.Errors, r.Problems)
	}
	chapter := r.Problems[0]
	for _, says := range []string{"chapter: selector:div.body section: the text \"9. Classes¶ JSON is specified by RFC 7159", "holds several numbers (9, 7159, 4627, 3, 10 and 1 more)", `"x-pattern"`} {
		if !strings.Contains(chapter, says) {
			t.Errorf("the chapter's error %q does not say %q", chapter, says)
		}
	}
	if !strings.HasPrefix(r.Problems[1], `pages: selector:p.range: the text "pages 10-20" holds several numbers (10, 20)`) {
		t.Errorf("the pages' error = %q", r.Problems[1])
	}
}

// TestHintsFallThroughIsNotTaken: a property whose x-selector text is
// ambiguous is not filled from the page's other data (the meta tag here),
// and the required-property message does not repeat its error.
func TestHintsFallThroughIsNotTaken(t *testing.T) {
	page, err := ParsePage(`<html><head><meta name="rating" content="4"></head><body><p class="r">4 or 5</p></body></html>`, "http://127.0.0.1/")
	if err != nil {
		t.Fatal(err)
	}
	s, err := Compile(json.RawMessage(`{"type":"object","required":["rating"],"properties":{"rating":{"type":"number","x-selector":"p.r"}}}`), "options.outputSchema")
	if err != nil {
		t.Fatal(err)
	}
	r := s.Extract(page)
	if len(r.Object) != 0 || len(r.Missing) != 0 || len(r.Problems) != 1 || !strings.HasPrefix(r.Problems[0], `rating: selector:p.r: the text "4 or 5" holds several numbers (4, 5)`) {
		t.Fatalf("object %v, missing %v, problems %q", r.Object, r.Missing, r.Problems)
	}
}

// TestHintsRefusedAtCompile: every wrong x-pattern or x-count is refused
// naming its path in the schema and the fix.
func TestHintsRefusedAtCompile(t *testing.T) {
	for _, c := range []struct{ prop, says string }{
		{`{"type":"integer","x-selector":"p","x-pattern":"RFC (\\d+"}`, "options.outputSchema.properties.p.x-pattern \"RFC (\\\\d+\" is not a valid regular expression"},
		{`{"type":"integer","x-selector":"p","x-pattern":"RFC \\d+"}`, "options.outputSchema.properties.p.x-pattern \"RFC \\\\d+\" has 0 capture groups; it needs exactly one"},
		{`{"type":"integer","x-selector":"p","x-pattern":"(RFC) (\\d+)"}`, "has 2 capture groups"},
		{`{"type":"integer","x-selector":"p","x-pattern":""}`, "options.outputSchema.properties.p.x-pattern must be a regular expression with one capture group"},
		{`{"type":"integer","x-selector":"p","x-pattern":7}`, "options.outputSchema.properties.p.x-pattern must be a regular expression"},
		{`{"type":"integer","x-pattern":"(\\d+)"}`, "options.outputSchema.properties.p.x-pattern needs an x-selector"},
		{`{"type":"object","x-selector":"p","x-pattern":"(\\d+)","properties":{"a":{"type":"string"}}}`, "not on this object property"},
		{`{"type":"integer","x-selector":"p","x-pattern":"` + strings.Repeat("a", 1001) + `(b)"}`, "keep it under 1000 bytes"},
		{`{"type":"integer","x-selector":"li","x-count":"yes"}`, "options.outputSchema.properties.p.x-count must be true"},
		{`{"type":"integer","x-count":true}`, "options.outputSchema.properties.p.x-count needs an x-selector"},
		{`{"type":"string","x-selector":"li","x-count":true}`, `set "type": "integer" on this property (it is string property)`},
		{`{"type":"integer","x-selector":"li","x-count":true,"x-attr":"href"}`, "leave out x-attr and x-pattern"},
	} {
		_, err := Compile(json.RawMessage(`{"type":"object","properties":{"p":`+c.prop+`}}`), "options.outputSchema")
		if err == nil || !strings.Contains(err.Error(), c.says) {
			t.Errorf("%s: %v; want it to say %q", c.prop, err, c.says)
		}
	}
	if _, err := Compile(json.RawMessage(`{"type":"object","properties":{"p":{"type":"integer","x-selector":"li","x-count":false},"q":{"type":"array","items":{"type":"number"},"x-selector":"li","x-pattern":"(?i)price: (\\S+)"}}}`), "options.outputSchema"); err != nil {
		t.Errorf("x-count false and an x-pattern on an array of numbers are fine: %v", err)
	}
}
