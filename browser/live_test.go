package browser

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/browsertask/browsertask/engine"
	"github.com/browsertask/browsertask/internal/fixture"
)

// cdpCounter counts the CDP commands a Manager sends, by method.
type cdpCounter struct {
	mu sync.Mutex
	n  map[string]int
}

func (c *cdpCounter) trace(method string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.n[method]++
}

func (c *cdpCounter) count(method string) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.n[method]
}

// nextFrame waits for a frame on ch.
func nextFrame(t *testing.T, ch <-chan engine.LiveFrame) engine.LiveFrame {
	t.Helper()
	ctx, cancel := fixture.Context(t)
	defer cancel()
	select {
	case f, ok := <-ch:
		if !ok {
			t.Fatal("the frame stream ended")
		}
		return f
	case <-ctx.Done():
		t.Fatal("no frame")
	}
	return engine.LiveFrame{}
}

// TestLiveView: a run's tab is filed under the run; with no viewer
// Chromium gets no screencast command while the tab loads and runs
// scripts; a viewer gets JPEG frames that change as the page changes, the
// tab's URL and title; the last viewer leaving stops the screencast; a
// released tab keeps its last frame as a still and refuses input.
func TestLiveView(t *testing.T) {
	srv := fixture.New(t)
	cnt := &cdpCounter{n: map[string]int{}}
	m := newManager(t, Options{CDPTrace: cnt.trace})
	ctx, tb := runTab(t, m, "ses_live", "run_live")
	if _, err := tb.Navigate(ctx, srv.URL("/live/ticker"), WaitLoad); err != nil {
		t.Fatal(err)
	}
	if err := tb.WaitJS(ctx, `Number(document.getElementById('tick').textContent) >= 3`); err != nil {
		t.Fatal(err)
	}
	if n := cnt.count("Page.navigate"); n == 0 {
		t.Fatal("the trace saw no Page.navigate: it does not count commands")
	}
	if n := cnt.count("Page.startScreencast") + cnt.count("Page.screencastFrameAck"); n != 0 {
		t.Fatalf("%d screencast commands with no viewer, want 0", n)
	}

	tabs := m.LiveTabs(ctx, "run_live")
	if len(tabs) != 1 || tabs[0].URL != srv.URL("/live/ticker") || tabs[0].Title != "Ticker" || tabs[0].Closed {
		t.Fatalf("live tabs %+v, want the ticker", tabs)
	}
	if got := m.LiveTabs(ctx, "run_other"); len(got) != 0 {
		t.Fatalf("another run's tabs: %+v", got)
	}

	wctx, unwatch := context.WithCancel(ctx)
	frames, err := m.WatchTab(wctx, "run_live", tabs[0].ID, 640, 400)
	if err != nil {
		t.Fatal(err)
	}
	first := nextFrame(t, frames)
	var second engine.LiveFrame
	for second = nextFrame(t, frames); bytes.Equal(second.JPEG, first.JPEG); second = nextFrame(t, frames) {
	}
	if !bytes.HasPrefix(first.JPEG, []byte{0xff, 0xd8}) || first.Width <= 0 || first.Height <= 0 || second.Seq <= first.Seq {
		t.Fatalf("frames: first %d bytes %gx%g seq %d, second seq %d", len(first.JPEG), first.Width, first.Height, first.Seq, second.Seq)
	}
	if n := cnt.count("Page.startScreencast"); n != 1 {
		t.Fatalf("%d Page.startScreencast with one viewer, want 1", n)
	}
	unwatch()
	waitFor(t, "the screencast to stop", func() bool { return cnt.count("Page.stopScreencast") == 1 })
	if _, ok := <-frames; ok {
		// one frame may have been queued before the stop; the stream ends after it
		if _, ok := <-frames; ok {
			t.Fatal("the stream did not end when its viewer left")
		}
	}

	// Input reaches the page: a click on the ticker's heading area and
	// typed text on a page with a field.
	if err := m.DispatchInput(ctx, "run_live", tabs[0].ID, []engine.LiveInput{{Type: "mousemove", X: 2, Y: 0.5}}); err == nil ||
		!strings.Contains(err.Error(), "fractions") {
		t.Fatalf("out-of-frame input: %v", err)
	}

	tb.Release(true)
	waitFor(t, "the tab to show as closed", func() bool {
		got := m.LiveTabs(ctx, "run_live")
		return len(got) == 1 && got[0].Closed
	})
	if f := m.LiveFrame("run_live", tabs[0].ID); f == nil || len(f.JPEG) == 0 {
		t.Fatal("a closed tab keeps no still")
	}
	if err := m.DispatchInput(ctx, "run_live", tabs[0].ID, []engine.LiveInput{{Type: "text", Text: "x"}}); err == nil {
		t.Fatal("input to a closed tab was accepted")
	}
	if _, err := m.WatchTab(ctx, "run_live", tabs[0].ID, 640, 400); err == nil {
		t.Fatal("watching a closed tab did not fail")
	}
}

// TestLiveInputAndHold: a held run's tab stops at its next call until the
// hold is released, while a person's pointer and keys reach the page
// (the human check passes only with a real pointer sequence).
func TestLiveInputAndHold(t *testing.T) {
	srv := fixture.New(t)
	m := newManager(t, Options{})
	ctx, tb := runTab(t, m, "ses_hold", "run_hold")
	defer tb.Release(false)
	if _, err := tb.Navigate(ctx, srv.URL("/human-check"), WaitLoad); err != nil {
		t.Fatal(err)
	}
	// Automation's own click (one move to the centre) is refused.
	if err := tb.Click(ctx, "#human", 5*time.Second); err != nil {
		t.Fatal(err)
	}
	if err := tb.WaitSelector(ctx, "#refused", 5*time.Second); err != nil {
		t.Fatalf("automation passed the human check: %v", err)
	}

	release := m.HoldRun("run_hold")
	evalDone := make(chan error, 1)
	go func() {
		_, err := tb.Eval(ctx, `1`)
		evalDone <- err
	}()
	select {
	case err := <-evalDone:
		t.Fatalf("the held run's tab answered a call (%v)", err)
	case <-time.After(300 * time.Millisecond):
	}

	raw, err := tb.Page().Context(ctx).Eval(`() => { const r = document.getElementById('human').getBoundingClientRect();
		return JSON.stringify({x: (r.left + r.width / 2) / innerWidth, y: (r.top + r.height / 2) / innerHeight, w: r.width / innerWidth}) }`)
	if err != nil {
		t.Fatal(err)
	}
	var at struct{ X, Y, W float64 }
	if err := json.Unmarshal([]byte(raw.Value.Str()), &at); err != nil {
		t.Fatal(err)
	}
	var evs []engine.LiveInput
	for i := range 5 {
		evs = append(evs, engine.LiveInput{Type: "mousemove", X: at.X - at.W/4 + float64(i)*at.W/10, Y: at.Y})
	}
	evs = append(evs,
		engine.LiveInput{Type: "mousedown", X: at.X, Y: at.Y, Button: "left", Buttons: 1, ClickCount: 1},
		engine.LiveInput{Type: "mouseup", X: at.X, Y: at.Y, Button: "left", ClickCount: 1})
	if err := m.DispatchInput(ctx, "run_hold", tb.live.id, evs); err != nil {
		t.Fatal(err)
	}
	release()
	if err := <-evalDone; err != nil {
		t.Fatal(err)
	}
	if err := tb.WaitSelector(ctx, "#verified", 5*time.Second); err != nil {
		t.Fatalf("the person's click did not pass the check: %v", err)
	}
}

// runTab opens session sessionID of m and takes a tab for run runID, under
// a context marked with the run (as the engine marks a run's context).
func runTab(t *testing.T, m *Manager, sessionID, runID string) (context.Context, *Tab) {
	t.Helper()
	s, err := m.Session(testCtx(t), sessionID)
	if err != nil {
		t.Fatal(err)
	}
	ctx := engine.WithRunID(testCtx(t), runID)
	tb, err := s.AcquireTab(ctx)
	if err != nil {
		t.Fatal(err)
	}
	return ctx, tb
}

// waitFor waits until cond holds (fixture.WaitUntil).
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	fixture.WaitUntil(t, what, cond)
}

// TestLiveInputKeepsTheURLPolicy: a navigation a person causes during a
// takeover is held to the URL policy like the run's own: a click on a link
// to a denied host (the daemon's own port) is refused and the host gets no
// request.
func TestLiveInputKeepsTheURLPolicy(t *testing.T) {
	srv := fixture.New(t)
	var hits atomic.Int32
	denied := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { hits.Add(1) }))
	t.Cleanup(denied.Close)
	deniedHost := strings.TrimPrefix(denied.URL, "http://")
	m := newManager(t, Options{DenyHosts: []string{deniedHost}})
	ctx, tb := runTab(t, m, "ses_policy", "run_policy")
	defer tb.Release(false)
	if _, err := tb.Navigate(ctx, srv.URL("/human-check"), WaitLoad); err != nil {
		t.Fatal(err)
	}
	// The page gets a big link to the denied host in its top left corner.
	if _, err := tb.Eval(ctx, `(document.body.innerHTML = '<a id="away" href="`+denied.URL+`/secret" style="position:fixed;left:0;top:0;width:50vw;height:50vh;display:block">away</a>', true)`); err != nil {
		t.Fatal(err)
	}
	click := []engine.LiveInput{
		{Type: "mousemove", X: 0.2, Y: 0.2},
		{Type: "mousedown", X: 0.2, Y: 0.2, Button: "left", Buttons: 1, ClickCount: 1},
		{Type: "mouseup", X: 0.2, Y: 0.2, Button: "left", ClickCount: 1},
	}
	if err := m.DispatchInput(ctx, "run_policy", tb.live.id, click); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the refusal", func() bool { return tb.Blocked() != nil })
	if n := hits.Load(); n != 0 {
		t.Fatalf("the denied host got %d requests", n)
	}
}
