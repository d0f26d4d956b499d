package templates

import (
	"reflect"
	"testing"

	"github.com/browsertask/browsertask/engine"
	"github.com/browsertask/browsertask/internal/fixture"
)

// TestBatchExtractRenderHTTP: render "http" reads the same pages without a
// browser (the template has none here) and gives the same result as
// Chromium: titles, statuses, fields (attributes, all, missing), the
// failed page and pages.json's text, links and meta; each page says how
// it was read.
func TestBatchExtractRenderHTTP(t *testing.T) {
	srv := fixture.New(t)
	urls := []string{srv.URL("/static/fields.html"), srv.URL("/page/1"), srv.URL("/status/404"),
		srv.URL("/redirect?to=" + srv.URL("/page/2"))}
	inputs := func(render string) map[string]any {
		return map[string]any{"urls": urls, "render": render, "includeLinks": true, "includeMeta": true, "concurrency": 2,
			"fields": map[string]any{
				"name": "#name", "price": ".price", "tags": map[string]any{"selector": ".tag", "all": true},
				"alt": map[string]any{"selector": "#photo", "attr": "alt"}, "next": map[string]any{"selector": "#next", "attr": "href"},
				"missing": "#nope",
			}}
	}
	browserEnv := newEnv(t, mustJSON(t, inputs("browser")))
	want, err := runBatch(t, browserEnv)
	if err != nil {
		t.Fatal(err)
	}
	httpEnv := newEnv(t, mustJSON(t, inputs("http")))
	tpl := NewBatchExtractPages(nil) // no browser at all
	if err := tpl.Check(httpEnv.inputs, httpEnv.profile); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := fixture.Context(t)
	defer cancel()
	got, err := tpl.Run(ctx, httpEnv)
	if err != nil {
		t.Fatal(err)
	}
	w, g := want.Result.(batchResult), got.Result.(batchResult)
	if g.Summary != w.Summary || !got.Partial || len(g.Pages) != len(w.Pages) {
		t.Fatalf("summary %+v (partial %v), want %+v", g.Summary, got.Partial, w.Summary)
	}
	for i := range w.Pages {
		wp, gp := w.Pages[i], g.Pages[i]
		if wp.RenderedBy != "browser" || gp.RenderedBy != "http" {
			t.Fatalf("page %d renderedBy %q / %q", i, wp.RenderedBy, gp.RenderedBy)
		}
		wp.RenderedBy, gp.RenderedBy = "", ""
		if (wp.Error == nil) != (gp.Error == nil) || (wp.Error != nil && wp.Error.Code != gp.Error.Code) {
			t.Fatalf("page %d error %v, want %v", i, gp.Error, wp.Error)
		}
		wp.Error, gp.Error = nil, nil
		if !reflect.DeepEqual(wp, gp) {
			t.Fatalf("page %d over HTTP:\n%+v\nwant (browser)\n%+v", i, gp, wp)
		}
	}
	bp, hp := browserEnv.pagesJSON(t), httpEnv.pagesJSON(t)
	for i := range bp {
		if *bp[i].Text != *hp[i].Text || !reflect.DeepEqual(bp[i].Links, hp[i].Links) || !reflect.DeepEqual(bp[i].Meta, hp[i].Meta) {
			t.Fatalf("pages.json[%d] differs:\nhttp    %q %v %v\nbrowser %q %v %v", i, *hp[i].Text, hp[i].Links, hp[i].Meta, *bp[i].Text, bp[i].Links, bp[i].Meta)
		}
	}
	// One checkpoint per URL, as in the browser path.
	if len(httpEnv.items) != len(urls) {
		t.Fatalf("checkpoints: %d", len(httpEnv.items))
	}
}

func TestBatchExtractRenderHTTPRefusesBrowserOnlySelectors(t *testing.T) {
	in := mustJSON(t, map[string]any{"urls": []string{"https://example.com/"}, "render": "http",
		"fields": map[string]any{"a": "h1", "b": "p:contains('x')"}})
	err := engine.AsError(NewBatchExtractPages(nil).Check([]byte(in), engine.Profile{TrustLevel: "local", MaxURLs: 10, MaxTabsPerSession: 4}))
	if err == nil || err.Code != engine.InvalidParameter || err.Details["field"] != "inputs.fields.b" {
		t.Fatalf("Check: %v, want INVALID_PARAMETER naming inputs.fields.b", err)
	}
}

// TestCrawlSiteRenderHTTP: a crawl over HTTP, without a browser, visits the
// same pages as the browser crawl (four tabs each, so the order within a
// level may differ), each fetched once, with the same fields and links.
func TestCrawlSiteRenderHTTP(t *testing.T) {
	srv := fixture.New(t)
	in := func(render string) string {
		return mustJSON(t, map[string]any{"startUrl": srv.URL("/crawl/0"), "maxPages": 50, "maxDepth": 3,
			"fields": map[string]string{"h": "h1"}, "includeLinks": true, "render": render, "concurrency": 4})
	}
	benv := newEnv(t, in("browser"))
	bout, err := runTemplate(t, NewCrawlSite(testManager(t)), benv)
	if err != nil {
		t.Fatal(err)
	}
	hits := crawlHits(srv)
	henv := newEnv(t, in("http"))
	hout, err := runTemplate(t, NewCrawlSite(nil), henv)
	if err != nil {
		t.Fatal(err)
	}
	if n := crawlHits(srv) - hits; n != 40 {
		t.Fatalf("the HTTP crawl made %d page requests for the 40 pages of depth <= 3, want one each", n)
	}
	want, got := crawledPaths(t, srv, resultOf(t, bout)), crawledPaths(t, srv, resultOf(t, hout))
	if !reflect.DeepEqual(sortedCopy(got), sortedCopy(want)) || len(got) != 40 {
		t.Fatalf("HTTP crawl visited %v\nbrowser crawl %v", got, want)
	}
	byURL := map[string]pageOut{}
	for _, p := range benv.pagesJSON(t) {
		byURL[p.URL] = p
	}
	hp := henv.pagesJSON(t)
	if len(hp) != 40 || len(byURL) != 40 {
		t.Fatalf("pages.json: %d pages over HTTP, %d distinct in the browser's", len(hp), len(byURL))
	}
	for _, h := range hp {
		b, ok := byURL[h.URL]
		if !ok || !reflect.DeepEqual(b.Fields, h.Fields) || !reflect.DeepEqual(b.Links, h.Links) || h.RenderedBy != "http" || len(h.Links) == 0 {
			t.Fatalf("page %s: http %+v\nbrowser %+v", h.URL, h, b)
		}
	}
}
