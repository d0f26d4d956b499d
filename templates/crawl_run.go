package templates

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"

	"github.com/go-rod/rod"

	"github.com/browsertask/browsertask/browser"
	"github.com/browsertask/browsertask/engine"
)

// crawlRun is one execution of crawl_site. Pages are visited level by
// level; links are collected in page order then link order, so the set of
// pages (and their order) is the same on every attempt: a resumed run
// replays the crawl, taking pages checkpointed earlier from their items.
type crawlRun struct {
	t      *CrawlSite
	env    engine.Env
	in     *crawlInputs
	filter *crawlFilter
	prior  map[string]engine.Item
	sess   *browser.Session

	// order serialises record (as urlPool.record does).
	order     sync.Mutex
	mu        sync.Mutex
	pages     []*crawlPageOut // in completion order (item indexes)
	ordered   []*crawlPageOut // level by level, in discovery order
	scheduled int
	failed    int
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
	r := &crawlRun{t: t, env: env, in: in, prior: env.Done(),
		filter: newCrawlFilter(in, start, urlPolicy(t.b, env.Profile()))}
	seen := map[string]bool{start: true}
	level := []string{start}
	r.scheduled = 1
	for depth := 0; len(level) > 0; depth++ {
		outs, err := r.visitLevel(ctx, level, depth)
		if err != nil {
			return nil, err
		}
		r.ordered = append(r.ordered, outs...)
		var next []string
		if depth < *in.MaxDepth {
			for _, p := range outs {
				for _, l := range p.Links {
					n := normalizeLink(l.Href)
					if n == "" || seen[n] || r.scheduled >= in.MaxPages || !r.filter.follow(n) {
						continue
					}
					seen[n] = true
					next = append(next, n)
					r.scheduled++
				}
			}
		}
		level = next
		r.env.SetProgress(r.progress())
	}
	if ctx.Err() != nil {
		return nil, context.Cause(ctx)
	}
	return r.finish(ctx)
}

// visitLevel fetches (or restores) every page of one level with up to
// concurrency tabs and returns their outputs in level order.
func (r *crawlRun) visitLevel(ctx context.Context, level []string, depth int) ([]*crawlPageOut, error) {
	base := len(r.pages)
	outs := make([]*crawlPageOut, len(level))
	var todo []int
	for i, u := range level {
		if it, ok := r.prior[u]; ok {
			p := &crawlPageOut{}
			if json.Unmarshal(it.Output, p) != nil || p.URL == "" {
				p = &crawlPageOut{pageOut: pageOut{URL: u, Fields: map[string]any{}}, Depth: depth}
			}
			if p.Error == nil && it.Status == engine.ItemFailed {
				p.Error = engine.Errorf(engine.StepExecutionFailed, "page failed in an earlier attempt")
			}
			outs[i] = p
			continue
		}
		todo = append(todo, i)
	}
	r.mu.Lock()
	for _, p := range outs {
		if p != nil {
			r.pages = append(r.pages, p)
			if p.Error != nil {
				r.failed++
			}
		}
	}
	r.mu.Unlock()
	if len(todo) == 0 {
		return outs, nil
	}
	if r.sess == nil {
		s, err := openSession(ctx, r.t.b, r.env, "crawl_site")
		if err != nil {
			return nil, err
		}
		r.sess = s
	}
	jobs := make(chan int, len(todo))
	for _, i := range todo {
		jobs <- i
	}
	close(jobs)
	wctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	var (
		wg       sync.WaitGroup
		once     sync.Once
		firstErr error
	)
	for w := 0; w < min(r.in.Concurrency, len(todo), r.sess.MaxTabs()); w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := r.worker(wctx, jobs, level, depth, base, outs); err != nil {
				once.Do(func() { firstErr = err })
				cancel(err)
			}
		}()
	}
	wg.Wait()
	if ctx.Err() != nil {
		return nil, context.Cause(ctx)
	}
	return outs, firstErr
}

// worker fetches pages of a level with one tab.
func (r *crawlRun) worker(ctx context.Context, jobs <-chan int, level []string, depth, base int, outs []*crawlPageOut) error {
	s := r.sess
	var (
		page    *rod.Page
		release func(bool)
	)
	defer func() {
		if release != nil {
			release(!s.Crashed(page))
		}
	}()
	for i := range jobs {
		if ctx.Err() != nil {
			return nil
		}
		if page == nil {
			var err error
			if page, release, err = s.AcquirePage(ctx); err != nil {
				if ctx.Err() != nil {
					return nil
				}
				return err
			}
		}
		out, err := r.fetch(ctx, s, page, level[i], depth)
		if ctx.Err() != nil {
			return nil
		}
		if err != nil {
			return err
		}
		if s.Crashed(page) || (out.Error != nil && !s.Healthy(page)) {
			// A tab stuck on a hostile page is replaced, not reused.
			release(false)
			page, release = nil, nil
		}
		outs[i] = out
		if err := r.record(ctx, out); err != nil {
			return err
		}
	}
	return nil
}

// fetch loads and extracts one page (links always, for the frontier).
func (r *crawlRun) fetch(ctx context.Context, s *browser.Session, p *rod.Page, u string, depth int) (*crawlPageOut, error) {
	out := &crawlPageOut{pageOut: pageOut{URL: u, Fields: map[string]any{}}, Depth: depth}
	nav, pageErr, fatal := loadPage(ctx, s, p, u, r.in.WaitFor, r.in.PerPageTimeoutMs)
	out.HTTPStatus, out.FinalURL, out.Error = nav.Status, nav.FinalURL, pageErr
	if fatal != nil {
		return nil, fatal
	}
	if nav.Status == 0 && pageErr != nil {
		return out, nil // nothing arrived: nothing to extract
	}
	opts := extractOptions{Fields: r.in.Fields, Text: r.in.IncludeText, Links: true, Meta: r.in.IncludeMeta,
		MaxText: maxTextChars, MaxLinks: maxLinksPerPage}
	xctx, cancel := context.WithTimeout(ctx, timeoutDur(r.in.PerPageTimeoutMs))
	err := extractFailure(ctx, xctx, extract(xctx, s, p, opts, &out.pageOut), u, r.in.PerPageTimeoutMs)
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

// record checkpoints a page (item index = its position in visit order).
func (r *crawlRun) record(ctx context.Context, out *crawlPageOut) error {
	raw, err := json.Marshal(out)
	if err != nil {
		return engine.Wrap(engine.ExecutionError, err, "encode page %s: %v", out.URL, err)
	}
	// One checkpoint at a time, in the order progress was counted, so the
	// last one written carries the final count.
	r.order.Lock()
	defer r.order.Unlock()
	r.mu.Lock()
	idx := len(r.pages)
	r.pages = append(r.pages, out)
	if out.Error != nil {
		r.failed++
	}
	p := r.progressLocked()
	r.mu.Unlock()
	it := engine.Item{Index: idx, Key: out.URL, Status: engine.ItemSucceeded, Output: raw}
	if out.Error != nil {
		it.Status, it.Error = engine.ItemFailed, out.Error
	}
	return r.env.Checkpoint(ctx, it, p)
}

func (r *crawlRun) progress() engine.Progress {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.progressLocked()
}

func (r *crawlRun) progressLocked() engine.Progress {
	return engine.Progress{DoneSteps: len(r.pages), TotalSteps: r.scheduled, FailedSteps: r.failed,
		Message: fmt.Sprintf("%d/%d pages (more may be found)", len(r.pages), r.scheduled)}
}

// finish writes pages.json and the result. Errors: STEP_EXECUTION_FAILED
// when no page succeeded, EXECUTION_ERROR, ctx's cause.
func (r *crawlRun) finish(ctx context.Context) (*engine.Outcome, error) {
	type summaryPage struct {
		pageSummary
		Depth int `json:"depth"`
	}
	res := struct {
		Summary    batchSummary  `json:"summary"`
		Pages      []summaryPage `json:"pages"`
		ArtifactID string        `json:"artifactId"`
	}{Pages: []summaryPage{}}
	var firstErrors []map[string]any
	for _, p := range r.ordered {
		if !r.in.IncludeLinks {
			p.Links = nil
		}
		res.Pages = append(res.Pages, summaryPage{pageSummary{URL: p.URL, FinalURL: p.FinalURL, HTTPStatus: p.HTTPStatus,
			Title: p.Title, Fields: p.Fields, Error: p.Error}, p.Depth})
		res.Summary.Total++
		if p.Error == nil {
			res.Summary.Succeeded++
			continue
		}
		res.Summary.Failed++
		if len(firstErrors) < maxFirstErrors {
			firstErrors = append(firstErrors, map[string]any{"url": p.URL, "errorCode": p.Error.Code, "message": p.Error.Message})
		}
	}
	data, err := json.MarshalIndent(r.ordered, "", "  ")
	if err != nil {
		return nil, engine.Wrap(engine.ExecutionError, err, "encode pages.json: %v", err)
	}
	id, err := r.env.PutArtifact(ctx, "pages.json", "application/json", data)
	if err != nil {
		if ctx.Err() != nil {
			return nil, context.Cause(ctx)
		}
		return nil, err
	}
	res.ArtifactID = id
	if res.Summary.Total > 0 && res.Summary.Succeeded == 0 {
		return nil, engine.Errorf(engine.StepExecutionFailed, "all %d pages failed; first: %s: %s",
			res.Summary.Failed, firstErrors[0]["url"], firstErrors[0]["message"]).
			WithDetails(map[string]any{"failed": res.Summary.Failed, "errors": firstErrors, "artifactId": id})
	}
	return &engine.Outcome{Result: res, Partial: res.Summary.Failed > 0}, nil
}
