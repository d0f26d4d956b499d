package templates

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"
	"time"

	"github.com/go-rod/rod"

	"github.com/browsertask/browsertask/browser"
	"github.com/browsertask/browsertask/engine"
)

// batchRun is the state of one execution of batch_extract_pages.
type batchRun struct {
	t    *BatchExtractPages
	env  engine.Env
	in   *batchInputs
	pol  engine.URLPolicy
	urls []string

	mu     sync.Mutex
	pages  []*pageOut
	done   int
	failed int
}

// Run extracts every URL not checkpointed by an earlier attempt, with
// `concurrency` workers each holding one reused tab, then writes pages.json.
// Errors: STEP_EXECUTION_FAILED when every page failed (pages.json is still
// written), EXECUTION_ERROR when the browser is lost, ctx's cause once ctx
// ends (returned promptly; the engine maps it).
func (t *BatchExtractPages) Run(ctx context.Context, env engine.Env) (*engine.Outcome, error) {
	in, err := parseBatchInputs(env.Inputs())
	if err != nil {
		return nil, err
	}
	r := &batchRun{t: t, env: env, in: in, pol: t.policy(env.Profile()), urls: dedupe(in.URLs)}
	r.pages = make([]*pageOut, len(r.urls))
	prior := env.Done()
	var todo []int
	for i, u := range r.urls {
		it, ok := prior[u]
		if !ok {
			todo = append(todo, i)
			continue
		}
		r.pages[i] = priorPage(u, it)
		r.done++
		if r.pages[i].Error != nil {
			r.failed++
		}
	}
	env.SetProgress(r.progress())
	if len(todo) > 0 {
		if t.b == nil {
			return nil, engine.Errorf(engine.ExecutionError, "batch_extract_pages has no browser")
		}
		s, err := t.b.Session(ctx, env.SessionID())
		if err != nil {
			if ctx.Err() != nil {
				return nil, context.Cause(ctx)
			}
			return nil, err
		}
		if err := r.work(ctx, s, todo); err != nil {
			return nil, err
		}
	}
	if ctx.Err() != nil {
		return nil, context.Cause(ctx)
	}
	return r.finish(ctx)
}

// priorPage restores the output of an item checkpointed by an earlier attempt.
func priorPage(url string, it engine.Item) *pageOut {
	p := &pageOut{}
	if len(it.Output) == 0 || json.Unmarshal(it.Output, p) != nil || p.URL == "" {
		p = &pageOut{URL: url, Fields: map[string]any{}}
	}
	if p.Error == nil && it.Error != nil {
		p.Error = it.Error
	}
	if p.Error == nil && it.Status == engine.ItemFailed {
		p.Error = engine.Errorf(engine.StepExecutionFailed, "page failed in an earlier attempt")
	}
	return p
}

// work runs the workers over todo and returns the first fatal error, or
// ctx's cause when ctx ended.
func (r *batchRun) work(ctx context.Context, s *browser.Session, todo []int) error {
	n := min(r.in.Concurrency, len(todo), s.MaxTabs())
	jobs := make(chan int, len(todo))
	for _, i := range todo {
		jobs <- i
	}
	close(jobs)
	wctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	var (
		wg       sync.WaitGroup
		errOnce  sync.Once
		firstErr error
	)
	fail := func(err error) {
		errOnce.Do(func() { firstErr = err })
		cancel(err)
	}
	for w := 0; w < n; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := r.worker(wctx, s, jobs); err != nil {
				fail(err)
			}
		}()
	}
	wg.Wait()
	if ctx.Err() != nil {
		return context.Cause(ctx)
	}
	return firstErr
}

// worker processes jobs with one tab, replacing it if its renderer crashed.
func (r *batchRun) worker(ctx context.Context, s *browser.Session, jobs <-chan int) error {
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
		out, err := r.fetch(ctx, s, page, r.urls[i])
		if ctx.Err() != nil {
			return nil // cut off by cancellation: not checkpointed, redone on resume
		}
		if err != nil {
			return err
		}
		if s.Crashed(page) {
			release(false)
			page, release = nil, nil
		}
		if err := r.record(ctx, i, out); err != nil {
			return err
		}
	}
	return nil
}

// record stores a page and checkpoints it. An error means the run is no
// longer ours.
func (r *batchRun) record(ctx context.Context, i int, out *pageOut) error {
	raw, err := json.Marshal(out)
	if err != nil {
		return engine.Wrap(engine.ExecutionError, err, "encode page %s: %v", out.URL, err)
	}
	it := engine.Item{Index: i, Key: r.urls[i], Status: engine.ItemSucceeded, Output: raw}
	if out.Error != nil {
		it.Status, it.Error = engine.ItemFailed, out.Error
	}
	r.mu.Lock()
	r.pages[i] = out
	r.done++
	if out.Error != nil {
		r.failed++
	}
	p := r.progressLocked()
	r.mu.Unlock()
	r.env.Logger().Debug("page done", "url", out.URL, "status", out.HTTPStatus, "failed", out.Error != nil)
	return r.env.Checkpoint(ctx, it, p)
}

func (r *batchRun) progress() engine.Progress {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.progressLocked()
}

func (r *batchRun) progressLocked() engine.Progress {
	return engine.Progress{DoneSteps: r.done, TotalSteps: len(r.urls), FailedSteps: r.failed,
		Message: fmt.Sprintf("%d/%d pages", r.done, len(r.urls))}
}

// fetch loads and extracts one URL. Page-level problems are recorded in the
// returned page's Error; a non-nil error is fatal for the run (browser lost).
func (r *batchRun) fetch(ctx context.Context, s *browser.Session, p *rod.Page, url string) (*pageOut, error) {
	out := &pageOut{URL: url, Fields: map[string]any{}}
	opts := extractOptions{Fields: r.in.Fields, Text: *r.in.IncludeText, Links: r.in.IncludeLinks,
		Meta: r.in.IncludeMeta, MaxText: maxTextChars, MaxLinks: maxLinksPerPage}
	expr, err := extractExpr(opts)
	if err != nil {
		return nil, err
	}
	timeout := time.Duration(r.in.PerPageTimeoutMs) * time.Millisecond
	navCtx, cancel := context.WithTimeout(ctx, timeout)
	// The extraction runs in the load wait's own evaluation: one CDP round
	// trip per page for both.
	nav, extracted, err := s.NavigateThen(navCtx, p, url, r.in.WaitFor, expr)
	cancel()
	out.HTTPStatus, out.FinalURL = nav.Status, nav.FinalURL
	if ctx.Err() != nil {
		return out, nil
	}
	if err != nil {
		e := engine.AsError(err)
		if e.Code == engine.ExecutionError {
			return nil, e
		}
		out.Error = e
		if nav.Status > 0 && (e.Code == engine.NavigationTimeout || e.Code == engine.ElementNotFound) {
			// The document arrived: record what is there.
			xctx, cancel := context.WithTimeout(ctx, 3*time.Second)
			_ = extract(xctx, s, p, opts, out)
			cancel()
		}
		return out, nil
	}
	if nav.FinalURL != "" && nav.FinalURL != url {
		if e := engine.CheckURL(nav.FinalURL, r.pol); e != nil {
			e.Message = fmt.Sprintf("%s redirected to a URL that is not allowed: %s", url, e.Message)
			out.Error = e
			return out, nil
		}
	}
	if extracted != nil {
		err = mergeExtracted(extracted, out)
	} else {
		// The script threw in the combined evaluation: run it on its own
		// for its error.
		xctx, cancel := context.WithTimeout(ctx, max(timeout, 5*time.Second))
		err = extract(xctx, s, p, opts, out)
		cancel()
	}
	if err != nil {
		if ctx.Err() != nil {
			return out, nil
		}
		e := engine.AsError(err)
		if e.Code == engine.ExecutionError {
			return nil, e
		}
		out.Error = e
		return out, nil
	}
	if nav.Status >= 400 {
		out.Error = engine.Errorf(engine.StepExecutionFailed, "%s answered HTTP %d %s", url, nav.Status, nav.StatusText).
			WithDetails(map[string]any{"url": url, "httpStatus": nav.Status})
	}
	return out, nil
}

// dedupe removes repeated URLs, keeping the first occurrence's position.
func dedupe(urls []string) []string {
	seen := make(map[string]bool, len(urls))
	out := make([]string, 0, len(urls))
	for _, u := range urls {
		if !seen[u] {
			seen[u] = true
			out = append(out, u)
		}
	}
	return out
}
