package fidelity

import (
	"bytes"
	"reflect"
	"strings"
	"testing"
)

// sphinxPage is a page shaped like python3-doc's: a headerlink the
// stylesheet hides, a heading hidden by the stylesheet, a <noscript>, a
// closed <details>, an element with hidden and a linked stylesheet.
const sphinxPage = `<!DOCTYPE html><html><head><meta charset="utf-8"><title>json — JSON</title>
<link rel="stylesheet" href="_static/basic.css"></head><body>
<div class="related"><h3>Navigation</h3></div>
<h1>json — JSON<a class="headerlink" href="#json">¶</a></h1>
<p>Text one.</p>
<noscript><p>Please activate JavaScript</p><a href="nojs.html">plain</a></noscript>
<details><summary>More</summary>secret words</details>
<div hidden>invisible part</div>
<pre>&gt;&gt;&gt; import json</pre>
<a href="library/">Library</a>
</body></html>`

func sphinxSource(t *testing.T) *Source {
	t.Helper()
	css := func(href string) []byte {
		if href == "_static/basic.css" {
			return []byte("a.headerlink { visibility: hidden } div.related h3 { display: none }")
		}
		return nil
	}
	return ParseSource([]byte(sphinxPage), "http://127.0.0.1:9/library/json.html", css)
}

// TestParseSource files the words of each kind of content and the links.
func TestParseSource(t *testing.T) {
	s := sphinxSource(t)
	if !s.HideRules || s.TransformRules || s.Scripts {
		t.Errorf("HideRules %v TransformRules %v Scripts %v, want true false false", s.HideRules, s.TransformRules, s.Scripts)
	}
	for set, want := range map[string][]string{
		"noscript": {"please", "activate", "javascript", "plain"},
		"details":  {"secret", "words"},
		"hidden":   {"invisible", "part"},
	} {
		got := map[string]map[string]bool{"noscript": s.Noscript, "details": s.Details, "hidden": s.Hidden}[set]
		for _, w := range want {
			if !got[w] {
				t.Errorf("%s lacks %q: %v", set, w, got)
			}
		}
		if len(got) != len(want) {
			t.Errorf("%s holds %d words, want %d: %v", set, len(got), len(want), got)
		}
	}
	if s.Words[">"] != 3 || s.Words["json"] != 5 || s.Words["more"] != 1 {
		t.Errorf("word counts: > %d json %d more %d, want 3 5 1", s.Words[">"], s.Words["json"], s.Words["more"])
	}
	if !s.Hrefs["http://127.0.0.1:9/library/library/"] || !s.NoscriptHrefs["http://127.0.0.1:9/library/nojs.html"] || s.Hrefs["http://127.0.0.1:9/library/nojs.html"] {
		t.Errorf("hrefs %v, noscript hrefs %v", s.Hrefs, s.NoscriptHrefs)
	}
}

// TestClassifyText names the cause of each kind of difference.
func TestClassifyText(t *testing.T) {
	src := sphinxSource(t)
	cases := []struct {
		name, b, h, class string
		cut               bool
	}{
		{"equal after whitespace", "a  b\n c", "a b c", "", false},
		{"word boundary", "Text one.", "Textone.", ClassWhitespace, false},
		{"order", "a b", "b a", ClassOrder, false},
		{"headerlink", "json — JSON", "json — JSON¶", ClassCSSHidden, false},
		{"noscript", "Text one.", "Text one. Please activate JavaScript", ClassNoscript, false},
		{"details", "More", "More secret words", ClassDetails, false},
		{"hidden attribute", "Text", "Text invisible part", ClassHiddenMarkup, false},
		{"script writes a button", "Text one. «", "Text one.", ClassScript, false},
		{"more prompts than the markup", "> > > > import json", "> > > import json", ClassScript, false},
		{"browser reads markup text", "Text one. Library", "Text one.", ClassBrowserExtra, false},
		{"both", "Text one. «", "Text one.¶", ClassCSSHidden + "+" + ClassScript, false},
		{"text-transform", "LIBRARY Text", "Library Text", ClassTransform, false},
		{"charset", "caf\ufffd", "café", ClassCharset, false},
		{"cut at the cap", "Text one. Library", "Text one.¶", ClassCSSHidden, true},
		{"cut at the cap, aligned", "a b c d e f g h i j Library k l m", "a ¶ b c d e f g h i j Libr", ClassCSSHidden, true},
	}
	for _, c := range cases {
		got, detail := classifyText(c.b, c.h, src, c.cut)
		if got != c.class {
			t.Errorf("%s: class %q, want %q (%s)", c.name, got, c.class, detail)
		}
	}
}

// TestComparePages compares whole pages: a failure on one path differs in
// every aspect, links and fields by their own rules, and the report counts
// pages per aspect and class.
func TestComparePages(t *testing.T) {
	src := sphinxSource(t)
	text := func(s string) *string { return &s }
	b := Page{URL: "u", FinalURL: "u", HTTPStatus: 200, Title: "json — JSON", Text: text("json — JSON Text one."),
		Links:  []Link{{Href: "http://127.0.0.1:9/library/library/", Text: "Library"}},
		Fields: map[string]any{"h1": "json — JSON", "h2s": []any{}}, Meta: map[string]string{}}
	h := b
	h.Text = text("json — JSON¶ Text one.")
	h.Fields = map[string]any{"h1": "json — JSON¶", "h2s": []any{}}
	h.Links = append([]Link{{Href: "http://127.0.0.1:9/library/nojs.html", Text: "plain"}}, b.Links...)
	got := Compare("library/json.html", b, h, src)
	want := []Diff{
		{"library/json.html", AspectText, ClassCSSHidden, `browser+[] http+["¶"]`},
		{"library/json.html", AspectLinks, ClassNoscript, `1/2 links; browser+[] http+["/library/nojs.html"]`},
		{"library/json.html", AspectFields, ClassCSSHidden, `h1: browser+[] http+["¶"]`},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("diffs:\n got %q\nwant %q", got, want)
	}
	failed := h
	failed.Error = &PageError{ErrorCode: "NAVIGATION_FAILED", Message: "net::ERR_NAME_NOT_RESOLVED"}
	if d := Compare("p", b, failed, src); len(d) != len(Aspects) || d[0].Class != ClassPageFailed || !strings.Contains(d[0].Detail, "http NAVIGATION_FAILED") {
		t.Errorf("failed on one path: %q", d)
	}
	nav := b
	nav.Error = &PageError{ErrorCode: "INVALID_PARAMETER", Message: "u redirected to a URL that is not allowed: https://127.0.0.1:9/u"}
	if d := Compare("p", nav, h, src); len(d) != len(Aspects) || d[0].Class != ClassPageFailed+":script-navigation" {
		t.Errorf("script navigation in the browser: %q", d)
	}
	bothFailed := b
	bothFailed.Error = failed.Error
	if d := Compare("p", bothFailed, failed, src); len(d) != 0 {
		t.Errorf("failed alike on both paths: %q", d)
	}

	r := NewReport("python3-doc", "Sphinx")
	r.Add("library/json.html", b, h, src)
	r.Add("same.html", b, b, src)
	r.Add("failed.html", b, failed, src)
	if r.Pages != 3 || r.Equal[AspectTitle] != 2 || r.Equal[AspectText] != 1 || r.Equal[AspectFields] != 1 || r.FailedHTTP != 1 {
		t.Errorf("report: pages %d equal %v failedHTTP %d", r.Pages, r.Equal, r.FailedHTTP)
	}
	if r.Classes[AspectText][ClassCSSHidden] != 1 || r.Classes[AspectText][ClassPageFailed] != 1 {
		t.Errorf("text classes %v", r.Classes[AspectText])
	}
	// The figures are over the pages both paths finished (2 of
	// 3); the page that failed over HTTP is listed with its class.
	if r.Finished != 2 || r.FinishedEqual[AspectTitle] != 2 || r.FinishedEqual[AspectText] != 1 {
		t.Errorf("finished %d, equal among them %v", r.Finished, r.FinishedEqual)
	}
	if len(r.Unfinished) != 1 || r.Unfinished[0].Page != "failed.html" || r.Unfinished[0].Class != ClassPageFailed {
		t.Errorf("unfinished: %+v", r.Unfinished)
	}
	if got := r.ShareAll(AspectTitle); got < 0.66 || got > 0.67 {
		t.Errorf("title over all pages %.3f, want 2/3", got)
	}
	if got := r.ShareExcusing(AspectText, ClassCSSHidden); got != 1 {
		t.Errorf("text excusing css-hidden %.3f, want 1", got)
	}
	gaps := strings.Join(r.Gaps(), "\n")
	for _, w := range []string{"text equal on 50.0% of the 2 pages both paths finished, want ≥ 95.0% (css-hidden 1, page-failed 1)", "links equal on 50.0%"} {
		if !strings.Contains(gaps, w) {
			t.Errorf("gaps lack %q:\n%s", w, gaps)
		}
	}
	if strings.Contains(gaps, "title") {
		t.Errorf("title is equal on every page both paths finished, yet a gap:\n%s", gaps)
	}
	var printed bytes.Buffer
	r.Print(&printed)
	if !strings.Contains(printed.String(), "not finished: failed.html: page-failed (") {
		t.Errorf("Print does not list the unfinished page:\n%s", printed.String())
	}
	var out bytes.Buffer
	if err := r.WriteDetails(&out); err != nil {
		t.Fatal(err)
	}
	if lines := strings.Count(out.String(), "\n"); lines != len(r.Diffs) || lines != 3+len(Aspects) {
		t.Errorf("details: %d lines for %d diffs:\n%s", lines, len(r.Diffs), out.String())
	}
}
