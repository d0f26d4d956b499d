package browser

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/browsertask/browsertask/engine"
	"github.com/browsertask/browsertask/internal/fixture"
)

func TestTabPoolReusesAndCaps(t *testing.T) {
	srv := fixture.New(t)
	m := newManager(t, Options{MaxTabsPerSession: 2})
	ctx := testCtx(t)
	s, err := m.Session(ctx, "sess_pool")
	if err != nil {
		t.Fatal(err)
	}
	if s.MaxTabs() != 2 {
		t.Fatalf("MaxTabs = %d", s.MaxTabs())
	}
	tb1, err := s.AcquireTab(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tb1.Navigate(ctx, srv.URL("/page/1"), WaitLoad); err != nil {
		t.Fatal(err)
	}
	tb2, err := s.AcquireTab(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if tb1.Page().TargetID == tb2.Page().TargetID {
		t.Fatal("two holders got the same tab")
	}
	// The session is full: a third acquire waits until its context ends.
	short, cancel := context.WithTimeout(ctx, 300*time.Millisecond)
	defer cancel()
	if _, err := s.AcquireTab(short); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("third acquire = %v, want deadline exceeded", err)
	}
	tb1.Release(true)
	tb3, err := s.AcquireTab(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if tb3.Page().TargetID != tb1.Page().TargetID {
		t.Fatalf("released tab not reused: got %s want %s", tb3.Page().TargetID, tb1.Page().TargetID)
	}
	if raw, err := tb3.Eval(ctx, `location.href`); err != nil || string(raw) != `"about:blank"` {
		t.Fatalf("reused tab not reset: %s %v", raw, err)
	}
	tb3.Release(true)
	tb2.Release(false) // closed, not pooled
	waitReleased(t, s)
	s.mu.Lock()
	idle, open := len(s.idle), len(s.tabs)
	s.mu.Unlock()
	if idle != 1 || open != 1 {
		t.Fatalf("idle=%d open=%d, want 1 and 1", idle, open)
	}
}

// TestCancelStopsFetching proves the 2 s rule: cancelling the context of a
// navigation to a page that never answers returns at once and the browser
// drops the request (the server sees the client go away).
func TestCancelStopsFetching(t *testing.T) {
	srv := fixture.New(t)
	m := newManager(t, Options{})
	ctx := testCtx(t)
	s, err := m.Session(ctx, "sess_cancel")
	if err != nil {
		t.Fatal(err)
	}
	runCtx, cancelRun := context.WithCancel(ctx)
	tb, err := s.AcquireTab(runCtx)
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() {
		_, err := tb.Navigate(runCtx, srv.URL("/hang"), WaitLoad)
		done <- err
	}()
	select {
	case <-srv.Hung():
	case <-ctx.Done():
		t.Fatal("the browser never requested /hang")
	}
	canceledAt := time.Now()
	cancelRun()
	select {
	case err := <-done:
		if took := time.Since(canceledAt); took > 2*time.Second {
			t.Fatalf("Navigate returned %s after cancel", took)
		}
		if engine.CodeOf(err) != engine.NavigationTimeout || !errors.Is(err, context.Canceled) {
			t.Fatalf("err = %v", err)
		}
	case <-time.After(2 * time.Second):
		t.Fatal("Navigate still blocked 2 s after cancel")
	}
	select {
	case at := <-srv.Aborted():
		if d := at.Sub(canceledAt); d > 2*time.Second {
			t.Fatalf("browser stopped fetching %s after cancel", d)
		}
	case <-time.After(2 * time.Second):
		t.Fatal("the browser kept fetching /hang 2 s after cancel")
	}
	tb.Release(true)
	// The session still works afterwards.
	tb2, err := s.AcquireTab(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer tb2.Release(true)
	if r, err := tb2.Navigate(ctx, srv.URL("/page/2"), WaitLoad); err != nil || r.Status != 200 {
		t.Fatalf("after cancel: %+v %v", r, err)
	}
}

func TestNavigateDeadlines(t *testing.T) {
	srv := fixture.New(t)
	m := newManager(t, Options{})
	ctx := testCtx(t)
	s, err := m.Session(ctx, "sess_deadline")
	if err != nil {
		t.Fatal(err)
	}
	tb, err := s.AcquireTab(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer tb.Release(true)
	nav := func(path, waitFor string, d time.Duration) (NavResult, time.Duration, error) {
		c, cancel := context.WithTimeout(ctx, d)
		defer cancel()
		start := time.Now()
		r, err := tb.Navigate(c, srv.URL(path), waitFor)
		return r, time.Since(start), err
	}

	// A main document that never answers: NAVIGATION_TIMEOUT, request aborted.
	r, took, err := nav("/hang", WaitLoad, time.Second)
	if engine.CodeOf(err) != engine.NavigationTimeout || took > 2500*time.Millisecond || r.Status != 0 {
		t.Fatalf("/hang: %+v %v after %s", r, err, took)
	}
	select {
	case <-srv.Aborted():
	case <-time.After(2 * time.Second):
		t.Fatal("/hang not aborted after the deadline")
	}

	// A hanging sub-resource: the document arrives (200) but load never fires.
	r, _, err = nav("/static/hanging-subresource.html", WaitLoad, time.Second)
	if engine.CodeOf(err) != engine.NavigationTimeout || r.Status != 200 {
		t.Fatalf("hanging subresource with load: %+v %v", r, err)
	}
	select {
	case <-srv.Aborted():
	case <-time.After(2 * time.Second):
		t.Fatal("hanging sub-resource not aborted after the deadline")
	}
	// ... and the DOM is still there to extract.
	if raw, err := tb.Eval(ctx, `document.querySelector('#name').textContent`); err != nil || string(raw) != `"Almost loaded"` {
		t.Fatalf("partial DOM: %s %v", raw, err)
	}

	// Waiting for a selector does not need the load event.
	r, _, err = nav("/static/hanging-subresource.html", "#name", 5*time.Second)
	if err != nil || r.Status != 200 {
		t.Fatalf("selector wait: %+v %v", r, err)
	}
	r, _, err = nav("/static/delayed-element.html", "#late", 5*time.Second)
	if err != nil || r.Status != 200 {
		t.Fatalf("delayed selector: %+v %v", r, err)
	}
	select { // the next navigation dropped the hanging image
	case <-srv.Aborted():
	case <-time.After(2 * time.Second):
		t.Fatal("navigating away did not abort the hanging sub-resource")
	}
	_, _, err = nav("/page/1", "#missing", 700*time.Millisecond)
	if engine.CodeOf(err) != engine.ElementNotFound {
		t.Fatalf("missing selector: %v", err)
	}
	_, _, err = nav("/page/1", "#[bad", 2*time.Second)
	if engine.CodeOf(err) != engine.InvalidParameter {
		t.Fatalf("invalid selector: %v", err)
	}
	r, _, err = nav("/page/4", WaitNetworkIdle, 5*time.Second)
	if err != nil || r.Status != 200 {
		t.Fatalf("networkidle: %+v %v", r, err)
	}
	// Connection refused: a failed item, not a timeout.
	_, err = tb.Navigate(ctx, "http://127.0.0.1:1/", WaitLoad)
	if engine.CodeOf(err) != engine.StepExecutionFailed {
		t.Fatalf("refused: %v", err)
	}
}
