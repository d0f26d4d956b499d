package templates

import (
	"fmt"
	"reflect"
	"strings"
	"testing"

	"github.com/browsertask/browsertask/engine"
	"github.com/browsertask/browsertask/internal/fixture"
)

// crawledPaths returns the /crawl/N paths of a crawl result, in order, and
// checks each page's depth against the fixture's structure.
func crawledPaths(t *testing.T, srv *fixture.Server, res map[string]any) []string {
	t.Helper()
	var out []string
	for _, raw := range res["pages"].([]any) {
		p := raw.(map[string]any)
		path := strings.TrimPrefix(p["url"].(string), srv.Base())
		var n int
		if _, err := fmt.Sscanf(path, "/crawl/%d", &n); err != nil {
			t.Fatalf("crawled a page outside the site: %v", p["url"])
		}
		if int(p["depth"].(float64)) != fixture.CrawlDepth(n) || p["error"] != nil || p["fields"].(map[string]any)["h"] != fmt.Sprintf("Crawl %d", n) {
			t.Fatalf("page %v", p)
		}
		out = append(out, path)
	}
	return out
}

// expectedCrawl lists the pages a breadth-first crawl of the fixture site
// visits, in order, for the limits and an excluded page.
func expectedCrawl(maxPages, maxDepth, excluded int) []string {
	var out []string
	level := []int{0}
	scheduled := 1
	for d := 0; len(level) > 0; d++ {
		var next []int
		for _, n := range level {
			out = append(out, fmt.Sprintf("/crawl/%d", n))
			if d >= maxDepth {
				continue
			}
			for _, c := range fixture.CrawlChildren(n) {
				if c != excluded && scheduled < maxPages {
					next = append(next, c)
					scheduled++
				}
			}
		}
		level = next
	}
	return out
}

func TestCrawlSiteLimits(t *testing.T) {
	srv := fixture.New(t)
	m := testManager(t)
	// maxPages 50 binds: pages 0..49 in breadth-first order.
	env := newEnv(t, mustJSON(t, map[string]any{"startUrl": srv.URL("/crawl/0"), "maxPages": 50, "fields": map[string]string{"h": "h1"}, "concurrency": 4}))
	out, err := runTemplate(t, NewCrawlSite(m), env)
	if err != nil {
		t.Fatal(err)
	}
	got := crawledPaths(t, srv, resultOf(t, out))
	if want := expectedCrawl(50, 10, -1); !reflect.DeepEqual(got, want) || len(got) != 50 {
		t.Fatalf("maxPages 50 crawled %d pages %v\nwant %v", len(got), got, want)
	}
	last := env.progress[len(env.progress)-1]
	if last.DoneSteps != 50 || last.TotalSteps != 50 || last.Message != "50/50 pages" {
		t.Fatalf("final progress %+v (a finished crawl finds no more)", last)
	}
	if n := srv.Hits("/crawl/50"); n != 0 {
		t.Fatalf("page 50 fetched %d times beyond maxPages", n)
	}

	// maxDepth 3 and an exclude pattern: depth <= 3 (pages 0..39) minus
	// page 5 and its subtree (16, 17, 18), never fetched.
	srv2 := fixture.New(t)
	env = newEnv(t, mustJSON(t, map[string]any{"startUrl": srv2.URL("/crawl/0"), "maxPages": 50, "maxDepth": 3,
		"exclude": []string{"*/crawl/5"}, "fields": map[string]string{"h": "h1"}}))
	out, err = runTemplate(t, NewCrawlSite(m), env)
	if err != nil {
		t.Fatal(err)
	}
	got = crawledPaths(t, srv2, resultOf(t, out))
	want := expectedCrawl(50, 3, 5)
	if !reflect.DeepEqual(got, want) || len(got) != 36 {
		t.Fatalf("maxDepth 3 + exclude crawled %d pages %v\nwant %d %v", len(got), got, len(want), want)
	}
	for _, p := range []string{"/crawl/5", "/crawl/16", "/crawl/40"} {
		if n := srv2.Hits(p); n != 0 {
			t.Fatalf("%s fetched %d times", p, n)
		}
	}
}

func TestCrawlSiteResume(t *testing.T) {
	srv := fixture.New(t)
	m := testManager(t)
	inputs := mustJSON(t, map[string]any{"startUrl": srv.URL("/crawl/0"), "maxPages": 13, "concurrency": 1, "fields": map[string]string{"h": "h1"}})
	first := newEnv(t, inputs)
	if _, err := runTemplate(t, NewCrawlSite(m), first); err != nil {
		t.Fatal(err)
	}
	// A second attempt that already holds the first 6 checkpoints fetches
	// only the other 7 pages and returns the same crawl.
	second := newEnv(t, inputs)
	second.done = map[string]engine.Item{}
	for _, it := range first.items[:6] {
		second.done[it.Key] = it
	}
	crawlHits := func() int {
		n := 0
		for i := 0; i < fixture.CrawlPages; i++ {
			n += srv.Hits(fmt.Sprintf("/crawl/%d", i))
		}
		return n
	}
	before := crawlHits()
	out, err := runTemplate(t, NewCrawlSite(m), second)
	if err != nil {
		t.Fatal(err)
	}
	if got := crawledPaths(t, srv, resultOf(t, out)); !reflect.DeepEqual(got, expectedCrawl(13, 10, -1)) {
		t.Fatalf("resumed crawl %v", got)
	}
	if fetched := crawlHits() - before; fetched != 7 || len(second.items) != 7 {
		t.Fatalf("resume fetched %d pages, checkpointed %d; want 7", fetched, len(second.items))
	}
}
