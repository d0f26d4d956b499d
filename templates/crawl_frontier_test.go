package templates

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/browsertask/browsertask/engine"
	"github.com/browsertask/browsertask/internal/extract/page"
)

// frontierItem is the checkpoint of a finished page at depth with its
// frontier record.
func frontierItem(t *testing.T, url string, depth int, rec crawlRecord) engine.Item {
	t.Helper()
	cp := crawlCheckpoint{crawlPageOut: crawlPageOut{pageOut: pageOut{URL: url, Fields: map[string]any{}}, Depth: depth}, Frontier: &rec}
	b, err := json.Marshal(cp)
	if err != nil {
		t.Fatal(err)
	}
	return engine.Item{Key: url, Status: "succeeded", Output: b}
}

// TestCrawlFrontierLowersDepths: a link found again at a lower depth
// before it is taken is lowered, and the record that lowered it brings
// the lower depth back on a rebuild even when the record adding the link
// comes later in the replay; a URL two depths below a page in flight is
// not handed out until that page is done.
func TestCrawlFrontierLowersDepths(t *testing.T) {
	const s, a, b, c, x, y = "http://h/s", "http://h/a", "http://h/b", "http://h/c", "http://h/x", "http://h/y"
	// s (0) adds a, b (1); a adds c (2); c finished before b and added y
	// (3); b then found y again (lowered to 2) and added x (2).
	prior := map[string]engine.Item{
		s: frontierItem(t, s, 0, crawlRecord{Seq: 0, Added: []string{a, b}, FirstSeq: 1}),
		a: frontierItem(t, a, 1, crawlRecord{Seq: 1, Added: []string{c}, FirstSeq: 3}),
		b: frontierItem(t, b, 1, crawlRecord{Seq: 2, Added: []string{x}, FirstSeq: 5, Lowered: []string{y}}),
		c: frontierItem(t, c, 2, crawlRecord{Seq: 3, Added: []string{y}, FirstSeq: 4}),
	}
	env := newEnv(t, `{}`)
	env.done = prior
	pool := &urlPool{env: env}
	f := newCrawlFrontier(pool, 100, 10, func(string) bool { return true })
	f.rebuild(s, prior)
	depths := map[string]int{}
	for i, u := range pool.urls {
		depths[u] = f.depth(i)
	}
	want := map[string]int{s: 0, a: 1, b: 1, c: 2, x: 2, y: 2}
	for u, d := range want {
		if depths[u] != d {
			t.Errorf("depth of %s = %d, want %d (all: %v)", u, depths[u], d, depths)
		}
	}
	if f.queued() != 2 {
		t.Fatalf("%d queued, want x and y", f.queued())
	}

	// Live: a page of depth 1 in flight; its sibling finishes first and
	// adds a link at depth 3 through a page of depth 2… here simply: a
	// URL of depth 3 is not handed out while a page of depth 1 is in
	// flight, and a link found again at depth 2 is lowered.
	env2 := newEnv(t, `{}`)
	pool2 := &urlPool{env: env2}
	g := newCrawlFrontier(pool2, 100, 10, func(string) bool { return true })
	g.rebuild(s, nil)
	ctx := context.Background()
	i0, _ := g.next(ctx) // s
	push := g.finish(i0, &crawlCheckpoint{crawlPageOut: crawlPageOut{pageOut: pageOut{URL: s, Links: []page.Link{{Href: a}, {Href: b}}}}})
	push()
	ia, _ := g.next(ctx) // a (depth 1)
	ib, _ := g.next(ctx) // b (depth 1)
	push = g.finish(ia, &crawlCheckpoint{crawlPageOut: crawlPageOut{pageOut: pageOut{URL: a, Links: []page.Link{{Href: c}}}}})
	push()
	ic, _ := g.next(ctx) // c (depth 2): allowed while b (depth 1) is in flight
	if pool2.urls[ic] != c {
		t.Fatalf("took %s, want %s", pool2.urls[ic], c)
	}
	push = g.finish(ic, &crawlCheckpoint{crawlPageOut: crawlPageOut{pageOut: pageOut{URL: c, Links: []page.Link{{Href: y}}}}})
	push()
	// y is at depth 3 and b (depth 1) is in flight: not handed out.
	cctx, cancel := context.WithCancel(ctx)
	cancel()
	if i, ok := g.next(cctx); ok {
		t.Fatalf("handed out %s at depth %d while a page of depth 1 was in flight", pool2.urls[i], g.depth(i))
	}
	cpB := &crawlCheckpoint{crawlPageOut: crawlPageOut{pageOut: pageOut{URL: b, Links: []page.Link{{Href: y}, {Href: x}}}}}
	push = g.finish(ib, cpB)
	push()
	if got := cpB.Frontier.Lowered; len(got) != 1 || got[0] != y {
		t.Fatalf("b's record lowered %v, want [%s]", got, y)
	}
	iy, ok := g.next(ctx)
	if !ok || pool2.urls[iy] != y || g.depth(iy) != 2 {
		t.Fatalf("next: %v %s at depth %d, want %s at depth 2", ok, pool2.urls[iy], g.depth(iy), y)
	}
}
