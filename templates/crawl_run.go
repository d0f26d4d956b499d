package templates

import (
	"context"
	"encoding/json"

	"github.com/browsertask/browsertask/browser"
	"github.com/browsertask/browsertask/engine"
	"github.com/browsertask/browsertask/internal/extract/page"
)

// crawlRun is one execution of crawl_site: a frontier (crawl_frontier.go)
// feeding a urlPool's workers, each taking the next URL as soon as its tab
// is free, and one checkpoint per page that also holds what the page
// added to the frontier, so a resumed attempt rebuilds the frontier from
// the checkpoints and fetches no finished page again.
type crawlRun struct {
	in    *crawlInputs
	pool  *urlPool
	front *crawlFrontier
	// find is the run's robots.txt and sitemaps (crawl_finder.go).
	find *crawlFinder
}

// Run crawls. Errors: STEP_EXECUTION_FAILED (every page failed),
// EXECUTION_ERROR (browser lost), ctx's cause.
func (t *CrawlSite) Run(ctx context.Context, env engine.Env) (*engine.Outcome, error) {
	in, err := parseCrawlInputs(env.Inputs())
	if err != nil {
		return nil, err
	}
	start := normalizeLink(in.StartURL)
	if start == "" {
		start = in.StartURL
	}
	pol := urlPolicy(t.b, env.Profile())
	id, err := in.politeness.wire(env.Profile().UserAgent)
	if err != nil {
		return nil, err
	}
	filter := newCrawlFilter(&in.crawlScope, start, pol)
	// Links are always extracted: they are the frontier. Checkpoints and
	// pages.json keep them only when the inputs ask for them.
	// The frontier reads up to crawlLinksRead links of a page, pages.json
	// lists maxLinksPerPage of them (cutCrawlLinks).
	opts := withCaps(page.Options{Fields: pageFields(in.Fields), Text: in.IncludeText, Links: true, Meta: in.IncludeMeta})
	opts.MaxLinks = crawlLinksRead
	r := &crawlRun{in: in}
	r.pool = &urlPool{env: env, indexByDone: true, slim: true, growing: true, setup: in.resourceBlocking.setup(), finished: r.finished, cutChars: in.resultCut(),
		open: func() (*browser.Session, error) { return openRunSession(ctx, t.b, env, "crawl_site", id) }}
	r.front = newCrawlFrontier(r.pool, in.MaxPages, *in.MaxDepth, filter.follow)
	r.pool.feed = r.front.next

	// r.pool.work is the one place where a page is read, chosen here by
	// inputs.render. It returns the page (*pageOut) with its own failure;
	// r.finished adds its depth and the links it gives the frontier. The
	// browser reads a page as batch_extract_pages does (one round trip for
	// the load and the extraction).
	br := &batchRun{env: env, in: &batchInputs{Fields: in.Fields, pageLoad: in.pageLoad, pageFormats: in.pageFormats, politeness: in.politeness}, pol: pol, opts: opts}
	if br.expr, err = extractExpr(opts); err != nil {
		return nil, err
	}
	br.wire = id
	r.pool.setup = br.wire.tabSetup(r.pool.setup)
	r.pool.work = func(ctx context.Context, tb *browser.Tab, _ int, url string) (pageDone, error) {
		out, err := br.fetch(ctx, tb, url)
		if err != nil {
			return pageDone{}, err
		}
		return pageDone{out: out, failure: out.Error}, nil
	}
	if in.Render == renderHTTP && !inBrowserState(t.b, env) {
		h, err := newHTTPExtractor(pol, opts, timeoutDur(in.PerPageTimeoutMs), br.wire)
		if err != nil {
			return nil, err
		}
		h.formats = &in.pageFormats
		defer h.close()
		r.pool.noTab = true
		r.pool.work = func(ctx context.Context, _ *browser.Tab, _ int, url string) (pageDone, error) {
			out := h.page(ctx, url)
			return pageDone{out: out, failure: out.Error}, nil
		}
	}
	if in.Render == renderAuto {
		release, err := br.useAuto(ctx, r.pool, inBrowserState(t.b, env))
		if err != nil {
			return nil, err
		}
		defer release()
	}

	// One per-host gate spaces every request to a host: the run's
	// perHostConcurrency and minDelayMs (politeWork) and robots.txt's
	// Crawl-delay (the finder raises the host's minimum delay on it).
	gate := in.politeness.gate()
	r.pool.work = politeWork(&in.politeness, gate, r.pool.work)
	// robots.txt, Crawl-delay and sitemaps (crawl_finder.go), around
	// whatever reads the pages.
	if r.find, err = newCrawlFinder(ctx, &in.crawlDiscovery, pol, t.sitemapLimits, gate, id); err != nil {
		return nil, err
	}
	defer r.find.close()
	if err := r.find.checkStart(start); err != nil {
		return nil, err
	}
	r.find.attach(ctx, r.front, r.pool, start)

	r.front.rebuild(start, env.FinishedItems())
	env.SetProgress(r.pool.progress())
	if r.front.queued() > 0 {
		if err := r.pool.run(ctx, in.Concurrency); err != nil {
			return nil, err
		}
	}
	if ctx.Err() != nil {
		return nil, context.Cause(ctx)
	}
	// The frontier is exhausted: the last progress no longer says more
	// may be found (the engine writes it with the result).
	r.pool.mu.Lock()
	r.pool.growing = false
	r.pool.mu.Unlock()
	env.SetProgress(r.pool.progress())
	return r.finish(ctx, env)
}

// finished turns a page read by pool.work into its checkpoint: the page
// with its depth, its links only when asked for, and its frontier record
// (crawlFrontier.finish); the links it adds are queued once the
// checkpoint is stored.
func (r *crawlRun) finished(i int, done pageDone) (pageDone, func()) {
	cp := &crawlCheckpoint{}
	switch p := done.out.(type) {
	case *pageOut:
		cp.pageOut = *p
	case *crawlPageOut:
		cp.crawlPageOut = *p
	default:
		// Not a page: checkpointed as one without links, so the frontier
		// still counts it finished.
		r.pool.mu.Lock()
		cp.URL, cp.Fields = r.pool.urls[i], map[string]any{}
		r.pool.mu.Unlock()
	}
	queue := r.front.finish(i, cp)
	cutCrawlLinks(&cp.pageOut, r.in.IncludeLinks)
	return pageDone{out: cp, failure: done.failure}, queue
}

// page returns the i-th page from its slim output in the pool (no text
// or links: the result's entry).
func (r *crawlRun) page(i int) *crawlPageOut {
	r.pool.mu.Lock()
	raw, url, pageErr := r.pool.outputs[i], r.pool.urls[i], r.pool.errs[i]
	r.pool.mu.Unlock()
	return r.pageFrom(i, raw, url, pageErr)
}

// pageFrom is the i-th page (pool index) decoded from raw, its
// checkpointed output, as pages.json shows it.
func (r *crawlRun) pageFrom(i int, raw json.RawMessage, url string, pageErr *engine.Error) *crawlPageOut {
	p := &crawlPageOut{}
	if json.Unmarshal(raw, p) != nil || p.URL == "" {
		p = &crawlPageOut{pageOut: pageOut{URL: url, Fields: map[string]any{}}}
	}
	p.Depth = r.front.depth(i)
	p.Source, p.Lastmod = r.front.source(i)
	if p.Error == nil {
		p.Error = pageErr
	}
	if !r.in.IncludeLinks {
		p.Links = nil
	}
	return p
}

// finish writes pages.json and the result, the pages in breadth-first
// order (depth, then the order they were found). Errors:
// STEP_EXECUTION_FAILED when no page succeeded, EXECUTION_ERROR, ctx's
// cause.
func (r *crawlRun) finish(ctx context.Context, env engine.Env) (*engine.Outcome, error) {
	type summaryPage struct {
		pageSummary
		Depth   int    `json:"depth"`
		Source  string `json:"source,omitempty"`
		Lastmod string `json:"lastmod,omitempty"`
	}
	res := struct {
		Summary    batchSummary  `json:"summary"`
		Pages      []summaryPage `json:"pages"`
		ArtifactID string        `json:"artifactId"`
		// MarkdownArtifactID names pages.md (format markdown).
		MarkdownArtifactID string `json:"markdownArtifactId,omitempty"`
		discoveryResult
	}{Pages: []summaryPage{}, discoveryResult: r.find.report(r.front)}
	var tally pageTally
	order := r.front.order()
	idx := make([]int, len(order))
	for k, i := range order {
		p := r.page(i)
		res.Pages = append(res.Pages, summaryPage{summaryOf(&p.pageOut), p.Depth, p.Source, p.Lastmod})
		tally.count(p.Error, map[string]any{"url": p.URL})
		r.pool.mu.Lock()
		idx[k] = r.pool.itemIdx[i]
		r.pool.mu.Unlock()
	}
	res.Summary = tally.batchSummary
	id, err := streamPages(ctx, env, "pages.json", func(add func(any) error) error {
		return checkpointsInOrder(ctx, env, idx, func(k int, it engine.Item) error {
			i := order[k]
			r.pool.mu.Lock()
			url, pageErr := r.pool.urls[i], r.pool.errs[i]
			r.pool.mu.Unlock()
			return add(r.pageFrom(i, it.Output, url, pageErr))
		})
	})
	if err != nil {
		return nil, err
	}
	res.ArtifactID = id
	if r.in.has(formatMarkdown) {
		md, err := streamPagesMD(ctx, env, func(add func(mdPage) error) error {
			return checkpointsInOrder(ctx, env, idx, func(k int, it engine.Item) error {
				i := order[k]
				r.pool.mu.Lock()
				url, pageErr := r.pool.urls[i], r.pool.errs[i]
				r.pool.mu.Unlock()
				return add(mdPageOf(&r.pageFrom(i, it.Output, url, pageErr).pageOut))
			})
		})
		if err != nil {
			return nil, err
		}
		res.MarkdownArtifactID = md
	}
	return tally.outcome(res, map[string]any{"artifactId": id})
}
