package templates

import (
	"container/heap"
	"context"
	"encoding/json"
	"sort"
	"sync"

	"github.com/browsertask/browsertask/engine"
	"github.com/browsertask/browsertask/internal/extract/page"
	"github.com/browsertask/browsertask/internal/extract/sitemap"
)

// crawl_site's frontier: every URL the crawl knows — done, being visited or
// queued — at most maxPages of them, deduplicated by the normalised URL
// (normalizeLink).
//
// Rank. Every known URL has a rank, its sequence number: the start URL is
// 0, and the links a page adds are numbered after those of every page
// ranked before it, in the order they appear on the page. That is the
// order of a breadth-first crawl done one page at a time: by depth, then
// the rank of the page that found the URL first, then the link's place on
// that page. maxPages keeps the first maxPages URLs of that order, so the
// pages a crawl keeps are the same whatever the render mode, the number of
// tabs and the order in which pages finish.
//
// The cut waits for lower ranks (rather than fetching past it and dropping
// pages): a page's links are applied — admitted, numbered, counted
// against maxPages — only once every page ranked before it is finished
// and applied. A finished page whose turn has not come waits with the
// links it found (pending). A URL is admitted only when its rank is
// final, so every URL handed out is kept: no fetch is wasted, and a tab
// waits only when every admitted URL is taken and the page next in rank
// is still loading. Because pages are applied in rank order, a URL is
// admitted at its breadth-first depth (every page of a lower depth was
// applied before), so maxDepth means what it says and at most two depths
// are ever in flight. To bound the links waiting in memory, a URL ranked
// more than crawlWindow places after the first page not applied yet
// waits too.
//
// The frontier lives in the run's checkpoints, so a resumed attempt needs
// no table of its own: each page's checkpoint carries its depth (in the
// page output) and a crawlRecord — its rank and the links the frontier
// may admit from it (Found: new when the page finished, within the
// places left). A page's links are applied only once its checkpoint is
// stored, so rebuild, replaying the records from the start URL in rank
// order, admits exactly the URLs the earlier attempt admitted, with the
// same ranks and depths, and goes on from there.

// crawlWindow is how far past the first page not applied yet a URL may be
// handed out: the pages finished out of rank order that wait with their
// links are at most this many.
const crawlWindow = 256

// crawlRecord is what a page's checkpoint holds for the frontier.
type crawlRecord struct {
	// Seq is the page's rank (the start URL is 0).
	Seq int `json:"seq"`
	// Found are the links of the page the frontier may admit at its depth
	// + 1, normalised and followed, in page order: those it did not know
	// when the page finished, at most as many as places were left. They
	// are admitted, skipping those known by then, when the page's turn
	// comes.
	Found []string `json:"found"`
	// Added is Found in checkpoints written before the frontier ranked
	// its URLs (read as Found).
	Added []string `json:"added,omitempty"`
	// Seeds are the sitemap URLs the start page's record carries
	// (crawl_discovery.go), admitted at depth 0 before its links, as
	// Found is: new ones within the places left.
	Seeds []sitemap.Entry `json:"seeds,omitempty"`
	// Sitemaps is what reading the sitemaps found (the start page's
	// record only).
	Sitemaps *sitemap.Result `json:"sitemaps,omitempty"`
	// Skipped are the links (and seeds) robots.txt kept the crawl from,
	// new when the page finished; listed in the result once each.
	Skipped []crawlSkip `json:"skipped,omitempty"`
}

// links returns the record's Found (or, in an older checkpoint, Added).
func (r *crawlRecord) links() []string {
	if r.Found == nil {
		return r.Added
	}
	return r.Found
}

// crawlCheckpoint is a page's checkpointed output: the page as pages.json
// shows it plus its frontier record (absent in checkpoints written before
// the frontier had one: rebuild then takes the page's links).
type crawlCheckpoint struct {
	crawlPageOut
	Frontier *crawlRecord `json:"frontier,omitempty"`
}

// crawlNode is a known URL's place in the crawl: its depth and rank.
type crawlNode struct {
	depth, seq int
}

// before reports whether n comes before o: lower depth first, then the
// lower rank.
func (n crawlNode) before(o crawlNode) bool {
	if n.depth != o.depth {
		return n.depth < o.depth
	}
	return n.seq < o.seq
}

// crawlFrontier is the frontier of one attempt. Pool indexes name its
// URLs: the frontier is the only one adding URLs to pool and adds them in
// rank order, so its i-th node is the pool's i-th URL and has rank i.
type crawlFrontier struct {
	pool     *urlPool
	maxPages int
	maxDepth int
	// follow reports whether a normalised link may be visited
	// (crawlFilter.follow).
	follow func(link string) bool
	// robots, when set, reports whether robots.txt lets the crawl visit
	// a followed link, and if not why (robotsGate.allowed).
	robots func(link string) (bool, string)
	// noLinks follows no link (sitemap "only"): pages add nothing.
	noLinks bool
	// seeds, when set, are the sitemap URLs the start page's record
	// carries, and sitemaps what reading them found; seedsFor computes
	// them once, when the start page finishes in this attempt.
	seedsFor func() ([]sitemap.Entry, *sitemap.Result)

	mu    sync.Mutex
	known map[string]int // normalised URL → pool index
	nodes []crawlNode    // by pool index
	queue crawlQueue     // pool indexes to visit, lowest rank first
	// applied is how many nodes, in rank order, had their links applied;
	// pending holds the Found links of finished nodes ranked after them.
	applied  int
	pending  map[int]*crawlRecord
	inflight int // taken by next, not yet stored
	// skipped lists the URLs robots.txt kept the crawl from, in the
	// order their pages were applied; skippedSet holds them.
	skipped    []crawlSkip
	skippedSet map[string]bool
	// sitemaps is the start page's record of its sitemaps (nil without);
	// seeded holds the pool indexes of the URLs a sitemap named, with
	// their lastmod there.
	sitemaps *sitemap.Result
	seeded   map[int]string
	// wake is closed (and replaced) when the queue or inflight changes.
	wake chan struct{}
}

func newCrawlFrontier(pool *urlPool, maxPages, maxDepth int, follow func(string) bool) *crawlFrontier {
	f := &crawlFrontier{pool: pool, maxPages: maxPages, maxDepth: maxDepth, follow: follow,
		known: map[string]int{}, pending: map[int]*crawlRecord{}, skippedSet: map[string]bool{}, seeded: map[int]string{}, wake: make(chan struct{})}
	f.queue.nodes = &f.nodes
	return f
}

// admitLocked adds url as a known node and returns its pool index.
func (f *crawlFrontier) admitLocked(url string, depth int) int {
	i := len(f.nodes)
	f.known[url] = i
	f.nodes = append(f.nodes, crawlNode{depth, i})
	f.pool.add(url)
	return i
}

// applyLocked applies the pending links of the nodes whose turn has come,
// in rank order: each link not known yet is admitted at the node's depth
// + 1, while places are left, and queued.
func (f *crawlFrontier) applyLocked() {
	for {
		rec, ok := f.pending[f.applied]
		if !ok {
			return
		}
		delete(f.pending, f.applied)
		d := f.nodes[f.applied].depth + 1
		if rec.Sitemaps != nil {
			f.sitemaps = rec.Sitemaps
		}
		for _, e := range rec.Seeds {
			if len(f.nodes) >= f.maxPages {
				break
			}
			if _, dup := f.known[e.URL]; !dup {
				i := f.admitLocked(e.URL, d-1)
				f.seeded[i] = e.Lastmod
				heap.Push(&f.queue, i)
			}
		}
		for _, sk := range rec.Skipped {
			if _, dup := f.known[sk.URL]; !dup && !f.skippedSet[sk.URL] {
				f.skippedSet[sk.URL] = true
				f.skipped = append(f.skipped, sk)
			}
		}
		for _, u := range rec.links() {
			if len(f.nodes) >= f.maxPages {
				break
			}
			if _, dup := f.known[u]; !dup {
				heap.Push(&f.queue, f.admitLocked(u, d))
			}
		}
		f.applied++
	}
}

// rebuild makes the frontier of an attempt from the start URL and the
// checkpoints of earlier attempts (prior, by URL): replaying the records
// in rank order admits the URLs the earlier attempts admitted; the pages
// they finished are restored into the pool, not visited again, the others
// queued.
func (f *crawlFrontier) rebuild(start string, prior map[string]engine.Item) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.admitLocked(start, 0)
	var todo []int
	for i := 0; i < len(f.nodes); i++ {
		url := f.pool.urls[i]
		it, done := prior[url]
		if !done {
			todo = append(todo, i)
			continue
		}
		f.pool.restored(i, it)
		cp := &crawlCheckpoint{}
		if json.Unmarshal(it.Output, cp) != nil {
			cp = &crawlCheckpoint{}
		}
		rec := &crawlRecord{}
		switch {
		case cp.Frontier != nil:
			rec = cp.Frontier
			if f.nodes[i].depth >= f.maxDepth {
				rec.Found, rec.Added = []string{}, nil
			}
		case f.nodes[i].depth >= f.maxDepth || f.noLinks:
		default:
			// A checkpoint without a record: its links, found again.
			rec.Found = followed(linkTargets(cp.Links), f.follow, f.maxPages)
		}
		f.pending[i] = rec
		f.applyLocked()
	}
	// applyLocked queued every URL it admitted, finished or not.
	f.queue.idx = todo
	heap.Init(&f.queue)
}

// unknown returns the URLs of urls the frontier does not know, in order
// (none once it is full).
func (f *crawlFrontier) unknown(urls []string) []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	if len(f.nodes) >= f.maxPages {
		return nil
	}
	out := urls[:0:0]
	for _, u := range urls {
		if _, dup := f.known[u]; !dup {
			out = append(out, u)
		}
	}
	return out
}

// places returns how many more URLs the frontier may admit.
func (f *crawlFrontier) places() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.maxPages - len(f.nodes)
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

// followed returns the first max URLs of urls that follow accepts, in
// order.
func followed(urls []string, follow func(string) bool, max int) []string {
	out := urls[:0:0]
	for _, u := range urls {
		if len(out) >= max {
			break
		}
		if follow(u) {
			out = append(out, u)
		}
	}
	return out
}

// next hands a worker the queued URL of lowest rank, waiting while the
// queue is empty (or its first URL is past the window) and pages in
// flight may still add links. It reports false once the crawl is done or
// ctx ended.
func (f *crawlFrontier) next(ctx context.Context) (int, bool) {
	for {
		f.mu.Lock()
		if f.queue.Len() > 0 && f.queue.idx[0] < f.applied+crawlWindow {
			i := heap.Pop(&f.queue).(int)
			f.inflight++
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

// finish records what page i (taken by next) may add to the frontier: the
// followed links of cp.Links it does not know yet, within the places left
// (places only shrink and known URLs stay known, so none the page's turn
// would admit is left out), written into its checkpoint, cp.Frontier. The
// returned function, called once that checkpoint is stored, hands them to
// the frontier, which applies them in rank order. The links are filtered
// outside the lock: under trust restricted the URL policy resolves host
// names.
func (f *crawlFrontier) finish(i int, cp *crawlCheckpoint) func() {
	n := f.node(i)
	rec := &crawlRecord{Seq: n.seq, Found: []string{}}
	if i == 0 && f.seedsFor != nil {
		seeds, res := f.seedsFor()
		rec.Sitemaps = res
		var urls []string
		byURL := map[string]sitemap.Entry{}
		for _, e := range seeds {
			urls = append(urls, e.URL)
			byURL[e.URL] = e
		}
		var kept []string
		kept, rec.Skipped = f.split(f.unknown(urls), f.places())
		for _, u := range kept {
			rec.Seeds = append(rec.Seeds, byURL[u])
		}
	}
	if n.depth < f.maxDepth && !f.noLinks {
		var skipped []crawlSkip
		rec.Found, skipped = f.split(f.unknown(linkTargets(cp.Links)), f.places()-len(rec.Seeds))
		rec.Skipped = append(rec.Skipped, skipped...)
	}
	cp.Depth, cp.Frontier = n.depth, rec
	return func() {
		f.mu.Lock()
		defer f.mu.Unlock()
		f.pending[i] = rec
		f.applyLocked()
		f.inflight--
		close(f.wake)
		f.wake = make(chan struct{})
	}
}

// split returns the first max URLs of urls that follow accepts and
// robots.txt allows, in order, and those robots.txt refused (listed,
// never visited; they take no place).
func (f *crawlFrontier) split(urls []string, max int) ([]string, []crawlSkip) {
	out := urls[:0:0]
	var skipped []crawlSkip
	for _, u := range urls {
		if len(out) >= max {
			break
		}
		if !f.follow(u) {
			continue
		}
		if f.robots != nil {
			if ok, why := f.robots(u); !ok {
				skipped = append(skipped, crawlSkip{URL: u, Reason: why})
				continue
			}
		}
		out = append(out, u)
	}
	return out, skipped
}

// skips returns the URLs robots.txt kept the crawl from, and the start
// page's record of the sitemaps (nil without).
func (f *crawlFrontier) skips() ([]crawlSkip, *sitemap.Result) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]crawlSkip(nil), f.skipped...), f.sitemaps
}

// source says how the i-th URL was found ("start", "sitemap", "link")
// and its sitemap lastmod ("" when none).
func (f *crawlFrontier) source(i int) (string, string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if i == 0 {
		return "start", ""
	}
	if lastmod, ok := f.seeded[i]; ok {
		return "sitemap", lastmod
	}
	return "link", ""
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

// order returns every pool index in rank order.
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

// crawlQueue is a heap of pool indexes, lowest rank first.
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
