package browser

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/go-rod/rod/lib/proto"

	"github.com/browsertask/browsertask/engine"
)

// Wait conditions for Navigate; any other non-empty value is a CSS selector.
const (
	WaitLoad        = "load"
	WaitNetworkIdle = "networkidle"
)

// networkIdleQuiet is how long no request may be in flight for networkidle.
const networkIdleQuiet = 500 * time.Millisecond

// NavResult is what a navigation produced.
type NavResult struct {
	// Status is the main document's final HTTP status (0 if none arrived).
	Status int
	// StatusText is the status line's reason phrase, when the server sent one.
	StatusText string
	// FinalURL is the main document's URL after redirects.
	FinalURL string
}

// Navigate loads url in the tab and waits per
// waitFor ("load" or "" = the load event, "networkidle" = load plus 500 ms
// without requests, else a CSS selector that must match). When ctx ends
// first, the tab's loading is stopped before Navigate returns, so the
// browser stops fetching. The NavResult is filled as far as the page got.
//
// The HTTP status and final URL come from the loaded document itself (its
// navigation timing entry and location), read by the same script that waits
// for it: tabs do not enable the Network domain, whose events would cost
// every page of every run (networkidle turns it on for its own navigation).
//
// Errors: NAVIGATION_TIMEOUT (ctx ended before the page loaded),
// ELEMENT_NOT_FOUND (ctx ended while waiting for the selector),
// STEP_EXECUTION_FAILED (network error such as a refused connection, or a
// request of the page refused by the URL policy), TRUST_LEVEL_NOT_ALLOWED
// (trust restricted and the page, a redirect or a sub-request went to an
// internal address); a refusal by the URL policy wins over the deadline,
// which a page that made a refused request may then also miss;
// INVALID_PARAMETER (bad selector), PAGE_CRASHED, EXECUTION_ERROR (browser
// gone). The caller decides whether ctx's end was its own deadline or a
// cancellation of the run.
func (tb *Tab) Navigate(ctx context.Context, url, waitFor string) (NavResult, error) {
	res, _, err := tb.NavigateThen(ctx, url, waitFor, "")
	return res, err
}

// NavigateThen is Navigate that also evaluates the JavaScript expression
// then in the loaded document, in the same Runtime.evaluate as the wait (one
// CDP round trip less per page), and returns its value as JSON. The value is
// nil when then is empty, when the wait did not succeed, or when then threw
// (the caller evaluates it again on its own to get the error).
func (tb *Tab) NavigateThen(ctx context.Context, url, waitFor, then string) (NavResult, json.RawMessage, error) {
	var res NavResult
	if tb.Crashed() {
		return res, nil, tb.mapErr(ctx, errors.New("renderer crashed"), "navigate to "+url)
	}
	// A new navigation starts: the previous page's refusals are forgotten,
	// once the decisions still under way for its requests have landed.
	tb.t.verdicts.wait(ctx, resetTimeout)
	tb.t.blocked.Store(nil)
	evCtx, stopEvents := tb.guard(ctx)
	defer stopEvents()
	var idle func()
	if waitFor == WaitNetworkIdle {
		if err := (proto.NetworkEnable{}).Call(tb.client(evCtx)); err != nil {
			return res, nil, tb.mapErr(ctx, err, "watch the network of "+url)
		}
		defer func() {
			if tb.t.identity.Load() {
				return // SetIdentity's extra headers need the domain on
			}
			c, cancel := context.WithTimeout(context.Background(), resetTimeout)
			defer cancel()
			_ = proto.NetworkDisable{}.Call(tb.client(c))
		}()
		// The browser's own favicon fetch shows up (with request
		// interception on) as a request that never finishes: not the page's.
		idle = tb.client(evCtx).WaitRequestIdle(networkIdleQuiet, nil, []string{`/favicon\.ico(\?|$)`}, nil)
	}

	// The main frame's record starts over with this navigation (see
	// overtaken).
	tb.t.docs.reset()
	retried := false
again:
	nav, err := proto.PageNavigate{URL: url}.Call(tb.client(evCtx))
	if err != nil {
		if ctx.Err() != nil && !tb.Crashed() {
			if !engine.ShuttingDown(ctx) {
				tb.stopLoading(true)
			}
			if blocked := tb.refusal(ctx); blocked != nil {
				return res, nil, blocked
			}
			return res, nil, engine.Wrap(engine.NavigationTimeout, ctx.Err(),
				"%s did not answer before the deadline", url).WithDetails(map[string]any{"url": url})
		}
		return res, nil, tb.mapErr(ctx, err, "navigate to "+url)
	}
	if nav.ErrorText != "" {
		if blocked := tb.t.blocked.Load(); blocked != nil {
			return res, nil, blocked
		}
		if tb.Crashed() {
			return res, nil, tb.mapErr(ctx, errors.New(nav.ErrorText), "navigate to "+url)
		}
		return res, nil, engine.Errorf(engine.StepExecutionFailed, "navigation to %s failed: %s", url, nav.ErrorText).
			WithDetails(map[string]any{"url": url, "netError": nav.ErrorText})
	}

	var raw json.RawMessage
	switch waitFor {
	case "", WaitLoad, WaitNetworkIdle:
		raw, err = tb.evalRetry(ctx, waitLoadJS(then))
		if err == nil && idle != nil {
			idle()
			err = ctx.Err()
		}
	default:
		raw, err = tb.evalRetry(ctx, waitSelectorJS(waitFor, then))
	}
	if err == nil && evCtx.Err() != nil {
		err = context.Canceled // the network-idle wait ended by a crash
	}
	if err == nil {
		var thenVal json.RawMessage
		res, thenVal = parseNavInfo(raw)
		if res.FinalURL != url && nav.LoaderID != "" && !retried && tb.overtaken(evCtx, nav.LoaderID) {
			// A navigation the previous document had started replaced
			// this one's document: load url again, once. Its refusals
			// were the stale document's.
			retried = true
			tb.t.verdicts.wait(ctx, resetTimeout)
			tb.t.blocked.Store(nil)
			goto again
		}
		if blocked := tb.t.blocked.Load(); blocked != nil {
			// The page loaded, but one of its requests (a sub-frame, a
			// script, a client-side redirect) was refused: the page fails.
			return res, nil, blocked
		}
		return res, thenVal, nil
	}
	if tb.Crashed() {
		return res, nil, tb.mapErr(ctx, err, "load "+url)
	}
	if ctx.Err() != nil {
		if !engine.ShuttingDown(ctx) {
			tb.stopLoading(false)
		}
		if blocked := tb.refusal(ctx); blocked != nil {
			return res, nil, blocked
		}
		if nav.LoaderID != "" && errors.Is(context.Cause(ctx), context.DeadlineExceeded) {
			// Page.navigate answered, so the document arrived: say what it is.
			res = tb.navInfo()
		}
		if waitFor != "" && waitFor != WaitLoad && waitFor != WaitNetworkIdle {
			return res, nil, engine.Wrap(engine.ElementNotFound, ctx.Err(),
				"%s loaded but no element matched %q before the deadline", url, waitFor).
				WithDetails(map[string]any{"url": url, "waitFor": waitFor})
		}
		return res, nil, engine.Wrap(engine.NavigationTimeout, ctx.Err(),
			"%s did not finish loading (waitFor %q) before the deadline", url, nonEmptyWait(waitFor)).
			WithDetails(map[string]any{"url": url, "waitFor": nonEmptyWait(waitFor)})
	}
	return res, nil, err
}

// refusal returns the tab's refusal by the URL policy (nil if none) once a
// navigation's ctx ended: a page that made a refused request fails with
// that refusal, not with the deadline it then missed (a blocked frame or
// redirect can leave the page loading until then). When the deadline
// passed, the decisions still under way land first (bounded, with a fresh
// deadline); a cancelled navigation does not wait for them.
func (tb *Tab) refusal(ctx context.Context) *engine.Error {
	if errors.Is(context.Cause(ctx), context.DeadlineExceeded) {
		tb.t.verdicts.wait(context.Background(), resetTimeout)
	}
	return tb.t.blocked.Load()
}

// navInfo reads the status and URL of the tab's current document with a
// short deadline of its own (the caller's has passed); zero if it cannot.
func (tb *Tab) navInfo() NavResult {
	c, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	raw, err := tb.Eval(c, navInfoJS(""))
	if err != nil {
		return NavResult{}
	}
	r, _ := parseNavInfo(raw)
	return r
}

// parseNavInfo decodes navInfoJS's [status, url, then]. A status of 0 (no
// navigation timing entry, or a file: URL) is reported as 0; then's value
// is nil when it threw.
func parseNavInfo(raw json.RawMessage) (NavResult, json.RawMessage) {
	var v []json.RawMessage
	var r NavResult
	if json.Unmarshal(raw, &v) != nil || len(v) < 2 {
		return r, nil
	}
	if json.Unmarshal(v[0], &r.Status) == nil && r.Status > 0 {
		r.StatusText = http.StatusText(r.Status)
	}
	_ = json.Unmarshal(v[1], &r.FinalURL)
	if len(v) < 3 || string(v[2]) == "null" {
		return r, nil
	}
	var failed struct {
		Err *string `json:"__browsertaskThenError"`
	}
	if json.Unmarshal(v[2], &failed) == nil && failed.Err != nil {
		return r, nil
	}
	return r, v[2]
}

func nonEmptyWait(w string) string {
	if w == "" {
		return WaitLoad
	}
	return w
}

// navInfoJS is the current document's [HTTP status, URL, then]: the status
// of the response it was loaded from (after redirects), as its navigation
// timing entry records it, and the value of the expression then (null when
// empty, {__browsertaskThenError} when it throws).
func navInfoJS(then string) string {
	status := `(performance.getEntriesByType('navigation')[0] || {}).responseStatus || 0`
	if then == "" {
		return `[` + status + `, location.href]`
	}
	return `[` + status + `, location.href, (() => { try { return (` + then + `) } catch (e) { return {__browsertaskThenError: String((e && e.message) || e)} } })()]`
}

// waitLoadJS waits for the load event, then answers navInfoJS(then).
func waitLoadJS(then string) string {
	return `new Promise(r => { const f = () => r(` + navInfoJS(then) + `); document.readyState === 'complete' ? f() : window.addEventListener('load', f, {once: true}) })`
}

// waitSelectorJS polls for a selector every 50 ms, then answers
// navInfoJS(then); an invalid selector throws at once.
func waitSelectorJS(sel, then string) string {
	q, _ := json.Marshal(sel)
	return `new Promise((resolve, reject) => { const f = () => { try { if (document.querySelector(` + string(q) +
		`)) return resolve(` + navInfoJS(then) + `) } catch (e) { return reject(e) } setTimeout(f, 50) }; f() })`
}

// evalRetry evaluates a waiting expression, starting over when a navigation
// (such as a client-side redirect) destroys the JavaScript context.
func (tb *Tab) evalRetry(ctx context.Context, expr string) (json.RawMessage, error) {
	for {
		raw, err := tb.Eval(ctx, expr)
		if err == nil || ctx.Err() != nil {
			return raw, err
		}
		if !isContextDestroyed(err) {
			return nil, err
		}
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-time.After(50 * time.Millisecond):
		}
	}
}

func isContextDestroyed(err error) bool {
	m := err.Error()
	return strings.Contains(m, "context was destroyed") || strings.Contains(m, "Cannot find context") ||
		strings.Contains(m, "Inspected target navigated or closed")
}

// Eval runs a JavaScript expression in the tab's main frame in one CDP
// round trip (Runtime.evaluate), awaiting a returned promise, and returns the
// value as JSON. Errors: INVALID_PARAMETER when the script throws a
// SyntaxError (a bad selector), STEP_EXECUTION_FAILED for other exceptions,
// PAGE_CRASHED, EXECUTION_ERROR, or ctx's error.
func (tb *Tab) Eval(ctx context.Context, expr string) (json.RawMessage, error) {
	if tb.Crashed() {
		return nil, tb.mapErr(ctx, errors.New("renderer crashed"), "evaluate script")
	}
	gctx, cancel := tb.guard(ctx)
	defer cancel()
	r, err := proto.RuntimeEvaluate{Expression: expr, AwaitPromise: true, ReturnByValue: true}.Call(tb.client(gctx))
	if err != nil {
		if tb.Crashed() {
			return nil, tb.mapErr(ctx, err, "evaluate script")
		}
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		if isContextDestroyed(err) {
			return nil, err
		}
		return nil, tb.mapErr(ctx, err, "evaluate script")
	}
	if d := r.ExceptionDetails; d != nil {
		msg := d.Text
		if d.Exception != nil && d.Exception.Description != "" {
			msg = d.Exception.Description
		}
		if strings.Contains(msg, "context was destroyed") {
			return nil, errors.New(msg)
		}
		if strings.Contains(msg, "SyntaxError") || strings.Contains(msg, "is not a valid selector") {
			return nil, engine.Errorf(engine.InvalidParameter, "script failed: %s", firstLine(msg))
		}
		return nil, engine.Errorf(engine.StepExecutionFailed, "script failed: %s", firstLine(msg))
	}
	if r.Result == nil {
		return json.RawMessage("null"), nil
	}
	raw, err := json.Marshal(r.Result.Value)
	if err != nil {
		return nil, engine.Wrap(engine.ExecutionError, err, "decode script result: %v", err)
	}
	return raw, nil
}

func firstLine(s string) string {
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		return s[:i]
	}
	return s
}

// mapErr turns a CDP failure into a domain error: PAGE_CRASHED when tab t
// (nil for calls not addressed to a tab) crashed, EXECUTION_ERROR (browser
// gone or other), or ctx's error when ctx ended.
func (s *Session) mapErr(ctx context.Context, t *tab, err error, what string) error {
	if t != nil && t.crashed.Load() {
		return engine.Wrap(engine.PageCrashed, err, "the tab's renderer crashed during %s", what)
	}
	if ctx.Err() != nil {
		return context.Cause(ctx)
	}
	if !s.in.alive(s.gen) {
		return engine.Wrap(engine.ExecutionError, err, "the browser exited during %s", what)
	}
	return engine.Wrap(engine.ExecutionError, err, "%s: %v", what, err)
}

// String describes a NavResult for logs.
func (r NavResult) String() string {
	return fmt.Sprintf("%d %s", r.Status, r.FinalURL)
}

// docEventsLag bounds how long overtaken waits for the browser's events
// about a document it already saw in the frame tree (they travel on the
// same connection, ahead of the frame tree's answer, but are handed over
// separately).
const docEventsLag = 200 * time.Millisecond

// overtaken reports whether the document Page.navigate committed (loader
// ours) was replaced by a navigation it did not ask for: one the previous
// document had asked for before it was unloaded (a meta refresh or a
// script's timer firing just as the new page arrived). The browser lets
// such a navigation, started after the new document was ready to commit,
// commit after it, so the wait ends in that stale document. A navigation
// the new document asks for itself (a client-side redirect) is its own
// and is not reported. It costs one Page.getFrameTree and is asked only
// when the page ended on another URL than the one requested.
func (tb *Tab) overtaken(ctx context.Context, ours proto.NetworkLoaderID) bool {
	tree, err := proto.PageGetFrameTree{}.Call(tb.client(ctx))
	if err != nil || tree.FrameTree == nil || tree.FrameTree.Frame == nil {
		return false
	}
	cur := tree.FrameTree.Frame.LoaderID
	if cur == ours {
		return false // the same document (an HTTP redirect, a same-document change)
	}
	c, cancel := context.WithTimeout(ctx, docEventsLag)
	defer cancel()
	return tb.t.docs.overtaken(c, ours, cur)
}

// docLog is what a tab's main frame reported since its holder's last
// navigation started, in the order the browser sent it: the documents it
// committed (Page.frameNavigated, by loader id) and the navigations its
// documents asked for (Page.frameRequestedNavigation, loader "").
type docLog struct {
	mu     sync.Mutex
	events []proto.NetworkLoaderID
	// changed is closed and replaced when an event is added.
	changed chan struct{}
}

// docLogCap bounds a docLog between navigations (a page that keeps
// navigating); the oldest events are dropped.
const docLogCap = 64

// reset forgets the events so far.
func (d *docLog) reset() {
	d.mu.Lock()
	d.events = d.events[:0]
	d.mu.Unlock()
}

// add records a committed document (loader) or a requested navigation ("").
func (d *docLog) add(loader proto.NetworkLoaderID) {
	d.mu.Lock()
	if len(d.events) == docLogCap {
		d.events = append(d.events[:0], d.events[1:]...)
	}
	d.events = append(d.events, loader)
	if d.changed != nil {
		close(d.changed)
		d.changed = nil
	}
	d.mu.Unlock()
}

// overtaken reports whether the document committed right after document
// ours did so without ours asking for a navigation first. It waits (until
// ctx ends) for the commit of document cur, the frame's current one, to be
// recorded; false when it is not, or ours is not recorded before it.
func (d *docLog) overtaken(ctx context.Context, ours, cur proto.NetworkLoaderID) bool {
	for {
		d.mu.Lock()
		stale, known := d.verdict(ours, cur)
		if known {
			d.mu.Unlock()
			return stale
		}
		if d.changed == nil {
			d.changed = make(chan struct{})
		}
		ch := d.changed
		d.mu.Unlock()
		select {
		case <-ch:
		case <-ctx.Done():
			return false
		}
	}
}

// verdict is overtaken on the events recorded so far; known is false
// while cur's commit is not among them. d.mu is held.
func (d *docLog) verdict(ours, cur proto.NetworkLoaderID) (stale, known bool) {
	j := slices.Index(d.events, cur)
	if j < 0 {
		return false, false
	}
	i := slices.Index(d.events, ours)
	if i < 0 || i > j {
		return false, true
	}
	// The event after ours' commit exists (cur's commit is later): a
	// request means ours asked to leave; a commit means it was overtaken.
	return d.events[i+1] != "", true
}

// watchDocs records tab t's main-frame commits and requested navigations
// in t.docs until its renderer crashes or it is closed.
func (s *Session) watchDocs(t *tab) {
	main := t.page.FrameID
	wait := t.page.Context(t.crash).EachEvent(
		func(e *proto.PageFrameNavigated) {
			if e.Frame != nil && e.Frame.ParentID == "" {
				t.docs.add(e.Frame.LoaderID)
			}
		},
		func(e *proto.PageFrameRequestedNavigation) {
			if e.FrameID == main {
				t.docs.add("")
			}
		},
	)
	s.goTab(t, "browser.watchDocs", wait)
}
