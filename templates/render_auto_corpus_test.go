//go:build corpora

package templates

import (
	"context"
	"encoding/json"
	"fmt"
	"reflect"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/browsertask/browsertask/internal/fixture"
)

// corpusPage is what TestCorpusRenderAuto compares of a crawled page.
type corpusPage struct {
	URL          string         `json:"url"`
	HTTPStatus   int            `json:"httpStatus"`
	Title        string         `json:"title"`
	Fields       map[string]any `json:"fields"`
	RenderedBy   string         `json:"renderedBy"`
	RenderReason string         `json:"renderReason"`
	Error        *struct {
		Code string `json:"code"`
	} `json:"error"`
}

// crawlCorpus crawls a served corpus from base+"/index.html" with render,
// fields h1 and every h2, 4 tabs, no page limit in reach, and returns its
// pages by URL.
func crawlCorpus(t *testing.T, base, render string) map[string]corpusPage {
	t.Helper()
	env := newEnv(t, mustJSON(t, map[string]any{"startUrl": base + "/index.html", "render": render,
		"maxPages": 5000, "maxDepth": 100, "concurrency": 4,
		"fields": map[string]any{"h1": "h1", "h2s": map[string]any{"selector": "h2", "all": true}}}))
	env.profile.MaxURLs = 5000
	tpl := NewCrawlSite(testManager(t))
	if err := tpl.Check(env.inputs, env.profile); err != nil {
		t.Fatal(err)
	}
	// Hundreds of pages in Chromium on a shared machine: the bound is the
	// go test timeout, not a figure of this test.
	start := time.Now()
	out, err := tpl.Run(context.Background(), env)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("render %s: crawled in %s", render, time.Since(start).Round(time.Millisecond))
	raw, err := json.Marshal(resultOf(t, out)["pages"])
	if err != nil {
		t.Fatal(err)
	}
	var pages []corpusPage
	if err := json.Unmarshal(raw, &pages); err != nil {
		t.Fatal(err)
	}
	byURL := make(map[string]corpusPage, len(pages))
	for _, p := range pages {
		byURL[p.URL] = p
	}
	return byURL
}

// TestCorpusRenderAuto: a crawl of every page of a real documentation
// site (internal/fixture corpora: python3-doc's Sphinx manual,
// postgresql-doc-15's DocBook manual, libjsoncpp-doc's Doxygen reference;
// served on loopback) with render "auto", fields h1 and all h2, reads at
// least 90% of its pages over HTTP and gives every page the title and
// fields of a browser-only crawl of the same site, the same pages, and
// the same status; where auto uses the browser for a group, every page
// says which group, which page and what proved it. The report logs pages
// by renderer, the reasons, and the samples whose text differed only by a
// text rule (counted, not switched). A corpus that is not installed skips
// (fails under CI); -short skips.
func TestCorpusRenderAuto(t *testing.T) {
	for _, name := range []string{fixture.CorpusPython, fixture.CorpusPostgres, fixture.CorpusJsonCpp} {
		t.Run(name, func(t *testing.T) {
			dir := fixture.CorpusDir(t, name)
			base := fixture.ServeCorpus(t, dir)
			auto := crawlCorpus(t, base, "auto")
			browsed := crawlCorpus(t, base, "browser")
			checkAutoAgainstBrowser(t, base, auto, browsed)
		})
	}
}

// checkAutoAgainstBrowser compares an auto crawl with a browser-only one
// page by page (see TestCorpusRenderAuto).
func checkAutoAgainstBrowser(t *testing.T, base string, auto, browsed map[string]corpusPage) {
	t.Helper()
	var only []string
	for u := range auto {
		if _, ok := browsed[u]; !ok {
			only = append(only, "auto only: "+u)
		}
	}
	for u := range browsed {
		if _, ok := auto[u]; !ok {
			only = append(only, "browser only: "+u)
		}
	}
	sort.Strings(only)
	if len(only) > 0 {
		t.Errorf("%d pages crawled by one render only (first 10): %q", len(only), only[:min(10, len(only))])
	}
	overHTTP, textRule, switched := 0, 0, 0
	reasons := map[string]int{}
	groupWhy := map[string]string{} // a switched group's reason, once
	var differ []string
	classes := map[string]int{} // "text rule" / "other" → pages
	for u, a := range auto {
		if a.RenderedBy == renderHTTP {
			overHTTP++
		}
		r := a.RenderReason
		switch {
		case strings.HasPrefix(r, reasonTextRule):
			textRule++
		case switchesGroup(r):
			switched++
			// The reason names the group, the page and what differed.
			if !strings.Contains(r, reasonNeedsJS+"/") || !strings.Contains(r, "differ") {
				t.Errorf("page %s: group reason %q names no page or difference", u, r)
			}
			r = r[:strings.Index(r, reasonNeedsJS)+len(reasonNeedsJS)] + "…"
			groupWhy[r] = a.RenderReason
		}
		reasons[a.RenderedBy+"/"+r]++
		b, ok := browsed[u]
		if !ok {
			continue
		}
		var what []string
		if a.Title != b.Title {
			what = append(what, fmt.Sprintf("title %q vs %q", a.Title, b.Title))
		}
		if a.HTTPStatus != b.HTTPStatus || (a.Error == nil) != (b.Error == nil) {
			what = append(what, fmt.Sprintf("status %d vs %d", a.HTTPStatus, b.HTTPStatus))
		}
		pageClass := "text rule"
		if len(what) > 0 {
			pageClass = "other"
		}
		for _, f := range []string{"h1", "h2s"} {
			if reflect.DeepEqual(a.Fields[f], b.Fields[f]) {
				continue
			}
			class := "other"
			if textRuleOnly(a.Fields[f], b.Fields[f]) {
				class = "text rule"
			} else {
				pageClass = "other"
			}
			what = append(what, fmt.Sprintf("%s (%s) %s: %v vs browser %v", f, class, a.RenderedBy, a.Fields[f], b.Fields[f]))
		}
		if len(what) > 0 {
			classes[pageClass]++
			differ = append(differ, strings.TrimPrefix(u, base)+": "+strings.Join(what, "; "))
		}
	}
	sort.Strings(differ)
	share := 100 * float64(overHTTP) / float64(max(1, len(auto)))
	t.Logf("%d pages (browser-only crawl %d): %d over HTTP (%.1f%%), %d samples differing only by a text rule, %d pages in switched groups; by renderer and reason %v",
		len(auto), len(browsed), overHTTP, share, textRule, switched, reasons)
	for _, why := range groupWhy {
		t.Logf("switched: %s", why)
	}
	if len(differ) > 0 {
		// "text rule": the HTTP path keeps text the browser does not show
		// (the text rule both paths share must hide it); "other": auto
		// served a page whose HTML lacks what the browser shows.
		t.Errorf("%d of %d pages differ from the browser-only crawl in title, status or fields, by class %v (first 20):\n%s",
			len(differ), len(auto), classes, strings.Join(differ[:min(20, len(differ))], "\n"))
	}
	if switched == 0 && share < 90 {
		t.Errorf("%.1f%% of pages over HTTP, want >= 90%% on a site where no group needs JavaScript", share)
	}
}
