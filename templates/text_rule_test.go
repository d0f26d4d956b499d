package templates

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"reflect"
	"strings"
	"testing"

	"github.com/browsertask/browsertask/engine"
	"github.com/browsertask/browsertask/internal/extract/fetch"
	"github.com/browsertask/browsertask/internal/fixture"
)

// TestOneTextRuleInEveryScript: every browser script that reads an
// element's text carries the one rule, textJS, verbatim.
func TestOneTextRuleInEveryScript(t *testing.T) {
	for name, script := range map[string]string{"extractJS": extractJS, "outerHTMLExpr": outerHTMLExpr([]string{"h1"})} {
		if !strings.Contains(script, textJS) {
			t.Errorf("%s does not carry textJS verbatim", name)
		}
	}
	if n := strings.Count(extractJS, "innerText !== undefined"); n != 1 {
		t.Errorf("extractJS reads innerText for a value in %d places, want 1 (elementText)", n)
	}
}

// textRuleFields are the elements compared: the first h1 and every h2 and
// dt (Sphinx writes a headerlink ¶ into each, hidden by its style sheet).
var textRuleFields = map[string]any{
	"h1":  "h1",
	"h2s": map[string]any{"selector": "h2", "all": true},
	"dts": map[string]any{"selector": "dt", "all": true},
}

// textRuleSchema reads the same elements with extract_structured's
// x-selectors.
const textRuleSchema = `{"type": "object", "properties": {
  "h1": {"type": "string", "x-selector": "h1"},
  "h2s": {"type": "array", "items": {"type": "string"}, "x-selector": "h2"},
  "dts": {"type": "array", "items": {"type": "string"}, "x-selector": "dt"}
}}`

// TestOneTextRuleOnEveryPathAndTemplate (issue 28, acceptance 3): on
// python3-doc pages (Sphinx, served locally) and the fixture's style sheet
// pages, batch_extract_pages, crawl_site and extract_structured, each in
// Chromium and over HTTP, give the same string for the same element: the
// h1, every h2 and every dt. "Python Setup and Usage" has no ¶ on any of
// the six.
func TestOneTextRuleOnEveryPathAndTemplate(t *testing.T) {
	srv := fixture.New(t)
	base := fixture.ServeCorpus(t, fixture.CorpusDir(t, fixture.CorpusPython))
	m := testManager(t)
	start := base + "/using/index.html"

	// crawl_site, one tab (breadth first, the same pages on both paths).
	type source struct {
		name  string
		pages map[string]map[string]any // url → field → value
	}
	var sources []source
	crawled := []string{}
	for _, render := range []string{renderBrowser, renderHTTP} {
		env := newEnv(t, mustJSON(t, map[string]any{"startUrl": start, "maxPages": 8, "concurrency": 1,
			"render": render, "fields": textRuleFields}))
		if _, err := runTemplate(t, NewCrawlSite(m), env); err != nil {
			t.Fatalf("crawl_site render %s: %v", render, err)
		}
		s := source{name: "crawl_site/" + render, pages: map[string]map[string]any{}}
		for _, p := range env.pagesJSON(t) {
			s.pages[p.URL] = p.Fields
			if render == renderBrowser {
				crawled = append(crawled, p.URL)
			}
		}
		sources = append(sources, s)
	}
	if len(crawled) != 8 {
		t.Fatalf("the browser's crawl read %d pages, want 8", len(crawled))
	}
	urls := append([]string{}, crawled...)
	for _, p := range []string{"/library/json.html", "/tutorial/classes.html", "/library/functions.html", "/glossary.html"} {
		urls = append(urls, base+p)
	}
	for _, p := range fixture.CSSPages() {
		urls = append(urls, srv.URL("/x/css/"+p))
	}
	urls = dedupe(urls)

	for _, render := range []string{renderBrowser, renderHTTP} {
		env := newEnv(t, mustJSON(t, map[string]any{"urls": urls, "render": render, "fields": textRuleFields, "concurrency": 2}))
		if _, err := runBatch(t, env); err != nil {
			t.Fatalf("batch_extract_pages render %s: %v", render, err)
		}
		s := source{name: "batch_extract_pages/" + render, pages: map[string]map[string]any{}}
		for _, p := range env.pagesJSON(t) {
			if p.Error != nil {
				t.Fatalf("%s %s: %v", s.name, p.URL, p.Error)
			}
			s.pages[p.URL] = p.Fields
		}
		sources = append(sources, s)

		senv := schemaEnv{newEnv(t, mustJSON(t, map[string]any{"urls": urls, "render": render, "concurrency": 2})), json.RawMessage(textRuleSchema)}
		if _, err := runStructured(t, t.Context(), NewExtractStructured(m, nil), senv); err != nil {
			t.Fatalf("extract_structured render %s: %v", render, err)
		}
		s = source{name: "extract_structured/" + render, pages: map[string]map[string]any{}}
		for _, it := range itemsJSON(t, senv.fakeEnv) {
			if it.Error != nil {
				t.Fatalf("%s %s: %v", s.name, it.URL, it.Error)
			}
			s.pages[it.URL] = it.Object
		}
		sources = append(sources, s)
	}

	// The reference: batch_extract_pages in Chromium (sources[2]).
	ref := sources[2]
	if got := ref.pages[start]["h1"]; got != "Python Setup and Usage" {
		t.Fatalf("%s: h1 of %s = %q", ref.name, start, got)
	}
	compared := 0
	for _, u := range urls {
		want := ref.pages[u]
		if want == nil {
			t.Fatalf("%s has no page %s", ref.name, u)
		}
		for _, s := range sources {
			got, ok := s.pages[u]
			if !ok {
				if !strings.HasPrefix(s.name, "crawl_site/") {
					t.Errorf("%s has no page %s", s.name, u)
				}
				continue
			}
			for field := range textRuleFields {
				w, g := comparable(want[field]), comparable(got[field])
				if w == nil && g == nil {
					continue
				}
				compared++
				if !reflect.DeepEqual(w, g) {
					t.Errorf("%s %s:\n  %s: %s\n  %s: %s", u, field, ref.name, show(w), s.name, show(g))
				}
			}
		}
	}
	if compared < 5*len(urls) {
		t.Fatalf("only %d values compared over %d pages", compared, len(urls))
	}
	t.Logf("%d pages, %d values compared across %d sources", len(urls), compared, len(sources))
}

// comparable is a value as the templates can be compared on it: a list's
// empty strings dropped (extract_structured skips elements without text;
// batch_extract_pages keeps their ""), an empty list and an empty
// string as nothing (extract_structured leaves such a property out).
func comparable(v any) any {
	switch x := v.(type) {
	case []any:
		var out []string
		for _, e := range x {
			if s, ok := e.(string); ok && s != "" {
				out = append(out, s)
			} else if !ok && e != nil {
				out = append(out, fmt.Sprint(e))
			}
		}
		if len(out) == 0 {
			return nil
		}
		return out
	case string:
		if x == "" {
			return nil
		}
		return x
	case nil:
		return nil
	}
	return fmt.Sprint(v)
}

// TestCrossOriginSheetIsTheKnownDifference: a page whose sheet comes from
// another origin. Chromium applies it; the HTTP path does not fetch it
// (internal/extract/fetch/styles.go), so the text it hides shows there, and
// the document's StyleReport names the sheet that was left out. This is
// the documented difference, asserted so that it cannot change unseen.
func TestCrossOriginSheetIsTheKnownDifference(t *testing.T) {
	sheets := fixture.New(t)
	pageSrv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		_, _ = w.Write([]byte(fixture.CSSCrossOriginPage(sheets.Base())))
	}))
	defer pageSrv.Close()
	u := pageSrv.URL + "/cross"

	env := newEnv(t, mustJSON(t, map[string]any{"urls": []string{u}, "includeText": true}))
	if _, err := runBatch(t, env); err != nil {
		t.Fatal(err)
	}
	bp := env.pagesJSON(t)
	if len(bp) != 1 || bp[0].Text == nil || *bp[0].Text != "end" {
		t.Fatalf("browser: %s", show(bp))
	}
	if n := sheets.Hits("/x/css/sheet/imported.css"); n != 1 {
		t.Fatalf("the browser requested the other origin's sheet %d times, want 1", n)
	}

	f, err := fetch.New(fetch.Options{Policy: engine.URLPolicy{TrustLevel: "local"}})
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	pg, err := f.Fetch(t.Context(), u)
	if err != nil {
		t.Fatal(err)
	}
	doc, err := f.Document(t.Context(), pg)
	if err != nil {
		t.Fatal(err)
	}
	text, _ := doc.Text(1000)
	report, _ := doc.StyleReport()
	if text != "another origin's rule\n\nend" || len(report) != 1 || report[0].Applied ||
		report[0].URL != sheets.URL("/x/css/sheet/imported.css") || !strings.Contains(report[0].Reason, "another origin") {
		t.Fatalf("http: text %q, report %+v", text, report)
	}
	if n := sheets.Hits("/x/css/sheet/imported.css"); n != 1 {
		t.Fatalf("the HTTP path requested the other origin's sheet (%d requests in all)", n)
	}
}
