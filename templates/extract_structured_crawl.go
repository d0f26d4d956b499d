package templates

import (
	"context"

	"github.com/browsertask/browsertask/engine"
)

// extract_structured with inputs.startUrl: the pages are found as
// crawl_site finds them — its frontier (crawl_frontier.go), its link
// filter (sameOrigin, include, exclude, the URL policy) and its limits —
// and each page visited, the start page included, gives one object.
//
// A page's checkpoint is its structuredItem with its depth and the
// frontier's record of its rank and the links it found (structuredItem.
// Frontier, the same JSON as crawl_site's checkpoints), so a resumed
// attempt rebuilds the frontier from the checkpoints made for its
// outputSchema: a finished page is neither fetched nor sent to the model
// again, and the pages it led to are queued again at their depth. The links come from the HTML
// the page was filled from (the browser's document, or the fetched HTML),
// every one up to crawlLinksRead; the pages kept under maxPages are the
// first in rank order, as crawl_site's.

// runCrawl crawls from inputs.startUrl with pool (its work already set by
// readPagesWith) and fills the schema from every page visited; items.json
// lists them in breadth-first order (depth, then the order they were
// found). Errors: as Run.
func (t *ExtractStructured) runCrawl(ctx context.Context, env engine.Env, r *structuredRun, pool *urlPool) (*engine.Outcome, error) {
	in := r.in
	start := normalizeLink(in.StartURL)
	if start == "" {
		start = in.StartURL
	}
	filter := newCrawlFilter(&in.crawlScope, start, urlPolicy(t.b, env.Profile()))
	front := newCrawlFrontier(pool, in.MaxPages, *in.MaxDepth, filter.follow)
	pool.indexByDone, pool.growing, pool.feed = true, true, front.next
	pool.finished = func(i int, done pageDone) (pageDone, func()) {
		return structuredCrawled(front, pool, i, done)
	}

	front.rebuild(start, pool.env.FinishedItems())
	env.SetProgress(pool.progress())
	if front.queued() > 0 {
		if err := pool.run(ctx, in.Concurrency); err != nil {
			return nil, err
		}
	}
	if ctx.Err() != nil {
		return nil, context.Cause(ctx)
	}
	// The frontier is exhausted: the last progress no longer says more
	// may be found.
	pool.mu.Lock()
	pool.growing = false
	pool.mu.Unlock()
	env.SetProgress(pool.progress())

	order := front.order()
	items := make([]*structuredItem, 0, len(order))
	for _, i := range order {
		pool.mu.Lock()
		url, raw, pageErr := pool.urls[i], pool.outputs[i], pool.errs[i]
		pool.mu.Unlock()
		it := restoreStructured(url, raw, pageErr)
		d := front.depth(i)
		it.Depth = &d
		items = append(items, it)
	}
	return finishStructured(ctx, env, r, items)
}

// structuredCrawled turns the i-th page's item into its checkpoint: its
// depth and the frontier's record of the links it adds (crawlFrontier.
// finish); the returned function queues those links once the checkpoint
// is stored.
func structuredCrawled(front *crawlFrontier, pool *urlPool, i int, done pageDone) (pageDone, func()) {
	it, ok := done.out.(*structuredItem)
	if !ok || it == nil {
		// Nothing read (cannot happen with readPagesWith's work): a page
		// without links, so the frontier still counts it finished.
		pool.mu.Lock()
		it = &structuredItem{URL: pool.urls[i], Sources: map[string]string{}}
		pool.mu.Unlock()
	}
	cp := &crawlCheckpoint{}
	cp.Links = it.links
	queue := front.finish(i, cp)
	d := cp.Depth
	it.Depth, it.Frontier = &d, cp.Frontier
	return pageDone{out: it, failure: done.failure}, queue
}
