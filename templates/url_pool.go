package templates

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"
	"time"

	"github.com/browsertask/browsertask/browser"
	"github.com/browsertask/browsertask/engine"
)

// urlWork does one URL (the i-th of the pool's list) in tab tb. It returns
// the item's output and the page's own failure (pageDone), or an error that
// stops the run (the browser is gone).
type urlWork func(ctx context.Context, tb *browser.Tab, i int, url string) (pageDone, error)

// pageDone is what urlWork made of one URL: the output to checkpoint and
// the page's own failure (nil = succeeded; recorded, and the run goes on).
type pageDone struct {
	out     any
	failure *engine.Error
}

// urlPool runs urlWork over a list of URLs with reused tabs, checkpointing
// every URL (item key = the URL) so a resumed run skips the ones done.
// batch_extract_pages, screenshot_pages and save_pdf add every URL at once
// (runList); crawl_site's frontier grows the list while pages finish and
// hands the workers their URLs itself (feed).
type urlPool struct {
	env   engine.Env
	setup func(ctx context.Context, tb *browser.Tab) error
	work  urlWork
	// open returns the run's session; it is called once, when there is
	// work left.
	open func() (*browser.Session, error)
	// indexByDone numbers checkpoints in the order pages finish, after
	// every checkpoint of earlier attempts (crawl_site: visit order)
	// instead of by the URL's position in the list. Restored checkpoints
	// may leave gaps (a resubmission adopts only the pages that
	// succeeded), so the next index is past the highest restored one, not
	// the count of pages done: a new page never overwrites an adopted one.
	indexByDone bool
	// nextIndex is the index the next checkpoint gets with indexByDone.
	nextIndex int
	// growing says in the progress message that more URLs may be added.
	growing bool
	// noTab runs work with a nil tab and no session: pages fetched
	// without the browser (render "http").
	noTab bool
	// feed, when set, hands the workers the index of the next URL to do
	// instead of the added list: it blocks until one is ready and reports
	// false once there are none left or ctx ended (crawl_site's frontier,
	// which adds URLs while pages finish). run then neither restores nor
	// queues anything itself.
	feed func(ctx context.Context) (int, bool)
	// finished, when set, sees each page's result before it is
	// checkpointed and returns what to checkpoint, plus a function run
	// once the checkpoint is stored (nil: none). crawl_site records there
	// the links the page gives the frontier and queues them only once the
	// page's checkpoint holds them.
	finished func(i int, done pageDone) (pageDone, func())
	// slim keeps only slimOutput of each output in memory (outputs): the
	// page templates read their pages back from the checkpoints.
	slim bool
	// cutChars, when > 0, cuts the markdown and html kept in outputs
	// (the run's result) at that many characters (inputs.maxChars;
	// cutContent).
	cutChars int

	sess    *browser.Session
	pending int // urls[pending:] were added but not yet restored or queued
	todo    []int

	// order serialises record: see there.
	order   sync.Mutex
	mu      sync.Mutex
	urls    []string
	outputs []json.RawMessage
	errs    []*engine.Error
	done    int
	failed  int

	// itemIdx is each URL's checkpoint index (-1 until it has one), and
	// keptBytes adds up the slim outputs kept (maxResultBytes); both
	// under mu.
	itemIdx   []int
	keptBytes int
}

// add appends URLs to the list. They are looked up among the earlier
// attempts' checkpoints by restore (or the next run), not at once.
func (u *urlPool) add(urls ...string) {
	u.mu.Lock()
	defer u.mu.Unlock()
	u.urls = append(u.urls, urls...)
	u.outputs = append(u.outputs, make([]json.RawMessage, len(urls))...)
	u.errs = append(u.errs, make([]*engine.Error, len(urls))...)
	for range urls {
		u.itemIdx = append(u.itemIdx, -1)
	}
}

// restore takes the added URLs that an earlier attempt checkpointed from
// their items and queues the others for run.
func (u *urlPool) restore() {
	prior := u.env.FinishedItems()
	u.mu.Lock()
	defer u.mu.Unlock()
	for i := u.pending; i < len(u.urls); i++ {
		it, ok := prior[u.urls[i]]
		if !ok {
			u.todo = append(u.todo, i)
			continue
		}
		u.restoredLocked(i, it)
	}
	u.pending = len(u.urls)
}

// restored counts the i-th URL as done by an earlier attempt, whose
// checkpoint it is (crawl_site's frontier, rebuilding itself).
func (u *urlPool) restored(i int, it engine.Item) {
	u.mu.Lock()
	defer u.mu.Unlock()
	u.restoredLocked(i, it)
}

func (u *urlPool) restoredLocked(i int, it engine.Item) {
	u.outputs[i], u.errs[i], u.itemIdx[i] = u.kept(it.Output), itemError(it), it.Index
	u.nextIndex = max(u.nextIndex, it.Index+1)
	u.done++
	if u.errs[i] != nil {
		u.failed++
	}
}

// runList runs a fixed list: it adds urls, reports the progress of the
// ones earlier attempts did, and runs the others with n workers. Errors:
// as run.
func (u *urlPool) runList(ctx context.Context, urls []string, n int) error {
	u.add(urls...)
	u.restore()
	u.env.SetProgress(u.progress())
	return u.run(ctx, n)
}

// run restores what it can and processes every other added URL with n
// workers, returning once they are done; with a feed it does the URLs the
// feed hands out until it has none left. Errors: the first fatal error, or
// ctx's cause once ctx ends.
func (u *urlPool) run(ctx context.Context, n int) error {
	var (
		todo    []int
		workers = n
		next    = u.feed
	)
	if next == nil {
		u.restore()
		todo = u.todo
		u.todo = nil
		if len(todo) == 0 {
			return nil
		}
		workers = min(n, len(todo))
		jobs := make(chan int, len(todo))
		for _, i := range todo {
			jobs <- i
		}
		close(jobs)
		next = func(context.Context) (int, bool) {
			i, ok := <-jobs
			return i, ok
		}
	}
	if !u.noTab {
		if u.sess == nil {
			s, err := u.open()
			if err != nil {
				return err
			}
			// With several --browser endpoints the pages go to all of
			// them, and a browser that stops answering mid-run hands its
			// pages to the others (worker, failOver).
			s.Spread()
			u.sess = s
		}
		workers = min(workers, u.sess.MaxTabs())
	}
	wctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	var (
		wg       sync.WaitGroup
		once     sync.Once
		firstErr error
	)
	fail := func(err error) {
		once.Do(func() { firstErr = err })
		cancel(err)
	}
	for w := 0; w < workers; w++ {
		wg.Add(1)
		// wg.Done is not deferred: after a panic onPanic records the
		// run's error first, then lets run return it.
		engine.Go(wctx, u.env.Logger(), "templates.urlPool.worker", func() {
			if err := u.worker(wctx, next); err != nil {
				fail(err)
			}
			wg.Done()
		}, func(p *engine.Panic) {
			fail(engine.InternalError(p))
			wg.Done()
		})
	}
	wg.Wait()
	if ctx.Err() != nil {
		return context.Cause(ctx)
	}
	return firstErr
}

// worker does the URLs next hands it with one tab (taken once it has a
// URL), replacing the tab after a renderer crash or when it no longer
// answers after a failed page (Tab.Healthy).
func (u *urlPool) worker(ctx context.Context, next func(context.Context) (int, bool)) error {
	var tb *browser.Tab
	defer func() {
		if tb != nil {
			tb.Release(true)
		}
	}()
	for {
		i, ok := next(ctx)
		if !ok || ctx.Err() != nil {
			return nil
		}
		u.mu.Lock()
		url := u.urls[i]
		u.mu.Unlock()
		var done pageDone
		for {
			if tb == nil && !u.noTab {
				var err error
				if tb, err = u.sess.AcquireTab(ctx); err != nil {
					if ctx.Err() != nil {
						return nil
					}
					return err
				}
				if u.setup != nil {
					if err := u.setup(ctx, tb); err != nil {
						if u.failOver(tb, url) {
							tb = nil
							continue
						}
						return err
					}
				}
			}
			var fatal error
			done, fatal = u.guardedWork(ctx, tb, i, url)
			if ctx.Err() != nil {
				return nil // cut off: not checkpointed, redone on resume
			}
			if (fatal != nil || done.failure != nil) && u.failOver(tb, url) {
				tb = nil
				continue // the same page again, in a tab of another browser
			}
			if fatal != nil {
				return fatal
			}
			break
		}
		if tb != nil && (tb.Crashed() || (done.failure != nil && !tb.Healthy())) {
			// A tab stuck on a hostile page is replaced, not reused.
			tb.Release(false)
			tb = nil
		}
		var stored func()
		if u.finished != nil {
			done, stored = u.finished(i, done)
		}
		if err := u.record(ctx, i, url, done); err != nil {
			return err
		}
		if stored != nil {
			stored()
		}
	}
}

// failOver releases tb and reports true when the page that failed in it
// is to be done again in a new tab because tb's browser stopped answering
// and another browser of the pool is up (Session.FailOver). Nothing of the
// page was checkpointed, so it is still done once.
func (u *urlPool) failOver(tb *browser.Tab, url string) bool {
	if tb == nil || u.sess == nil || !u.sess.FailOver(tb) {
		return false
	}
	tb.Release(false)
	u.env.Logger().Info("browser lost mid-page; the page moves to another browser of the pool", "url", url)
	return true
}

// panickedPage is the output of a page whose work panicked: the fields
// every template's page output has, so each one's restore reads it.
type panickedPage struct {
	URL   string        `json:"url"`
	Error *engine.Error `json:"error"`
}

// guardedWork is u.work with a panic contained: the page fails with
// EXECUTION_ERROR "internal error" (engine.InternalError, stack in the
// log) and the run goes on with its other pages.
func (u *urlPool) guardedWork(ctx context.Context, tb *browser.Tab, i int, url string) (done pageDone, fatal error) {
	p := engine.Guard(ctx, u.env.Logger().With("url", url), "templates.urlPool.page", func() {
		done, fatal = u.work(ctx, tb, i, url)
	})
	if p != nil {
		e := engine.InternalError(p)
		return pageDone{out: &panickedPage{URL: url, Error: e}, failure: e}, nil
	}
	return done, fatal
}

// record checkpoints one URL.
func (u *urlPool) record(ctx context.Context, i int, url string, done pageDone) error {
	raw, err := json.Marshal(done.out)
	if err != nil {
		return engine.Wrap(engine.ExecutionError, err, "encode output of %s: %v", url, err)
	}
	it := engine.Item{Index: i, Key: url, Status: engine.ItemSucceeded, Output: raw}
	if done.failure != nil {
		it.Status, it.Error = engine.ItemFailed, done.failure
	}
	// Checkpoints are written one at a time, in the order their progress
	// was counted: written concurrently, an earlier count could land last
	// and the finished run kept showing it (34/35 pages done).
	u.order.Lock()
	defer u.order.Unlock()
	u.mu.Lock()
	if u.indexByDone {
		it.Index = max(u.nextIndex, u.done)
		u.nextIndex = it.Index + 1
	}
	u.outputs[i], u.errs[i], u.itemIdx[i] = u.kept(raw), done.failure, it.Index
	u.done++
	if done.failure != nil {
		u.failed++
	}
	p := u.progressLocked()
	u.mu.Unlock()
	return u.env.Checkpoint(ctx, it, p)
}

// kept is what outputs holds of a checkpointed output (u.mu held).
func (u *urlPool) kept(raw json.RawMessage) json.RawMessage {
	if !u.slim {
		return raw
	}
	out := cutContent(slimOutput(raw), u.cutChars)
	if u.keptBytes+len(out) > maxResultBytes {
		out = withoutFields(out)
	}
	u.keptBytes += len(out)
	return out
}

func (u *urlPool) progress() engine.Progress {
	u.mu.Lock()
	defer u.mu.Unlock()
	return u.progressLocked()
}

func (u *urlPool) progressLocked() engine.Progress {
	msg := fmt.Sprintf("%d/%d pages", u.done, len(u.urls))
	if u.growing {
		msg += " (more may be found)"
	}
	return engine.Progress{DoneSteps: u.done, TotalSteps: len(u.urls), FailedSteps: u.failed, Message: msg}
}

// tally counts the pages by their recorded errors, in list order.
func (u *urlPool) tally() *pageTally {
	u.mu.Lock()
	defer u.mu.Unlock()
	t := &pageTally{}
	for i, e := range u.errs {
		t.count(e, map[string]any{"url": u.urls[i]})
	}
	return t
}

// loadedPage is what loadPage got: the navigation and the page's own
// failure (timeouts, policy refusals, HTTP >= 400; nil when it loaded).
type loadedPage struct {
	nav     browser.NavResult
	failure *engine.Error
}

// loadPage navigates tab tb to url within timeoutMs and waits per waitFor.
// Its error is fatal (the browser is gone); a page that failed is a
// loadedPage with a failure.
func loadPage(ctx context.Context, tb *browser.Tab, url, waitFor string, timeoutMs int) (loadedPage, error) {
	nctx, cancel := context.WithTimeout(ctx, time.Duration(timeoutMs)*time.Millisecond)
	nav, err := tb.Navigate(nctx, url, waitFor)
	cancel()
	if err != nil {
		e := engine.AsError(err)
		if e.Code == engine.ExecutionError && !engine.IsInternal(e) && ctx.Err() == nil {
			return loadedPage{nav: nav}, e
		}
		return loadedPage{nav: nav, failure: e}, nil
	}
	if nav.Status >= 400 {
		return loadedPage{nav: nav, failure: engine.Errorf(engine.StepExecutionFailed, "%s answered HTTP %d %s", url, nav.Status, nav.StatusText).
			WithDetails(map[string]any{"url": url, "httpStatus": nav.Status})}, nil
	}
	return loadedPage{nav: nav}, nil
}
