package templates

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/browsertask/browsertask/browser"
	"github.com/browsertask/browsertask/engine"
	"github.com/browsertask/browsertask/internal/fixture"
)

// mapResult decodes map_site's result.
type mapResult struct {
	Summary       batchSummary `json:"summary"`
	URLs          []mapURL     `json:"urls"`
	URLsTruncated bool         `json:"urlsTruncated"`
	ArtifactID    string       `json:"artifactId"`
	Skipped       []crawlSkip  `json:"skipped"`
	Robots        robotsReport `json:"robots"`
}

func decodeMap(t *testing.T, out *engine.Outcome, env *fakeEnv) (mapResult, []mapURL) {
	t.Helper()
	b, _ := json.Marshal(out.Result)
	var res mapResult
	if err := json.Unmarshal(b, &res); err != nil {
		t.Fatal(err)
	}
	raw, mime := env.artifact("urls.json")
	var all []mapURL
	if err := json.Unmarshal(raw, &all); err != nil || mime != "application/json" {
		t.Fatalf("urls.json (%s): %v", mime, err)
	}
	return res, all
}

// TestMapSiteBigSite (issue 30, acceptance 2): map_site lists the 2000
// pages of the generated site without a browser (the template says it
// needs none, and the browser manager it is given launches nothing),
// each fetched once, with its title and depth; the result holds the
// first 1000, urls.json all.
func TestMapSiteBigSite(t *testing.T) {
	if testing.Short() {
		t.Skip("2000 pages fetched over HTTP; the full suite runs it")
	}
	srv := fixture.New(t)
	m := browser.NewManager(browser.Options{TempDir: t.TempDir()})
	defer m.Close()
	tpl := NewMapSite(m)
	if tpl.Info().NeedsBrowser {
		t.Fatal("map_site says it needs a browser")
	}
	env := newEnv(t, mustJSON(t, map[string]any{"startUrl": srv.URL("/big/0"), "maxPages": 2000}))
	env.profile.MaxURLs = 2000
	began := time.Now()
	out, err := runTemplate(t, tpl, env)
	if err != nil {
		t.Fatal(err)
	}
	took := time.Since(began)
	if pids := m.PIDs(); len(pids) != 0 {
		t.Fatalf("map_site launched a browser: %v", pids)
	}
	res, all := decodeMap(t, out, env)
	if res.Summary.Total != fixture.BigSitePages || res.Summary.Failed != 0 || len(all) != fixture.BigSitePages || len(res.URLs) != maxMapInline || !res.URLsTruncated {
		t.Fatalf("summary %+v, %d URLs in urls.json, %d inline (truncated %v)", res.Summary, len(all), len(res.URLs), res.URLsTruncated)
	}
	seen := map[string]bool{}
	for _, u := range all {
		var n int
		if _, err := fmt.Sscanf(strings.TrimPrefix(u.URL, srv.URL("/big/")), "%d", &n); err != nil || seen[u.URL] {
			t.Fatalf("URL %s (again: %v)", u.URL, seen[u.URL])
		}
		seen[u.URL] = true
		if u.Title != fmt.Sprintf("Big %d", n) || u.Depth != fixture.BigSiteDepth(n) || u.HTTPStatus != 200 {
			t.Fatalf("%+v", u)
		}
	}
	for n, h := range bigHits(srv, "/big/") {
		if h != 1 {
			t.Fatalf("page %d fetched %d times", n, h)
		}
	}
	t.Logf("map_site: %d URLs in %s (%.0f URLs/s)", len(all), took, float64(len(all))/took.Seconds())
}

// TestMapSiteSitemapRobotsSearch: map_site lists the sitemap's pages and
// the linked ones with source, lastmod and titles; robots.txt's
// disallowed URLs are listed as skipped, never requested; with "only" no
// page but the start is fetched; search keeps and ranks the matches.
func TestMapSiteSitemapRobotsSearch(t *testing.T) {
	site := newMapSite(t)
	env := newEnv(t, mustJSON(t, map[string]any{"startUrl": site.URL + "/", "concurrency": 4}))
	out, err := runTemplate(t, NewMapSite(nil), env)
	if err != nil {
		t.Fatal(err)
	}
	res, all := decodeMap(t, out, env)
	got := map[string]mapURL{}
	for _, u := range all {
		got[strings.TrimPrefix(u.URL, site.URL)] = u
	}
	if len(all) != 13 || len(res.URLs) != 13 || got["/orphan/6"].Source != "sitemap" || got["/orphan/6"].Lastmod != "2025-03-01" ||
		got["/orphan/6"].Title != "Orphan 6" || got["/linked/2"].Source != "link" || got["/linked/2"].Depth != 1 || got["/"].Source != "start" {
		t.Fatalf("urls %+v", all)
	}
	if len(res.Skipped) != 2 || !res.Robots.Respected || site.hitsUnder("/secret/") != 0 {
		t.Fatalf("skipped %+v, robots %+v, %d requests for /secret/", res.Skipped, res.Robots, site.hitsUnder("/secret/"))
	}

	before := site.hitsUnder("/orphan/")
	env = newEnv(t, mustJSON(t, map[string]any{"startUrl": site.URL + "/", "sitemap": "only", "search": "orphan 7"}))
	out, err = runTemplate(t, NewMapSite(nil), env)
	if err != nil {
		t.Fatal(err)
	}
	res, all = decodeMap(t, out, env)
	if site.hitsUnder("/orphan/") != before {
		t.Fatalf("sitemap only fetched %d orphan pages", site.hitsUnder("/orphan/")-before)
	}
	// "7" and "orphan" both in /orphan/7's path: 2; the nine others 1.
	if len(all) != 10 || all[0].URL != site.URL+"/orphan/7" || all[0].Score != 2 || all[1].Score != 1 || all[1].URL != site.URL+"/orphan/1" {
		t.Fatalf("ranked %+v", all)
	}
}

// TestMapSiteResumes: a map canceled after some URLs and run again with
// its checkpoints lists the same URLs as a fresh one and requests no page
// twice.
func TestMapSiteResumes(t *testing.T) {
	site := newMapSite(t)
	inputs := mustJSON(t, map[string]any{"startUrl": site.URL + "/", "concurrency": 1})
	first := newEnv(t, inputs)
	runCrawlUntil(t, NewMapSite(nil), first, 5)
	second := newEnv(t, inputs)
	second.done = map[string]engine.Item{}
	for _, it := range first.items {
		second.done[it.Key] = it
	}
	out, err := runTemplate(t, NewMapSite(nil), second)
	if err != nil {
		t.Fatal(err)
	}
	res, all := decodeMap(t, out, second)
	if len(res.Skipped) != 2 {
		t.Fatalf("skipped after resuming: %+v", res.Skipped)
	}
	if len(all) != 13 || len(second.items) != 13-len(first.items) {
		t.Fatalf("%d URLs, %d checkpoints in the second attempt after %d", len(all), len(second.items), len(first.items))
	}
	site.mu.Lock()
	defer site.mu.Unlock()
	for p, h := range site.hits {
		if h > 1 && (strings.HasPrefix(p, "/orphan/") || strings.HasPrefix(p, "/linked/") || p == "/") {
			t.Fatalf("%s requested %d times", p, h)
		}
	}
}
