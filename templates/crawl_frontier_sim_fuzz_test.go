package templates

import (
	"context"
	"encoding/json"
	"fmt"
	"reflect"
	"testing"

	"github.com/browsertask/browsertask/engine"
	"github.com/browsertask/browsertask/internal/extract/page"
)

// crawlSim is a site for FuzzCrawlFrontier: pages 0..n-1, page 0 the
// start, each linking to the pages its graph bytes name (in spellings
// that normalise alike, and some links a crawl ignores).
type crawlSim struct {
	n     int
	links [][]int
	spell [][]byte
}

// newCrawlSim reads a site of n pages from graph: each byte is one link of
// the current page (value mod n) until a byte ≥ 0xf0 moves to the next page.
func newCrawlSim(n int, graph []byte) *crawlSim {
	s := &crawlSim{n: n, links: make([][]int, n), spell: make([][]byte, n)}
	page := 0
	for _, b := range graph {
		if b >= 0xf0 {
			if page++; page == n {
				break
			}
			continue
		}
		s.links[page] = append(s.links[page], int(b)%n)
		s.spell[page] = append(s.spell[page], b/16)
	}
	return s
}

// url is page k's canonical (normalised) URL.
func (s *crawlSim) url(k int) string { return fmt.Sprintf("http://h.test/p%d", k) }

// page returns page k's links, each written one of several ways.
func (s *crawlSim) page(k int) []page.Link {
	var out []page.Link
	for j, to := range s.links[k] {
		href := s.url(to)
		switch s.spell[k][j] % 5 {
		case 1:
			href = fmt.Sprintf("HTTP://H.TEST:80/p%d#frag%d", to, j)
		case 2:
			href = " " + href + "#"
		case 3:
			out = append(out, page.Link{Href: "mailto:x@h.test"})
		case 4:
			out = append(out, page.Link{Href: "javascript:void(0)"})
		}
		out = append(out, page.Link{Href: href})
	}
	return out
}

// attempt runs one attempt of a crawl over the site with conc pages in
// flight, the order of takes and finishes chosen by sched, after the
// checkpoints prior of earlier attempts. It stops after crashAt steps
// (crashAt < 0: never), losing the pages in flight. It returns every
// checkpoint stored (prior included) and the depth each page of this
// attempt was visited at.
func (s *crawlSim) attempt(t *testing.T, prior map[string]engine.Item, maxPages, maxDepth, conc int, sched []byte, crashAt int) (map[string]engine.Item, map[string]int) {
	stored := map[string]engine.Item{}
	for k, v := range prior {
		stored[k] = v
	}
	pool := &urlPool{}
	f := newCrawlFrontier(pool, maxPages, maxDepth, func(string) bool { return true })
	f.rebuild(s.url(0), prior)
	done, cancel := context.WithCancel(context.Background())
	cancel() // next must not wait: the simulation is one goroutine
	visited := map[string]int{}
	var inflight []int
	for step := 0; step < 100*s.n+100; step++ {
		if step == crashAt {
			return stored, visited
		}
		b := byte(0)
		if len(sched) > 0 {
			b = sched[step%len(sched)]
		}
		if len(inflight) < conc && (b%2 == 0 || len(inflight) == 0) {
			if i, ok := f.next(done); ok {
				u := pool.urls[i]
				if _, again := visited[u]; again {
					t.Fatalf("%s handed out twice in one attempt", u)
				}
				if _, old := prior[u]; old {
					t.Fatalf("%s handed out though an earlier attempt finished it", u)
				}
				visited[u] = -1
				inflight = append(inflight, i)
				continue
			}
			if len(inflight) == 0 {
				return stored, visited // the crawl is done
			}
		}
		at := int(b/2) % len(inflight)
		i := inflight[at]
		inflight = append(inflight[:at], inflight[at+1:]...)
		u := pool.urls[i]
		var k int
		if _, err := fmt.Sscanf(u, "http://h.test/p%d", &k); err != nil {
			t.Fatalf("the frontier holds %q, not a page of the site", u)
		}
		cp := &crawlCheckpoint{crawlPageOut: crawlPageOut{pageOut: pageOut{URL: u, Fields: map[string]any{}, Links: s.page(k)}}}
		push := f.finish(i, cp)
		raw, err := json.Marshal(cp)
		if err != nil {
			t.Fatal(err)
		}
		stored[u] = engine.Item{Key: u, Status: "succeeded", Output: raw}
		visited[u] = cp.Depth
		push()
	}
	t.Fatalf("the crawl did not end in %d steps", 100*s.n+100)
	return nil, nil
}

// FuzzCrawlFrontier crawls any small site (links written in several
// spellings of one URL) with any concurrency, any order of page
// completions, and a crash at any point followed by a resumed attempt.
// Invariants (crawl_frontier.go's promises): no page is handed out twice
// in an attempt nor again after an earlier attempt finished it; the pages
// visited are exactly the first maxPages of a one-page-at-a-time
// breadth-first crawl within maxDepth (all of them when maxPages does not
// bind), each at its breadth-first depth.
func FuzzCrawlFrontier(f *testing.F) {
	f.Add([]byte{1, 2, 0xf0, 3, 0xf0, 3, 4, 0xf0, 5, 0xf0, 0xf0, 1}, []byte{0, 0, 1, 3, 0, 2}, uint8(6), uint8(2), uint8(3), uint8(100), uint8(7))
	f.Add([]byte{1, 2, 3, 0xf0, 4, 0xf0, 0xf0, 0x14, 0xf0, 0x25}, []byte{0, 0, 0, 1, 1, 3, 5}, uint8(6), uint8(3), uint8(10), uint8(100), uint8(255))
	f.Add([]byte{1, 0x12, 0x23, 0x34, 0xf0, 0x41, 0xf0, 0x52, 0xf0, 0x63}, []byte{2, 4, 1}, uint8(8), uint8(4), uint8(2), uint8(4), uint8(5))
	// TestCrawlFrontierLowersDepths's site, crashed after b lowered y and
	// before y was taken: the rebuild must bring y back at depth 2.
	f.Add([]byte{1, 2, 0xf0, 3, 0xf0, 5, 4, 0xf0, 5, 0xf0, 0xf0}, []byte{0, 1, 0, 0, 1, 0, 3, 0}, uint8(5), uint8(1), uint8(5), uint8(19), uint8(8))
	f.Fuzz(func(t *testing.T, graph, sched []byte, n, conc, maxDepth, maxPages, crashAt uint8) {
		s := newCrawlSim(int(n%16)+1, graph)
		c, md, mp := int(conc%5)+1, int(maxDepth%8), int(maxPages%20)+1
		crash := int(crashAt)
		if crashAt == 255 {
			crash = -1
		}
		stored, first := s.attempt(t, nil, mp, md, c, sched, crash)
		final, second := s.attempt(t, stored, mp, md, c, append([]byte{1}, sched...), -1)
		visited := visitedDepths(t, final)
		if want := s.ranked(md, mp); !reflect.DeepEqual(visited, want) {
			t.Fatalf("kept %v, want the first %d pages in rank order %v (first attempt %v, second %v)", visited, mp, want, first, second)
		}
	})
}
