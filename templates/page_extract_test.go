package templates

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/browsertask/browsertask/internal/extract/page"
	"github.com/browsertask/browsertask/internal/fuzzseed"
)

// TestExtractOptionsAreTheScriptsConfig: the browser script's cfg is the
// JSON of page.Options, byte for byte what the template's own options
// type wrote before the two paths shared one type: every key, in order,
// "fields": null for no fields, attr and all only when set.
func TestExtractOptionsAreTheScriptsConfig(t *testing.T) {
	caps := fmt.Sprintf(`"maxText":%d,"maxLinks":%d,"maxValueChars":%d,"maxFieldChars":%d,"maxValues":%d,"maxPageFieldChars":%d`,
		maxTextChars, maxLinksPerPage, page.DefaultMaxValueChars, page.DefaultMaxFieldChars, page.DefaultMaxValues, page.DefaultMaxPageFieldChars)
	cases := []struct {
		o    page.Options
		want string
	}{
		{withCaps(page.Options{Fields: pageFields(nil), Text: true}),
			`{"fields":null,"text":true,"links":false,"meta":false,` + caps + `}`},
		{withCaps(page.Options{Fields: pageFields(map[string]fieldSpec{
			"b": {Selector: "a", Attr: "href", All: true}, "a": {Selector: "h1"}}), Links: true, Meta: true}),
			`{"fields":{"a":{"selector":"h1"},"b":{"selector":"a","attr":"href","all":true}},"text":false,"links":true,"meta":true,` + caps + `}`},
	}
	for _, c := range cases {
		expr, err := extractExpr(c.o)
		if err != nil {
			t.Fatal(err)
		}
		if want := fmt.Sprintf(extractJS, c.want); expr != want {
			t.Errorf("script cfg:\n got %s\nwant %s", expr[len(expr)-len(c.want)-1:], c.want)
		}
	}
}

// TestMergeResultEqualsTheJSONRoundTrip: on the HTTP path a page's
// page.Result goes into its pageOut as a value; the pageOut's JSON (what
// checkpoints, results and pages.json hold) is byte for byte the one the
// former round trip through the script's JSON gave, on every seed page
// (fixture pages as served, testdata, Debian's HTML documentation).
// Package page gets its HTML from package fetch, always valid UTF-8
// (FuzzDecodeBody's invariant); the seeds in legacy charsets are raw bytes,
// so they are made valid UTF-8 first, as a decoder would. (On invalid
// UTF-8 the two differ: the round trip's JSON wrote U+FFFD as the
// character, the direct value's as the escape \ufffd.)
func TestMergeResultEqualsTheJSONRoundTrip(t *testing.T) {
	ex := page.NewExtractor(withCaps(page.Options{Fields: pageFields(map[string]fieldSpec{
		"title": {Selector: "h1"}, "links": {Selector: "a", Attr: "href", All: true},
		"html": {Selector: "p", Attr: "html"}, "lang": {Selector: "html", Attr: "lang"},
		"none": {Selector: "#no-such-id"}, "words": {Selector: "p, li", All: true},
	}), Text: true, Links: true, Meta: true}))
	var compared, withLinks, withMeta, withFields int
	for _, p := range fuzzseed.Pages(t) {
		doc, err := page.ParseString(strings.ToValidUTF8(string(p.Body), "\uFFFD"), p.URL)
		if err != nil {
			continue // pages the parser refuses fail before extraction on both paths
		}
		res := ex.Extract(doc)
		direct := &pageOut{URL: p.URL, Fields: map[string]any{}, RenderedBy: renderHTTP}
		if err := mergeResult(res, direct); err != nil {
			t.Fatalf("%s: mergeResult: %v", p.Name, err)
		}
		raw, err := json.Marshal(res)
		if err != nil {
			t.Fatalf("%s: %v", p.Name, err)
		}
		tripped := &pageOut{URL: p.URL, Fields: map[string]any{}, RenderedBy: renderHTTP}
		if err := mergeExtracted(raw, tripped); err != nil {
			t.Fatalf("%s: mergeExtracted: %v", p.Name, err)
		}
		a, errA := json.Marshal(direct)
		b, errB := json.Marshal(tripped)
		if errA != nil || errB != nil {
			t.Fatalf("%s: %v %v", p.Name, errA, errB)
		}
		if !bytes.Equal(a, b) {
			t.Errorf("%s: the pageOut's JSON differs:\n direct  %.400s\n tripped %.400s", p.Name, a, b)
		}
		compared++
		if len(direct.Links) > 0 {
			withLinks++
		}
		if len(direct.Meta) > 0 {
			withMeta++
		}
		if direct.Fields["title"] != nil {
			withFields++
		}
	}
	if compared < 20 || withLinks == 0 || withMeta == 0 || withFields == 0 {
		t.Fatalf("compared %d pages (%d with links, %d with meta, %d with a title field); want 20 or more and some of each", compared, withLinks, withMeta, withFields)
	}
	t.Logf("%d pages: %d with links, %d with meta, %d with a title field", compared, withLinks, withMeta, withFields)
}
