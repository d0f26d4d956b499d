package browser

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/go-rod/rod"
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

// Navigate loads url in page p (a tab of this session) and waits per
// waitFor ("load" or "" = the load event, "networkidle" = load plus 500 ms
// without requests, else a CSS selector that must match). When ctx ends
// first, the tab's loading is stopped before Navigate returns, so the
// browser stops fetching. The NavResult is filled as far as the page got.
// Errors: NAVIGATION_TIMEOUT (ctx ended before the page loaded),
// ELEMENT_NOT_FOUND (ctx ended while waiting for the selector),
// STEP_EXECUTION_FAILED (network error such as a refused connection, or a
// request of the page refused by the URL policy), TRUST_LEVEL_NOT_ALLOWED
// (trust restricted and the page, a redirect or a sub-request went to an
// internal address),
// INVALID_PARAMETER (bad selector), PAGE_CRASHED, EXECUTION_ERROR (browser
// gone). The caller decides whether ctx's end was its own deadline or a
// cancellation of the run.
func (s *Session) Navigate(ctx context.Context, p *rod.Page, url, waitFor string) (NavResult, error) {
	var (
		mu  sync.Mutex
		res NavResult
	)
	if s.Crashed(p) {
		return res, s.mapErr(ctx, p, errors.New("renderer crashed"), "navigate to "+url)
	}
	s.clearBlocked(p)
	evCtx, stopEvents := s.guard(ctx, p)
	defer stopEvents()
	watch := p.Context(evCtx).EachEvent(func(e *proto.NetworkResponseReceived) {
		if e.Type == proto.NetworkResourceTypeDocument && e.FrameID == p.FrameID && e.Response != nil {
			mu.Lock()
			res.Status, res.StatusText, res.FinalURL = e.Response.Status, e.Response.StatusText, e.Response.URL
			mu.Unlock()
		}
	})
	go watch()
	var idle func()
	if waitFor == WaitNetworkIdle {
		// The browser's own favicon fetch shows up (with request
		// interception on) as a request that never finishes: not the page's.
		idle = p.Context(evCtx).WaitRequestIdle(networkIdleQuiet, nil, []string{`/favicon\.ico(\?|$)`}, nil)
	}
	snapshot := func() NavResult {
		mu.Lock()
		defer mu.Unlock()
		return res
	}

	nav, err := proto.PageNavigate{URL: url}.Call(p.Context(evCtx))
	if err != nil {
		if ctx.Err() != nil && !s.Crashed(p) {
			s.stopLoading(p, true)
			return snapshot(), engine.Wrap(engine.NavigationTimeout, ctx.Err(),
				"%s did not answer before the deadline", url).WithDetails(map[string]any{"url": url})
		}
		return snapshot(), s.mapErr(ctx, p, err, "navigate to "+url)
	}
	if nav.ErrorText != "" {
		if blocked := s.blockedErr(p); blocked != nil {
			return snapshot(), blocked
		}
		if s.Crashed(p) {
			return snapshot(), s.mapErr(ctx, p, errors.New(nav.ErrorText), "navigate to "+url)
		}
		return snapshot(), engine.Errorf(engine.StepExecutionFailed, "navigation to %s failed: %s", url, nav.ErrorText).
			WithDetails(map[string]any{"url": url, "netError": nav.ErrorText})
	}

	switch waitFor {
	case "", WaitLoad, WaitNetworkIdle:
		err = s.evalRetry(ctx, p, waitLoadJS)
		if err == nil && idle != nil {
			idle()
			err = ctx.Err()
		}
	default:
		err = s.evalRetry(ctx, p, waitSelectorJS(waitFor))
	}
	if err == nil && evCtx.Err() != nil {
		err = context.Canceled // the network-idle wait ended by a crash
	}
	if err == nil {
		if blocked := s.blockedErr(p); blocked != nil {
			// The page loaded, but one of its requests (a sub-frame, a
			// script, a client-side redirect) was refused: the page fails.
			return s.finish(ctx, p, snapshot()), blocked
		}
		return s.finish(ctx, p, snapshot()), nil
	}
	if s.Crashed(p) {
		return snapshot(), s.mapErr(ctx, p, err, "load "+url)
	}
	if ctx.Err() != nil {
		s.stopLoading(p, false)
		if waitFor != "" && waitFor != WaitLoad && waitFor != WaitNetworkIdle {
			return snapshot(), engine.Wrap(engine.ElementNotFound, ctx.Err(),
				"%s loaded but no element matched %q before the deadline", url, waitFor).
				WithDetails(map[string]any{"url": url, "waitFor": waitFor})
		}
		return snapshot(), engine.Wrap(engine.NavigationTimeout, ctx.Err(),
			"%s did not finish loading (waitFor %q) before the deadline", url, nonEmptyWait(waitFor)).
			WithDetails(map[string]any{"url": url, "waitFor": nonEmptyWait(waitFor)})
	}
	return snapshot(), err
}

// finish fills FinalURL from the page when no document response was seen
// (for example a page served from cache or a same-document navigation).
func (s *Session) finish(ctx context.Context, p *rod.Page, r NavResult) NavResult {
	if r.FinalURL != "" {
		return r
	}
	if raw, err := s.Eval(ctx, p, `location.href`); err == nil {
		_ = json.Unmarshal(raw, &r.FinalURL)
	}
	return r
}

func nonEmptyWait(w string) string {
	if w == "" {
		return WaitLoad
	}
	return w
}

const waitLoadJS = `new Promise(r => document.readyState === 'complete' ? r(true) : window.addEventListener('load', () => r(true), {once: true}))`

// waitSelectorJS polls for a selector every 50 ms; an invalid selector
// throws at once.
func waitSelectorJS(sel string) string {
	q, _ := json.Marshal(sel)
	return `new Promise((resolve, reject) => { const f = () => { try { if (document.querySelector(` + string(q) +
		`)) return resolve(true) } catch (e) { return reject(e) } setTimeout(f, 50) }; f() })`
}

// evalRetry evaluates a waiting expression, starting over when a navigation
// (such as a client-side redirect) destroys the JavaScript context.
func (s *Session) evalRetry(ctx context.Context, p *rod.Page, expr string) error {
	for {
		_, err := s.Eval(ctx, p, expr)
		if err == nil || ctx.Err() != nil {
			return err
		}
		if !isContextDestroyed(err) {
			return err
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(50 * time.Millisecond):
		}
	}
}

func isContextDestroyed(err error) bool {
	m := err.Error()
	return strings.Contains(m, "context was destroyed") || strings.Contains(m, "Cannot find context") ||
		strings.Contains(m, "Inspected target navigated or closed")
}

// Eval runs a JavaScript expression in the page's main frame in one CDP
// round trip (Runtime.evaluate), awaiting a returned promise, and returns the
// value as JSON. Errors: INVALID_PARAMETER when the script throws a
// SyntaxError (a bad selector), STEP_EXECUTION_FAILED for other exceptions,
// PAGE_CRASHED, EXECUTION_ERROR, or ctx's error.
func (s *Session) Eval(ctx context.Context, p *rod.Page, expr string) (json.RawMessage, error) {
	if s.Crashed(p) {
		return nil, s.mapErr(ctx, p, errors.New("renderer crashed"), "evaluate script")
	}
	gctx, cancel := s.guard(ctx, p)
	defer cancel()
	r, err := proto.RuntimeEvaluate{Expression: expr, AwaitPromise: true, ReturnByValue: true}.Call(p.Context(gctx))
	if err != nil {
		if s.Crashed(p) {
			return nil, s.mapErr(ctx, p, err, "evaluate script")
		}
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		if isContextDestroyed(err) {
			return nil, err
		}
		return nil, s.mapErr(ctx, p, err, "evaluate script")
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

// mapErr turns a CDP failure into a domain error: PAGE_CRASHED when the
// tab's renderer crashed, EXECUTION_ERROR (browser gone or other), or ctx's
// error when ctx ended.
func (s *Session) mapErr(ctx context.Context, p *rod.Page, err error, what string) error {
	if p != nil && s.Crashed(p) {
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
