package templates

import (
	"container/heap"
	"context"
	"encoding/json"
	"sort"
	"sync"

	"github.com/browsertask/browsertask/engine"
	"github.com/browsertask/browsertask/internal/extract/page"
)

// crawl_site's frontier: every URL the crawl knows — done, being visited or
// queued — at most maxPages of them, deduplicated by the normalised URL
// (normalizeLink). A free worker takes the queued URL that comes first in
// breadth-first order (depth, then discovery sequence) as soon as its tab
// is free; there is no barrier between levels. A page's links join the
// frontier when the page is finished, numbered in the order they are
// found.
//
// The frontier lives in the run's checkpoints, so a resumed attempt needs
// no table of its own: each page's checkpoint carries its depth (in the
// page output) and a crawlRecord — its sequence number and the links it
// added, numbered from FirstSeq. Links are queued only once the
// checkpoint that adds them is stored, so every checkpoint is reachable
// from the start URL through stored checkpoints, whatever order the pages
// finished in; rebuild replays the records from the start URL and gets
// back exactly the URLs known, their depths and sequence numbers, which
// are done and which are still to visit.
//
// Two depths at most are in flight at once: a URL of depth d is taken only
// while no page of depth below d-1 is unfinished. A page of depth d may
// finish before one of depth d-1 and add a link at d+1 that the other
// would have found at d: a link found again at a lower depth before it is
// taken has its depth lowered (and the finding page's record says so, in
// Lowered), and once a URL of depth d is taken, no page that could find
// it at a lower depth is left. So every page is visited at its
// breadth-first depth, and maxDepth means what it says; when maxPages
// binds, which pages of the last depth make the cut depends on the order
// pages finish (with concurrency 1 it is exactly breadth-first).

// crawlRecord is what a page's checkpoint holds for the frontier.
type crawlRecord struct {
	// Seq is the page's discovery sequence number (the start URL is 0).
	Seq int `json:"seq"`
	// Added are the links the page added to the frontier, at its depth
	// + 1, numbered FirstSeq, FirstSeq+1, … in this order.
	Added    []string `json:"added"`
	FirstSeq int      `json:"firstSeq"`
	// Lowered are links the frontier knew at a greater depth, not taken
	// yet, that the page found at its depth + 1.
	Lowered []string `json:"lowered,omitempty"`
}

// crawlCheckpoint is a page's checkpointed output: the page as pages.json
// shows it plus its frontier record (absent in checkpoints written before
// the frontier had one: rebuild then takes the page's links).
type crawlCheckpoint struct {
	crawlPageOut
	Frontier *crawlRecord `json:"frontier,omitempty"`
}

// crawlNode is a known URL's place in the breadth-first order.
type crawlNode struct {
	depth, seq int
}

// before reports whether n comes before o: lower depth first, then the
// one found first.
func (n crawlNode) before(o crawlNode) bool {
	if n.depth != o.depth {
		return n.depth < o.depth
	}
	return n.seq < o.seq
}

// crawlFrontier is the frontier of one attempt. Pool indexes name its
// URLs: the frontier is the only one adding URLs to pool, so its i-th node
// is the pool's i-th URL.
type crawlFrontier struct {
	pool     *urlPool
	maxPages int
	maxDepth int
	// follow reports whether a normalised link may be visited
	// (crawlFilter.follow).
	follow func(link string) bool

	mu    sync.Mutex
	known map[string]int // normalised URL → pool index
	nodes []crawlNode    // by pool index
	queue crawlQueue     // pool indexes to visit, breadth-first first
	// taken marks the pool indexes next handed out (visited or being
	// visited): their depth no longer changes.
	taken    map[int]bool
	inflight int // taken by next, not yet stored
	// inflightAt counts the pages in flight by depth.
	inflightAt map[int]int
	nextSeq    int
	// wake is closed (and replaced) when the queue or inflight changes.
	wake chan struct{}
}

func newCrawlFrontier(pool *urlPool, maxPages, maxDepth int, follow func(string) bool) *crawlFrontier {
	f := &crawlFrontier{pool: pool, maxPages: maxPages, maxDepth: maxDepth, follow: follow,
		known: map[string]int{}, taken: map[int]bool{}, inflightAt: map[int]int{}, wake: make(chan struct{})}
	f.queue.nodes = &f.nodes
	return f
}

// admitLocked adds url as a known node and returns its pool index.
func (f *crawlFrontier) admitLocked(url string, n crawlNode) int {
	i := len(f.nodes)
	f.known[url] = i
	f.nodes = append(f.nodes, n)
	f.pool.add(url)
	return i
}

// rebuild makes the frontier of an attempt from the start URL and the
// checkpoints of earlier attempts (prior, by URL): the pages they finished
// are restored into the pool, not visited again; the links they added are
// known with their depth and sequence number, and queued unless finished.
func (f *crawlFrontier) rebuild(start string, prior map[string]engine.Item) {
	f.mu.Lock()
	defer f.mu.Unlock()
	cps := make(map[string]*crawlCheckpoint, len(prior))
	f.nextSeq = 1
	for url, it := range prior {
		cp := &crawlCheckpoint{}
		if json.Unmarshal(it.Output, cp) != nil {
			cp = &crawlCheckpoint{}
		}
		cps[url] = cp
		if r := cp.Frontier; r != nil {
			f.nextSeq = max(f.nextSeq, r.Seq+1, r.FirstSeq+len(r.Added))
		}
	}
	// Breadth first from the start URL over the stored records: every
	// page finished is reached through the checkpoint that added it. A
	// finished page keeps the depth it was visited at; a URL still to
	// visit gets the lowest depth a finished page found it at (Lowered
	// may name it before the record that adds it is replayed).
	lowest := map[string]int{}
	var queued []int
	work := []int{f.admitLocked(start, crawlNode{0, 0})}
	for len(work) > 0 {
		i := work[0]
		work = work[1:]
		url := f.pool.urls[i]
		it, done := prior[url]
		if !done {
			queued = append(queued, i)
			continue
		}
		f.pool.restored(i, it)
		f.taken[i] = true
		cp := cps[url]
		if cp.Frontier != nil && cp.Depth < f.nodes[i].depth {
			f.nodes[i].depth = cp.Depth
		}
		n := f.nodes[i]
		if r := cp.Frontier; r != nil {
			for j, l := range r.Added {
				if _, dup := f.known[l]; !dup && len(f.nodes) < f.maxPages {
					work = append(work, f.admitLocked(l, crawlNode{n.depth + 1, r.FirstSeq + j}))
				}
			}
			for _, l := range r.Lowered {
				if d, ok := lowest[l]; !ok || n.depth+1 < d {
					lowest[l] = n.depth + 1
				}
			}
			continue
		}
		// A checkpoint without a record: its links, found again.
		var found []string
		if n.depth < f.maxDepth {
			found = followed(linkTargets(cp.Links), f.follow)
		}
		added, _ := f.addLocked(found, n.depth+1)
		work = append(work, added...)
	}
	for _, i := range queued {
		if d, ok := lowest[f.pool.urls[i]]; ok && d < f.nodes[i].depth {
			f.nodes[i].depth = d
		}
		heap.Push(&f.queue, i)
	}
}

// addLocked admits the URLs of found (normalised, followed) that are not
// known yet at depth d, in order, within maxPages, numbering them from
// nextSeq. It returns their pool indexes and their first sequence number.
func (f *crawlFrontier) addLocked(found []string, d int) ([]int, int) {
	first := f.nextSeq
	var added []int
	for _, u := range found {
		if len(f.nodes) >= f.maxPages {
			break
		}
		if _, dup := f.known[u]; dup {
			continue
		}
		added = append(added, f.admitLocked(u, crawlNode{d, f.nextSeq}))
		f.nextSeq++
	}
	return added, first
}

// unknown returns the URLs of urls the frontier does not know (none once
// it is full) or knows at a depth greater than d and has not handed out.
func (f *crawlFrontier) unknown(urls []string, d int) []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	full := len(f.nodes) >= f.maxPages
	out := urls[:0:0]
	for _, u := range urls {
		i, dup := f.known[u]
		if (!dup && !full) || (dup && !f.taken[i] && f.nodes[i].depth > d) {
			out = append(out, u)
		}
	}
	return out
}

// lowerLocked gives the URLs of found the frontier knows at a depth
// greater than d, not handed out yet, depth d, and returns them.
func (f *crawlFrontier) lowerLocked(found []string, d int) []string {
	var lowered []string
	for _, u := range found {
		if i, dup := f.known[u]; dup && !f.taken[i] && f.nodes[i].depth > d {
			f.nodes[i].depth = d
			lowered = append(lowered, u)
		}
	}
	if len(lowered) > 0 {
		heap.Init(&f.queue)
	}
	return lowered
}

// linkTargets returns a page's links normalised (normalizeLink), each
// once, in page order, without the ones that are not http(s).
func linkTargets(links []page.Link) []string {
	seen := make(map[string]bool, len(links))
	out := make([]string, 0, len(links))
	for _, l := range links {
		if n := normalizeLink(l.Href); n != "" && !seen[n] {
			seen[n] = true
			out = append(out, n)
		}
	}
	return out
}

// followed returns the URLs follow accepts, in order.
func followed(urls []string, follow func(string) bool) []string {
	out := urls[:0:0]
	for _, u := range urls {
		if follow(u) {
			out = append(out, u)
		}
	}
	return out
}

// next hands a worker the queued URL that comes first (depth, then
// sequence), waiting while the queue is empty and pages in flight may
// still add links. It reports false once the crawl is done or ctx ended.
func (f *crawlFrontier) next(ctx context.Context) (int, bool) {
	for {
		f.mu.Lock()
		if f.queue.Len() > 0 && f.mayTakeLocked(f.nodes[f.queue.idx[0]].depth) {
			i := heap.Pop(&f.queue).(int)
			f.taken[i] = true
			f.inflight++
			f.inflightAt[f.nodes[i].depth]++
			f.mu.Unlock()
			return i, true
		}
		if f.queue.Len() == 0 && f.inflight == 0 {
			f.mu.Unlock()
			return 0, false
		}
		wake := f.wake
		f.mu.Unlock()
		select {
		case <-wake:
		case <-ctx.Done():
			return 0, false
		}
	}
}

// mayTakeLocked reports whether a URL of depth d may be taken now: no page
// of depth below d-1 is in flight (one could still find it at a lower
// depth).
func (f *crawlFrontier) mayTakeLocked(d int) bool {
	for depth, n := range f.inflightAt {
		if n > 0 && depth < d-1 {
			return false
		}
	}
	return true
}

// finish records what page i (taken by next) adds to the frontier: its
// new links are known from now on (no other page adds them again) and
// written into its checkpoint, cp.Frontier; the returned function queues
// them, once that checkpoint is stored. The links are filtered outside
// the lock: under trust restricted the URL policy resolves host names.
func (f *crawlFrontier) finish(i int, cp *crawlCheckpoint) func() {
	n := f.node(i)
	var found []string
	if n.depth < f.maxDepth {
		found = followed(f.unknown(linkTargets(cp.Links), n.depth+1), f.follow)
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	lowered := f.lowerLocked(found, n.depth+1)
	added, first := f.addLocked(found, n.depth+1)
	rec := &crawlRecord{Seq: n.seq, FirstSeq: first, Added: make([]string, len(added)), Lowered: lowered}
	for j, a := range added {
		rec.Added[j] = f.pool.urls[a]
	}
	cp.Depth, cp.Frontier = n.depth, rec
	return func() {
		f.mu.Lock()
		defer f.mu.Unlock()
		for _, a := range added {
			heap.Push(&f.queue, a)
		}
		f.inflight--
		f.inflightAt[n.depth]--
		close(f.wake)
		f.wake = make(chan struct{})
	}
}

// node returns the place of the i-th URL.
func (f *crawlFrontier) node(i int) crawlNode {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.nodes[i]
}

// depth returns the depth of the i-th URL.
func (f *crawlFrontier) depth(i int) int { return f.node(i).depth }

// queued returns how many URLs wait to be visited.
func (f *crawlFrontier) queued() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.queue.Len()
}

// order returns every pool index in breadth-first order.
func (f *crawlFrontier) order() []int {
	f.mu.Lock()
	defer f.mu.Unlock()
	out := make([]int, len(f.nodes))
	for i := range out {
		out[i] = i
	}
	sort.Slice(out, func(a, b int) bool { return f.nodes[out[a]].before(f.nodes[out[b]]) })
	return out
}

// crawlQueue is a heap of pool indexes, breadth-first order first.
type crawlQueue struct {
	idx   []int
	nodes *[]crawlNode
}

func (q *crawlQueue) Len() int { return len(q.idx) }
func (q *crawlQueue) Less(a, b int) bool {
	return (*q.nodes)[q.idx[a]].before((*q.nodes)[q.idx[b]])
}
func (q *crawlQueue) Swap(a, b int) { q.idx[a], q.idx[b] = q.idx[b], q.idx[a] }
func (q *crawlQueue) Push(x any)    { q.idx = append(q.idx, x.(int)) }
func (q *crawlQueue) Pop() any {
	i := q.idx[len(q.idx)-1]
	q.idx = q.idx[:len(q.idx)-1]
	return i
}
