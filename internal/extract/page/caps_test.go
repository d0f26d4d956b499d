package page

import (
	"fmt"
	"strings"
	"testing"
)

// nestedPage is issue 26's item 2: depth <div>s nested around text of n
// bytes, so every element's text holds its descendants' text.
func nestedPage(depth, n int) string {
	return "<!doctype html><body>" + strings.Repeat("<div>", depth) + strings.Repeat("abcdefgh", n/8) +
		strings.Repeat("</div>", depth) + "</body>"
}

// TestAllFieldCapped: `all` over 300 nested divs around 1 MiB of text
// keeps two values of 20000 characters (the third would pass the field's
// 50000) and says so; before the caps it returned 300 values of ~1 MiB.
func TestAllFieldCapped(t *testing.T) {
	r := extractOK(t, nestedPage(300, 1<<20), "http://example.test/", Options{Fields: map[string]Field{"d": {Selector: "div", All: true}}})
	vals, ok := r.Fields["d"].([]any)
	if !ok || len(vals) != 2 {
		t.Fatalf("d: %d values (%T)", len(vals), r.Fields["d"])
	}
	for i, v := range vals {
		if s, _ := v.(string); len(s) != DefaultMaxValueChars {
			t.Fatalf("value %d: %d chars, want %d", i, len(s), DefaultMaxValueChars)
		}
	}
	if got, want := r.FieldsCapped["d"], (FieldCap{Matches: 300, Kept: 2, Cut: 2}); got != want {
		t.Fatalf("fieldsCapped.d = %+v, want %+v", got, want)
	}
}

// TestCapsCountPageAndSingle: the count cap, the page budget shared by
// fields in name order, a single value cut, and no report when nothing
// was cut.
func TestCapsCountPageAndSingle(t *testing.T) {
	var b strings.Builder
	b.WriteString("<body>")
	for i := range 1500 {
		fmt.Fprintf(&b, "<p>%d</p>", i)
	}
	b.WriteString(`<h1>` + strings.Repeat("é", 25000) + `</h1><h2>short</h2></body>`)
	r := extractOK(t, b.String(), "http://example.test/", Options{
		Fields: map[string]Field{"a": {Selector: "p", All: true}, "b": {Selector: "h1"}, "c": {Selector: "h1"}, "d": {Selector: "h2"}},
		// a uses 2890 characters of the page's 23000; b takes 20000, c
		// would too but only 110 are left; d fits.
		MaxPageFieldChars: 23000,
	})
	if got := len(r.Fields["a"].([]any)); got != DefaultMaxValues {
		t.Fatalf("a: %d values", got)
	}
	want := map[string]FieldCap{"a": {Matches: 1500, Kept: 1000, Cut: 0}, "b": {Matches: 1, Kept: 1, Cut: 1}, "c": {Matches: 1, Kept: 0, Cut: 0}}
	if fmt.Sprint(r.FieldsCapped) != fmt.Sprint(want) {
		t.Fatalf("fieldsCapped = %v, want %v", r.FieldsCapped, want)
	}
	if s := r.Fields["b"].(string); len([]rune(s)) != DefaultMaxValueChars {
		t.Fatalf("b: %d runes", len([]rune(s)))
	}
	if r.Fields["c"] != nil || r.Fields["d"] != "short" {
		t.Fatalf("c = %v, d = %v", r.Fields["c"], r.Fields["d"])
	}
}

// TestLinksTruncatedReported: more distinct links than MaxLinks are cut
// and reported; exactly MaxLinks are not.
func TestLinksTruncatedReported(t *testing.T) {
	page := func(n int) string {
		var b strings.Builder
		for i := range n {
			fmt.Fprintf(&b, `<a href="/p/%d">%d</a><a href="/p/%d">again</a>`, i, i, i)
		}
		return b.String()
	}
	r := extractOK(t, page(1001), "http://example.test/", Options{Links: true, MaxLinks: 1000})
	if len(r.Links) != 1000 || !r.LinksTruncated {
		t.Fatalf("1001 links: %d kept, truncated %v", len(r.Links), r.LinksTruncated)
	}
	r = extractOK(t, page(1000), "http://example.test/", Options{Links: true, MaxLinks: 1000})
	if len(r.Links) != 1000 || r.LinksTruncated {
		t.Fatalf("1000 links: %d kept, truncated %v", len(r.Links), r.LinksTruncated)
	}
}

// extractOK is Extract on a page the parser accepts.
func extractOK(t *testing.T, body, pageURL string, o Options) *Result {
	t.Helper()
	r, err := Extract(body, pageURL, o)
	if err != nil {
		t.Fatal(err)
	}
	return r
}
