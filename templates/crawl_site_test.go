package templates

import (
	"encoding/json"
	"fmt"
	"reflect"
	"sort"
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

// sortedCopy returns the paths sorted, for comparing crawls whose order
// within a level depends on which page finished first.
func sortedCopy(paths []string) []string {
	out := append([]string(nil), paths...)
	sort.Strings(out)
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

// crawlHits sums the fixture's requests for the /crawl pages.
func crawlHits(srv *fixture.Server) int {
	n := 0
	for i := 0; i < fixture.CrawlPages; i++ {
		n += srv.Hits(fmt.Sprintf("/crawl/%d", i))
	}
	return n
}

func TestCrawlSiteLimits(t *testing.T) {
	srv := fixture.New(t)
	m := testManager(t)
	// One tab: exactly breadth first, maxPages 50 binds: pages 0..49 in
	// order.
	env := newEnv(t, mustJSON(t, map[string]any{"startUrl": srv.URL("/crawl/0"), "maxPages": 50, "fields": map[string]string{"h": "h1"}, "concurrency": 1}))
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

	// maxDepth 3 and an exclude pattern, four tabs: depth <= 3 (pages
	// 0..39) minus page 5 and its subtree (16, 17, 18), never fetched.
	srv2 := fixture.New(t)
	env = newEnv(t, mustJSON(t, map[string]any{"startUrl": srv2.URL("/crawl/0"), "maxPages": 50, "maxDepth": 3,
		"exclude": []string{"*/crawl/5"}, "fields": map[string]string{"h": "h1"}, "concurrency": 4}))
	out, err = runTemplate(t, NewCrawlSite(m), env)
	if err != nil {
		t.Fatal(err)
	}
	got = sortedCopy(crawledPaths(t, srv2, resultOf(t, out)))
	want := sortedCopy(expectedCrawl(50, 3, 5))
	if !reflect.DeepEqual(got, want) || len(got) != 36 {
		t.Fatalf("maxDepth 3 + exclude crawled %d pages %v\nwant %d %v", len(got), got, len(want), want)
	}
	for _, p := range []string{"/crawl/5", "/crawl/16", "/crawl/40"} {
		if n := srv2.Hits(p); n != 0 {
			t.Fatalf("%s fetched %d times", p, n)
		}
	}
	if n := crawlHits(srv2); n != 36 {
		t.Fatalf("%d page requests for 36 pages", n)
	}
}

// TestCrawlSiteMaxPagesCheckedAgainstMaxURLs: maxPages past 1000 passes
// the schema; the server's maxUrls is the limit, named with the field.
func TestCrawlSiteMaxPagesCheckedAgainstMaxURLs(t *testing.T) {
	tpl := NewCrawlSite(nil)
	s, err := engine.CompileSchema(tpl.Info().InputSchema)
	if err != nil {
		t.Fatal(err)
	}
	in := json.RawMessage(`{"startUrl":"http://127.0.0.1:1/","maxPages":5000}`)
	if verr := s.Validate(in, "inputs"); verr != nil {
		t.Fatalf("maxPages 5000 refused by the schema: %v", verr)
	}
	if verr := s.Validate(json.RawMessage(`{"startUrl":"http://127.0.0.1:1/","maxPages":100001}`), "inputs"); verr == nil {
		t.Fatal("maxPages 100001 passed the schema")
	}
	p := engine.Profile{MaxURLs: 1000, MaxTabsPerSession: 20, TrustLevel: "local"}
	e := engine.AsError(tpl.Check(in, p))
	if e == nil || e.Code != engine.InvalidParameter || e.Details["field"] != "inputs.maxPages" || e.Details["maxUrls"] != 1000 ||
		!strings.Contains(e.Message, "inputs.maxPages") || !strings.Contains(e.Message, "1000") {
		t.Fatalf("Check(maxPages 5000, maxUrls 1000) = %v, want INVALID_PARAMETER naming inputs.maxPages and 1000", e)
	}
	p.MaxURLs = 5000
	if err := tpl.Check(in, p); err != nil {
		t.Fatalf("Check(maxPages 5000, maxUrls 5000) = %v", err)
	}
}

// bigPages checks a crawl result over the big site under prefix ("/big/"
// or "/big/slow/5/"): every page once, at its depth, without error,
// within maxDepth, its parent crawled too. It returns the page numbers.
func bigPages(t *testing.T, srv *fixture.Server, prefix string, res map[string]any, maxDepth int) map[int]bool {
	t.Helper()
	seen := map[int]bool{}
	for _, raw := range res["pages"].([]any) {
		p := raw.(map[string]any)
		var n int
		if _, err := fmt.Sscanf(strings.TrimPrefix(p["url"].(string), srv.Base()+prefix), "%d", &n); err != nil {
			t.Fatalf("crawled a page outside %s: %v", prefix, p["url"])
		}
		if seen[n] {
			t.Fatalf("page %d twice in the result", n)
		}
		seen[n] = true
		d := int(p["depth"].(float64))
		if d != fixture.BigSiteDepth(n) || d > maxDepth || p["error"] != nil || p["fields"].(map[string]any)["h"] != fmt.Sprintf("Page %d", n) {
			t.Fatalf("page %v", p)
		}
	}
	for n := range seen {
		if n > 0 && !seen[(n-1)/8] {
			t.Fatalf("page %d crawled without its parent %d", n, (n-1)/8)
		}
	}
	return seen
}

// bigHits returns the requests for each big-site page under prefix.
func bigHits(srv *fixture.Server, prefix string) map[int]int {
	out := map[int]int{}
	for n := 0; n < fixture.BigSitePages; n++ {
		if h := srv.Hits(fmt.Sprintf("%s%d", prefix, n)); h > 0 {
			out[n] = h
		}
	}
	return out
}

// TestCrawlSiteConcurrentEachPageOnce: four tabs take pages as they come
// (no barrier per level); every page is fetched exactly once, maxPages is
// met exactly and maxDepth is kept, over the browser and over HTTP.
func TestCrawlSiteConcurrentEachPageOnce(t *testing.T) {
	t.Run("browser", func(t *testing.T) {
		srv := fixture.New(t)
		env := newEnv(t, mustJSON(t, map[string]any{"startUrl": srv.URL("/big/0"), "maxPages": 120, "maxDepth": 3,
			"fields": map[string]string{"h": "h1"}, "concurrency": 4}))
		out, err := runTemplate(t, NewCrawlSite(testManager(t)), env)
		if err != nil {
			t.Fatal(err)
		}
		got := bigPages(t, srv, "/big/", resultOf(t, out), 3)
		hits := bigHits(srv, "/big/")
		if len(got) != 120 || len(hits) != 120 || len(env.items) != 120 {
			t.Fatalf("%d pages, %d fetched, %d checkpoints; want 120 each", len(got), len(hits), len(env.items))
		}
		for n, h := range hits {
			if h != 1 || !got[n] {
				t.Fatalf("page %d fetched %d times (in the result: %v)", n, h, got[n])
			}
		}
	})
	t.Run("http", func(t *testing.T) {
		if testing.Short() {
			t.Skip("long by nature (about 2 600 pages fetched over HTTP); the full suite runs it")
		}
		srv := fixture.New(t)
		for _, c := range []struct{ maxPages, maxDepth, want int }{
			{500, 3, 500},                      // maxPages binds inside depth 3
			{1000, 2, fixture.BigSiteCount(2)}, // maxDepth binds: the 73 pages of depth <= 2
			{2000, 10, fixture.BigSitePages},   // the whole site
		} {
			env := newEnv(t, mustJSON(t, map[string]any{"startUrl": srv.URL("/big/0"), "maxPages": c.maxPages, "maxDepth": c.maxDepth,
				"fields": map[string]string{"h": "h1"}, "concurrency": 4, "render": "http"}))
			env.profile.MaxURLs = 2000
			before := bigHits(srv, "/big/")
			out, err := runTemplate(t, NewCrawlSite(nil), env)
			if err != nil {
				t.Fatal(err)
			}
			got := bigPages(t, srv, "/big/", resultOf(t, out), c.maxDepth)
			after := bigHits(srv, "/big/")
			fetched := 0
			for n, h := range after {
				if d := h - before[n]; d > 1 || (d == 1) != got[n] {
					t.Fatalf("maxPages %d maxDepth %d: page %d fetched %d times (in the result: %v)", c.maxPages, c.maxDepth, n, d, got[n])
				}
				fetched += h - before[n]
			}
			if len(got) != c.want || fetched != c.want || len(env.items) != c.want {
				t.Fatalf("maxPages %d maxDepth %d: %d pages, %d fetched, %d checkpoints; want %d each",
					c.maxPages, c.maxDepth, len(got), fetched, len(env.items), c.want)
			}
			last := env.progress[len(env.progress)-1]
			if last.DoneSteps != c.want || last.TotalSteps != c.want || last.Message != fmt.Sprintf("%d/%d pages", c.want, c.want) {
				t.Fatalf("final progress %+v", last)
			}
		}
	})
}

// runCrawlUntil runs a crawl and cancels it once n pages are checkpointed;
// it returns once Run did.
func runCrawlUntil(t *testing.T, tpl engine.Template, env *fakeEnv, n int) {
	t.Helper()
	ctx, cancel := fixture.Context(t)
	defer cancel()
	env.onCheckpoint = func(k int) {
		if k == n {
			cancel()
		}
	}
	if _, err := tpl.Run(ctx, env); err == nil {
		t.Fatalf("the crawl finished before %d checkpoints", n)
	}
	env.onCheckpoint = nil
}

// outOfOrder reports whether some checkpoint was written after one that
// comes later in breadth-first order (depth, then sequence number).
func outOfOrder(t *testing.T, items []engine.Item) bool {
	t.Helper()
	var prev crawlNode
	for k, it := range items {
		cp := &crawlCheckpoint{}
		if err := json.Unmarshal(it.Output, cp); err != nil || cp.Frontier == nil {
			t.Fatalf("checkpoint %s without a frontier record: %v %s", it.Key, err, it.Output)
		}
		n := crawlNode{cp.Depth, cp.Frontier.Seq}
		if k > 0 && n.before(prev) {
			return true
		}
		prev = n
	}
	return false
}

// TestCrawlSiteFrontierRestored: a crawl canceled after some pages —
// finished out of discovery order by four tabs over pages that answer at
// different speeds — is resumed from its checkpoints: the frontier is
// rebuilt exactly (the pages done, the pages queued with their depth), no
// finished page is fetched again, and the two attempts together crawl
// the pages a fresh crawl does.
func TestCrawlSiteFrontierRestored(t *testing.T) {
	if testing.Short() {
		t.Skip("long by nature (three crawls of a site whose pages answer after 4-16 ms); the full suite runs it")
	}
	const prefix = "/big/slow/4/"
	srv := fixture.New(t)
	inputs := mustJSON(t, map[string]any{"startUrl": srv.URL(prefix + "0"), "maxPages": 1000, "maxDepth": 3,
		"fields": map[string]string{"h": "h1"}, "concurrency": 4, "render": "http"})
	want := fixture.BigSiteCount(3)

	fresh := newEnv(t, inputs)
	out, err := runTemplate(t, NewCrawlSite(nil), fresh)
	if err != nil {
		t.Fatal(err)
	}
	freshPages := bigPages(t, srv, prefix, resultOf(t, out), 3)
	if len(freshPages) != want {
		t.Fatalf("fresh crawl: %d pages, want %d", len(freshPages), want)
	}

	srv = fixture.New(t)
	inputs = mustJSON(t, map[string]any{"startUrl": srv.URL(prefix + "0"), "maxPages": 1000, "maxDepth": 3,
		"fields": map[string]string{"h": "h1"}, "concurrency": 4, "render": "http"})
	first := newEnv(t, inputs)
	runCrawlUntil(t, NewCrawlSite(nil), first, 60)
	if !outOfOrder(t, first.items) {
		t.Fatal("the first attempt checkpointed its pages in breadth-first order: the test does not cover pages finished out of order")
	}
	prior := map[string]engine.Item{}
	for _, it := range first.items {
		prior[it.Key] = it
	}

	pool := &urlPool{env: &fakeEnv{done: prior}}
	front := newCrawlFrontier(pool, 1000, 3, func(string) bool { return true })
	front.rebuild(srv.URL(prefix+"0"), prior)
	gotDepth := map[string]int{}
	for i, u := range pool.urls {
		gotDepth[u] = front.depth(i)
		var n int
		if _, err := fmt.Sscanf(strings.TrimPrefix(u, srv.URL(prefix)), "%d", &n); err != nil || front.depth(i) != fixture.BigSiteDepth(n) {
			t.Fatalf("rebuilt frontier: %s at depth %d", u, front.depth(i))
		}
	}
	// The rebuilt frontier knows every stored page; the URLs it knows
	// and are not stored are queued.
	for _, it := range first.items {
		if _, ok := gotDepth[it.Key]; !ok {
			t.Fatalf("rebuilt frontier does not know %s, finished before", it.Key)
		}
	}
	if pool.done != len(first.items) || front.queued() != len(gotDepth)-len(first.items) {
		t.Fatalf("rebuilt frontier: %d done, %d queued; want %d done, %d queued",
			pool.done, front.queued(), len(first.items), len(gotDepth)-len(first.items))
	}
	for _, i := range front.queue.idx {
		if _, done := prior[pool.urls[i]]; done {
			t.Fatalf("rebuilt frontier queues %s, done before", pool.urls[i])
		}
	}

	hitsAtCancel := bigHits(srv, prefix)
	second := newEnv(t, inputs)
	second.done = prior
	out, err = runTemplate(t, NewCrawlSite(nil), second)
	if err != nil {
		t.Fatal(err)
	}
	got := bigPages(t, srv, prefix, resultOf(t, out), 3)
	if !reflect.DeepEqual(got, freshPages) {
		t.Fatalf("resumed crawl: %d pages, a fresh crawl %d", len(got), len(freshPages))
	}
	hits := bigHits(srv, prefix)
	for _, it := range first.items {
		var n int
		_, _ = fmt.Sscanf(strings.TrimPrefix(it.Key, srv.URL(prefix)), "%d", &n)
		if hits[n] != 1 {
			t.Errorf("page %d, checkpointed by the first attempt, fetched %d times in all", n, hits[n])
		}
	}
	for _, it := range second.items {
		if _, done := prior[it.Key]; done {
			t.Errorf("%s checkpointed again by the resumed attempt", it.Key)
		}
	}
	if len(first.items)+len(second.items) != want {
		t.Fatalf("%d + %d checkpoints, want %d pages", len(first.items), len(second.items), want)
	}
	fetchedAgain := 0
	for n, h := range hits {
		fetchedAgain += h - hitsAtCancel[n]
	}
	if fetchedAgain != len(second.items) {
		t.Fatalf("the resumed attempt fetched %d pages and checkpointed %d", fetchedAgain, len(second.items))
	}
	t.Logf("first attempt: %d pages; resumed: %d", len(first.items), len(second.items))
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
	before := crawlHits(srv)
	out, err := runTemplate(t, NewCrawlSite(m), second)
	if err != nil {
		t.Fatal(err)
	}
	if got := crawledPaths(t, srv, resultOf(t, out)); !reflect.DeepEqual(got, expectedCrawl(13, 10, -1)) {
		t.Fatalf("resumed crawl %v", got)
	}
	if fetched := crawlHits(srv) - before; fetched != 7 || len(second.items) != 7 {
		t.Fatalf("resume fetched %d pages, checkpointed %d; want 7", fetched, len(second.items))
	}
}
