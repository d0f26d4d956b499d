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

// urlWork does one URL in tab p. It returns the item's output, the page's
// own failure (nil = succeeded; recorded, the run goes on) or a fatal error
// that stops the run (the browser is gone).
type urlWork func(ctx context.Context, s *browser.Session, p *rod.Page, i int, url string) (out any, pageErr *engine.Error, fatal error)

// urlPool runs urlWork over a list of URLs with reused tabs, checkpointing
// every URL (item key = the URL) so a resumed run skips the ones done.
type urlPool struct {
	env   engine.Env
	urls  []string
	setup func(ctx context.Context, s *browser.Session, p *rod.Page) error
	work  urlWork

	// order serialises record: see there.
	order   sync.Mutex
	mu      sync.Mutex
	outputs []json.RawMessage
	errs    []*engine.Error
	done    int
	failed  int
}

// run processes every URL not checkpointed by an earlier attempt with n
// workers. open is called only when there is work left. Errors: the first
// fatal error, or ctx's cause once ctx ends.
func (u *urlPool) run(ctx context.Context, n int, open func() (*browser.Session, error)) error {
	u.outputs = make([]json.RawMessage, len(u.urls))
	u.errs = make([]*engine.Error, len(u.urls))
	prior := u.env.Done()
	var todo []int
	for i, url := range u.urls {
		it, ok := prior[url]
		if !ok {
			todo = append(todo, i)
			continue
		}
		u.outputs[i], u.errs[i] = it.Output, it.Error
		if it.Error == nil && it.Status == engine.ItemFailed {
			u.errs[i] = engine.Errorf(engine.StepExecutionFailed, "failed in an earlier attempt")
		}
		u.done++
		if u.errs[i] != nil {
			u.failed++
		}
	}
	u.env.SetProgress(u.progress())
	if len(todo) == 0 {
		return nil
	}
	s, err := open()
	if err != nil {
		return err
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
	for w := 0; w < min(n, len(todo), s.MaxTabs()); w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := u.worker(wctx, s, jobs); err != nil {
				once.Do(func() { firstErr = err })
				cancel(err)
			}
		}()
	}
	wg.Wait()
	if ctx.Err() != nil {
		return context.Cause(ctx)
	}
	return firstErr
}

// worker handles jobs with one tab, replacing it after a renderer crash or
// when it no longer answers after a failed page (Session.Healthy).
func (u *urlPool) worker(ctx context.Context, s *browser.Session, jobs <-chan int) error {
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
			if u.setup != nil {
				if err := u.setup(ctx, s, page); err != nil {
					return err
				}
			}
		}
		out, pageErr, fatal := u.work(ctx, s, page, i, u.urls[i])
		if ctx.Err() != nil {
			return nil // cut off: not checkpointed, redone on resume
		}
		if fatal != nil {
			return fatal
		}
		if s.Crashed(page) || (pageErr != nil && !s.Healthy(page)) {
			// A tab stuck on a hostile page is replaced, not reused.
			release(false)
			page, release = nil, nil
		}
		if err := u.record(ctx, i, out, pageErr); err != nil {
			return err
		}
	}
	return nil
}

// record checkpoints one URL.
func (u *urlPool) record(ctx context.Context, i int, out any, pageErr *engine.Error) error {
	raw, err := json.Marshal(out)
	if err != nil {
		return engine.Wrap(engine.ExecutionError, err, "encode output of %s: %v", u.urls[i], err)
	}
	it := engine.Item{Index: i, Key: u.urls[i], Status: engine.ItemSucceeded, Output: raw}
	if pageErr != nil {
		it.Status, it.Error = engine.ItemFailed, pageErr
	}
	// Checkpoints are written one at a time, in the order their progress
	// was counted: written concurrently, an earlier count could land last
	// and the finished run kept showing it (34/35 pages done).
	u.order.Lock()
	defer u.order.Unlock()
	u.mu.Lock()
	u.outputs[i], u.errs[i] = raw, pageErr
	u.done++
	if pageErr != nil {
		u.failed++
	}
	p := u.progressLocked()
	u.mu.Unlock()
	return u.env.Checkpoint(ctx, it, p)
}

func (u *urlPool) progress() engine.Progress {
	u.mu.Lock()
	defer u.mu.Unlock()
	return u.progressLocked()
}

func (u *urlPool) progressLocked() engine.Progress {
	return engine.Progress{DoneSteps: u.done, TotalSteps: len(u.urls), FailedSteps: u.failed,
		Message: fmt.Sprintf("%d/%d pages", u.done, len(u.urls))}
}

// outcome applies the batch rules: all failed → STEP_EXECUTION_FAILED with
// the first errors; some failed → partial. res is the result to return.
func (u *urlPool) outcome(res any) (*engine.Outcome, error) {
	if len(u.urls) > 0 && u.failed == len(u.urls) {
		var first []map[string]any
		for i, e := range u.errs {
			if e != nil && len(first) < maxFirstErrors {
				first = append(first, map[string]any{"url": u.urls[i], "errorCode": e.Code, "message": e.Message})
			}
		}
		return nil, engine.Errorf(engine.StepExecutionFailed, "all %d pages failed; first: %s: %s", u.failed, first[0]["url"], first[0]["message"]).
			WithDetails(map[string]any{"failed": u.failed, "errors": first})
	}
	return &engine.Outcome{Result: res, Partial: u.failed > 0}, nil
}

// loadPage navigates tab p to url within timeoutMs and waits per waitFor.
// It returns what the navigation got, the page's failure (timeouts, policy
// refusals, HTTP >= 400) or a fatal error (browser gone).
func loadPage(ctx context.Context, s *browser.Session, p *rod.Page, url, waitFor string, timeoutMs int) (browser.NavResult, *engine.Error, error) {
	nctx, cancel := context.WithTimeout(ctx, time.Duration(timeoutMs)*time.Millisecond)
	nav, err := s.Navigate(nctx, p, url, waitFor)
	cancel()
	if err != nil {
		e := engine.AsError(err)
		if e.Code == engine.ExecutionError && ctx.Err() == nil {
			return nav, nil, e
		}
		return nav, e, nil
	}
	if nav.Status >= 400 {
		return nav, engine.Errorf(engine.StepExecutionFailed, "%s answered HTTP %d %s", url, nav.Status, nav.StatusText).
			WithDetails(map[string]any{"url": url, "httpStatus": nav.Status}), nil
	}
	return nav, nil, nil
}
