package templates

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"reflect"
	"testing"

	"github.com/browsertask/browsertask/engine"
	"github.com/browsertask/browsertask/internal/extract/page"
)

// frontierLinks is a page checkpoint with the given links.
func frontierLinks(url string, links ...string) *crawlCheckpoint {
	cp := &crawlCheckpoint{crawlPageOut: crawlPageOut{pageOut: pageOut{URL: url, Fields: map[string]any{}}}}
	for _, l := range links {
		cp.Links = append(cp.Links, page.Link{Href: l})
	}
	return cp
}

// TestCrawlFrontierCutWaitsForLowerRanks: with maxPages binding, the page
// ranked second finishes first; its links wait (nothing is handed out)
// until the page ranked first is applied, and the URLs kept are the first
// maxPages in rank order: the first page's links, not the second's.
func TestCrawlFrontierCutWaitsForLowerRanks(t *testing.T) {
	const s, a, b = "http://h/s", "http://h/a", "http://h/b"
	pool := &urlPool{env: newEnv(t, `{}`)}
	f := newCrawlFrontier(pool, 5, 10, func(string) bool { return true })
	f.rebuild(s, nil)
	ctx := context.Background()
	stopped, cancel := context.WithCancel(ctx)
	cancel()
	is, _ := f.next(ctx)
	f.finish(is, frontierLinks(s, a, b))()
	ia, _ := f.next(ctx)
	ib, _ := f.next(ctx)
	if pool.urls[ia] != a || pool.urls[ib] != b {
		t.Fatalf("took %s, %s; want %s, %s", pool.urls[ia], pool.urls[ib], a, b)
	}
	cpB := frontierLinks(b, "http://h/b1", "http://h/b2", "http://h/b3")
	f.finish(ib, cpB)()
	if got := cpB.Frontier; got.Seq != 2 || !reflect.DeepEqual(got.Found, []string{"http://h/b1", "http://h/b2"}) {
		t.Fatalf("b's record %+v, want seq 2 and the two links within the places left", got)
	}
	if i, ok := f.next(stopped); ok {
		t.Fatalf("handed out %s (rank %d) before a, ranked before b, was done", pool.urls[i], i)
	}
	f.finish(ia, frontierLinks(a, "http://h/a1", b, "http://h/a2", "http://h/a3"))()
	var got []string
	for {
		i, ok := f.next(stopped)
		if !ok {
			break
		}
		got = append(got, pool.urls[i])
		f.finish(i, frontierLinks(pool.urls[i]))()
	}
	if want := []string{"http://h/a1", "http://h/a2"}; !reflect.DeepEqual(got, want) {
		t.Fatalf("then handed out %v, want %v", got, want)
	}
	if want := []string{s, a, b, "http://h/a1", "http://h/a2"}; !reflect.DeepEqual(pool.urls, want) {
		t.Fatalf("frontier %v, want %v", pool.urls, want)
	}
}

// TestCrawlFrontierSameSetInAnyOrder: sites of 40 pages with many links
// each, crawled with maxPages binding, one to six pages in flight, pages
// finishing in 300 pseudo-random orders per site (seeded: the test is
// deterministic), crashed and resumed in some: every crawl keeps exactly
// the first maxPages URLs of a one-page-at-a-time breadth-first crawl, at
// their depths.
func TestCrawlFrontierSameSetInAnyOrder(t *testing.T) {
	for site := range 4 {
		rng := rand.New(rand.NewPCG(uint64(site), 28))
		graph := make([]byte, 0, 600)
		for range 40 {
			for range 3 + rng.IntN(12) {
				graph = append(graph, byte(rng.IntN(0xf0)))
			}
			graph = append(graph, 0xf0)
		}
		s := newCrawlSim(40, graph)
		for run := range 300 {
			conc, maxPages, maxDepth := 1+run%6, 3+rng.IntN(30), 1+rng.IntN(4)
			sched := make([]byte, 64)
			for k := range sched {
				sched[k] = byte(rng.IntN(256))
			}
			crash := -1
			if run%3 == 0 {
				crash = rng.IntN(3 * maxPages)
			}
			stored, _ := s.attempt(t, nil, maxPages, maxDepth, conc, sched, crash)
			final, _ := s.attempt(t, stored, maxPages, maxDepth, conc, sched[1:], -1)
			got := visitedDepths(t, final)
			if want := s.ranked(maxDepth, maxPages); !reflect.DeepEqual(got, want) {
				t.Fatalf("site %d run %d (tabs %d, maxPages %d, maxDepth %d, crash %d): kept %v, want %v",
					site, run, conc, maxPages, maxDepth, crash, got, want)
			}
		}
	}
}

// visitedDepths is each checkpointed page's depth, by URL.
func visitedDepths(t *testing.T, items map[string]engine.Item) map[string]int {
	t.Helper()
	out := map[string]int{}
	for u, it := range items {
		var cp crawlCheckpoint
		if err := json.Unmarshal(it.Output, &cp); err != nil {
			t.Fatal(err)
		}
		out[u] = cp.Depth
	}
	return out
}

// TestCrawlFrontierRebuildsPending: an attempt crashed with a page
// finished out of rank order (its links still pending) resumes: the
// rebuilt frontier queues the unfinished page of lower rank, keeps the
// finished one done, and admits its links only after the other's.
func TestCrawlFrontierRebuildsPending(t *testing.T) {
	const s, a, b = "http://h/s", "http://h/a", "http://h/b"
	item := func(url string, depth, seq int, found ...string) engine.Item {
		cp := crawlCheckpoint{crawlPageOut: crawlPageOut{pageOut: pageOut{URL: url, Fields: map[string]any{}}, Depth: depth},
			Frontier: &crawlRecord{Seq: seq, Found: found}}
		raw, err := json.Marshal(cp)
		if err != nil {
			t.Fatal(err)
		}
		return engine.Item{Key: url, Status: "succeeded", Output: raw}
	}
	prior := map[string]engine.Item{
		s: item(s, 0, 0, a, b),
		b: item(b, 1, 2, "http://h/b1", "http://h/b2"),
	}
	pool := &urlPool{env: &fakeEnv{done: prior}}
	f := newCrawlFrontier(pool, 4, 10, func(string) bool { return true })
	f.rebuild(s, prior)
	if pool.done != 2 || f.queued() != 1 || len(pool.urls) != 3 {
		t.Fatalf("rebuilt: %d done, %d queued, urls %v; want 2 done, a queued", pool.done, f.queued(), pool.urls)
	}
	stopped, cancel := context.WithCancel(context.Background())
	cancel()
	ia, ok := f.next(stopped)
	if !ok || pool.urls[ia] != a {
		t.Fatalf("next: %v %v, want %s", ok, pool.urls, a)
	}
	f.finish(ia, frontierLinks(a, "http://h/a1"))()
	want := []string{s, a, b, "http://h/a1"}
	if !reflect.DeepEqual(pool.urls, want) {
		t.Fatalf("frontier %v, want %v", pool.urls, want)
	}
	for i, d := range []int{0, 1, 1, 2} {
		if f.depth(i) != d {
			t.Fatalf("%s at depth %d, want %d", pool.urls[i], f.depth(i), d)
		}
	}
}

// ranked returns the pages a one-page-at-a-time breadth-first crawl
// keeps with maxPages and maxDepth (links of pages at maxDepth are not
// followed), with their depths, by canonical URL.
func (s *crawlSim) ranked(maxDepth, maxPages int) map[string]int {
	depth := map[int]int{0: 0}
	work := []int{0}
	for len(work) > 0 {
		k := work[0]
		work = work[1:]
		if depth[k] >= maxDepth {
			continue
		}
		for _, to := range s.links[k] {
			if _, ok := depth[to]; !ok && len(depth) < maxPages {
				depth[to] = depth[k] + 1
				work = append(work, to)
			}
		}
	}
	out := map[string]int{}
	for k, d := range depth {
		out[fmt.Sprint(s.url(k))] = d
	}
	return out
}
