package templates

import (
	"context"
	"encoding/json"

	"github.com/browsertask/browsertask/browser"
	"github.com/browsertask/browsertask/engine"
)

// crawlRun is one execution of crawl_site. Pages are visited level by
// level; links are collected in page order then link order, so the set of
// pages (and their order) is the same on every attempt: a resumed run
// replays the crawl, taking pages checkpointed earlier from their items.
type crawlRun struct {
	in     *crawlInputs
	filter *crawlFilter
	// pool holds every page scheduled so far, level by level in discovery
	// order; its checkpoints are numbered in visit order.
	pool  *urlPool
	pages []*crawlPageOut // by pool index, nil until restored or fetched
	depth []int           // by pool index
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
	r := &crawlRun{in: in, filter: newCrawlFilter(in, start, urlPolicy(t.b, env.Profile()))}
	r.pool = &urlPool{env: env, indexByDone: true, growing: true, setup: in.resourceBlocking.setup(),
		open: func() (*browser.Session, error) { return openSession(ctx, t.b, env, "crawl_site") },
		work: func(ctx context.Context, tb *browser.Tab, i int, url string) (pageDone, error) {
			out, err := r.fetch(ctx, tb, url, r.depth[i])
			if err != nil {
				return pageDone{}, err
			}
			r.pages[i] = out
			return pageDone{out: out, failure: out.Error}, nil
		}}
	if in.Render == renderHTTP && (t.b == nil || !t.b.Named(env.SessionID())) {
		// Links are always extracted: they are the frontier.
		opts := extractOptions{Fields: in.Fields, Text: in.IncludeText, Links: true, Meta: in.IncludeMeta,
			MaxText: maxTextChars, MaxLinks: maxLinksPerPage}
		h, err := newHTTPExtractor(urlPolicy(t.b, env.Profile()), opts, timeoutDur(in.PerPageTimeoutMs))
		if err != nil {
			return nil, err
		}
		defer h.close()
		r.pool.noTab = true
		r.pool.work = func(ctx context.Context, _ *browser.Tab, i int, url string) (pageDone, error) {
			out := &crawlPageOut{pageOut: *h.page(ctx, url), Depth: r.depth[i]}
			r.pages[i] = out
			return pageDone{out: out, failure: out.Error}, nil
		}
	}
	seen := map[string]bool{start: true}
	r.schedule([]string{start}, 0)
	for depth, first := 0, 0; first < len(r.pages); depth++ {
		end := len(r.pages)
		if err := r.pool.run(ctx, in.Concurrency); err != nil {
			return nil, err
		}
		var next []string
		if depth < *in.MaxDepth {
			for i := first; i < end; i++ {
				for _, l := range r.page(i).Links {
					n := normalizeLink(l.Href)
					if n == "" || seen[n] || end+len(next) >= in.MaxPages || !r.filter.follow(n) {
						continue
					}
					seen[n] = true
					next = append(next, n)
				}
			}
		}
		r.schedule(next, depth+1)
		env.SetProgress(r.pool.progress())
		first = end
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

// schedule adds the pages of the next level.
func (r *crawlRun) schedule(urls []string, depth int) {
	r.pool.add(urls...)
	for range urls {
		r.pages = append(r.pages, nil)
		r.depth = append(r.depth, depth)
	}
}

// page returns the i-th page, decoding it from an earlier attempt's
// checkpoint when this attempt did not fetch it.
func (r *crawlRun) page(i int) *crawlPageOut {
	if r.pages[i] == nil {
		p := &crawlPageOut{}
		if json.Unmarshal(r.pool.outputs[i], p) != nil || p.URL == "" {
			p = &crawlPageOut{pageOut: pageOut{URL: r.pool.urls[i], Fields: map[string]any{}}, Depth: r.depth[i]}
		}
		if p.Error == nil {
			p.Error = r.pool.errs[i]
		}
		r.pages[i] = p
	}
	return r.pages[i]
}

// fetch loads and extracts one page (links always, for the frontier).
func (r *crawlRun) fetch(ctx context.Context, tb *browser.Tab, u string, depth int) (*crawlPageOut, error) {
	out := &crawlPageOut{pageOut: pageOut{URL: u, Fields: map[string]any{}, RenderedBy: renderBrowser}, Depth: depth}
	lp, fatal := loadPage(ctx, tb, u, r.in.WaitFor, r.in.PerPageTimeoutMs)
	out.HTTPStatus, out.FinalURL, out.Error = lp.nav.Status, lp.nav.FinalURL, lp.failure
	if fatal != nil {
		return nil, fatal
	}
	if lp.nav.Status == 0 && lp.failure != nil {
		return out, nil // nothing arrived: nothing to extract
	}
	opts := extractOptions{Fields: r.in.Fields, Text: r.in.IncludeText, Links: true, Meta: r.in.IncludeMeta,
		MaxText: maxTextChars, MaxLinks: maxLinksPerPage}
	xctx, cancel := context.WithTimeout(ctx, timeoutDur(r.in.PerPageTimeoutMs))
	err := extractFailure(ctx, xctx, extract(xctx, tb, opts, &out.pageOut), u, r.in.PerPageTimeoutMs)
	cancel()
	if err != nil && out.Error == nil && ctx.Err() == nil {
		e := engine.AsError(err)
		if e.Code == engine.ExecutionError {
			return nil, e
		}
		out.Error = e
	}
	return out, nil
}

// finish writes pages.json and the result. Errors: STEP_EXECUTION_FAILED
// when no page succeeded, EXECUTION_ERROR, ctx's cause.
func (r *crawlRun) finish(ctx context.Context, env engine.Env) (*engine.Outcome, error) {
	type summaryPage struct {
		pageSummary
		Depth int `json:"depth"`
	}
	res := struct {
		Summary    batchSummary  `json:"summary"`
		Pages      []summaryPage `json:"pages"`
		ArtifactID string        `json:"artifactId"`
	}{Pages: []summaryPage{}}
	var tally pageTally
	for i := range r.pages {
		p := r.page(i)
		if !r.in.IncludeLinks {
			p.Links = nil
		}
		res.Pages = append(res.Pages, summaryPage{summaryOf(&p.pageOut), p.Depth})
		tally.count(p.Error, map[string]any{"url": p.URL})
	}
	res.Summary = tally.batchSummary
	id, err := putPagesJSON(ctx, env, r.pages)
	if err != nil {
		return nil, err
	}
	res.ArtifactID = id
	return tally.outcome(res, map[string]any{"artifactId": id})
}
