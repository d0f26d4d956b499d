package browser

import (
	"context"
	"sync"
	"time"

	"github.com/go-rod/rod"
	"github.com/go-rod/rod/lib/proto"

	"github.com/browsertask/browsertask/engine"
)

// Live views. Every tab a run holds is filed under the run (the engine
// marks a run's context with its id: engine.RunIDFrom); a viewer watching
// a tab starts a CDP screencast on it (Page.startScreencast, JPEG frames
// scaled to the viewer, each acknowledged so Chromium paces itself), and
// the last viewer leaving stops it: with nobody watching, Chromium
// receives no screencast command at all. A person taking over holds the
// run (Hold): the run's tabs stop at their next CDP call until released,
// while the person's input is dispatched to the tab (Dispatch). The
// frames live in memory only: the last one of each tab stays as a still
// once the tab closes, for as long as the run's entry is kept.

// Frame quality and the viewer size bounds.
const (
	liveQuality  = 70
	liveMaxSide  = 1920
	liveMinSide  = 160
	liveKeepRuns = 64 // runs whose tabs are remembered (oldest without open tabs dropped first)
	liveKeepShut = 8  // closed tabs remembered per run (their stills)
)

// liveRegistry files the tabs of the runs this process executes.
type liveRegistry struct {
	mu    sync.Mutex
	runs  map[string]*liveRun
	order []string // run ids, oldest first
}

// liveRun is one run's tabs and its hold.
type liveRun struct {
	tabs []*liveTab
	// holds counts the takeovers under way; released is closed when it
	// drops back to 0 (nil while 0).
	holds    int
	released chan struct{}
}

// liveTab is one tab of a run, open or closed.
type liveTab struct {
	runID string
	id    string
	s     *Session
	t     *tab

	mu      sync.Mutex
	closed  bool
	viewers map[chan engine.LiveFrame]struct{}
	stop    context.CancelFunc // ends the screencast's event loop (nil while none runs)
	last    *engine.LiveFrame
	seq     int64
	// url and title are the last known (kept for a closed tab), masked
	// with redact, the run's secrets masker, as they are read.
	url, title string
	redact     engine.Redactor
	// label is the holder's name for the tab (engine.LiveTab.Label).
	label string
}

func newLiveRegistry() *liveRegistry { return &liveRegistry{runs: map[string]*liveRun{}} }

// open files a tab acquired for run runID, whose secrets redact masks.
func (l *liveRegistry) open(runID string, s *Session, t *tab, redact engine.Redactor) *liveTab {
	lt := &liveTab{runID: runID, id: string(t.page.TargetID), s: s, t: t, viewers: map[chan engine.LiveFrame]struct{}{}, redact: redact}
	l.mu.Lock()
	defer l.mu.Unlock()
	r := l.runs[runID]
	if r == nil {
		r = &liveRun{}
		l.runs[runID] = r
		l.order = append(l.order, runID)
		l.trimLocked()
	}
	// A pooled tab handed out again to the same run replaces its entry.
	for i, o := range r.tabs {
		if o.id == lt.id {
			r.tabs = append(r.tabs[:i], r.tabs[i+1:]...)
			break
		}
	}
	r.tabs = append(r.tabs, lt)
	return lt
}

// trimLocked forgets the oldest runs without open tabs beyond liveKeepRuns.
func (l *liveRegistry) trimLocked() {
	for i := 0; len(l.runs) > liveKeepRuns && i < len(l.order); {
		id := l.order[i]
		if l.runs[id].openTabs() == 0 && l.runs[id].holds == 0 {
			delete(l.runs, id)
			l.order = append(l.order[:i], l.order[i+1:]...)
			continue
		}
		i++
	}
}

// openTabs counts the run's open tabs.
func (r *liveRun) openTabs() int {
	n := 0
	for _, t := range r.tabs {
		t.mu.Lock()
		if !t.closed {
			n++
		}
		t.mu.Unlock()
	}
	return n
}

// close marks a released tab closed: its screencast stops, its viewers'
// streams end, its last frame stays as a still.
func (l *liveRegistry) close(lt *liveTab) {
	lt.mu.Lock()
	if lt.closed {
		lt.mu.Unlock()
		return
	}
	lt.closed = true
	stop := lt.stop
	lt.stop = nil
	for ch := range lt.viewers {
		close(ch)
	}
	lt.viewers = map[chan engine.LiveFrame]struct{}{}
	lt.mu.Unlock()
	if stop != nil {
		lt.stopCast(stop)
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if r := l.runs[lt.runID]; r != nil {
		var shut []*liveTab
		for _, t := range r.tabs {
			t.mu.Lock()
			if t.closed {
				shut = append(shut, t)
			}
			t.mu.Unlock()
		}
		for len(shut) > liveKeepShut {
			for i, t := range r.tabs {
				if t == shut[0] {
					r.tabs = append(r.tabs[:i], r.tabs[i+1:]...)
					break
				}
			}
			shut = shut[1:]
		}
	}
}

// tab finds tab tabID of run runID.
func (l *liveRegistry) tab(runID, tabID string) *liveTab {
	l.mu.Lock()
	defer l.mu.Unlock()
	if r := l.runs[runID]; r != nil {
		for _, t := range r.tabs {
			if t.id == tabID {
				return t
			}
		}
	}
	return nil
}

// waitHeld returns once run runID is not held by a takeover, or ctx ended.
func (l *liveRegistry) waitHeld(ctx context.Context, runID string) {
	if runID == "" {
		return
	}
	l.mu.Lock()
	var ch chan struct{}
	if r := l.runs[runID]; r != nil {
		ch = r.released
	}
	l.mu.Unlock()
	if ch == nil {
		return
	}
	select {
	case <-ch:
	case <-ctx.Done():
	}
}

// LiveTabs lists the tabs of run runID this process holds or held (open
// first, in the order they were opened; then the closed ones kept as
// stills). The URL and title of an open tab are asked of the browser.
func (m *Manager) LiveTabs(ctx context.Context, runID string) []engine.LiveTab {
	m.live.mu.Lock()
	var tabs []*liveTab
	if r := m.live.runs[runID]; r != nil {
		tabs = append(tabs, r.tabs...)
	}
	m.live.mu.Unlock()
	open, shut := []engine.LiveTab{}, []engine.LiveTab{}
	for _, lt := range tabs {
		lt.refreshInfo(ctx)
		lt.mu.Lock()
		v := engine.LiveTab{ID: lt.id, URL: lt.url, Title: lt.title, Label: lt.label, Closed: lt.closed}
		lt.mu.Unlock()
		if v.Closed {
			shut = append(shut, v)
		} else {
			open = append(open, v)
		}
	}
	return append(open, shut...)
}

// refreshInfo reads an open tab's URL and title (Target.getTargetInfo:
// answered by the browser process, even while the renderer is busy).
func (lt *liveTab) refreshInfo(ctx context.Context) {
	lt.mu.Lock()
	closed := lt.closed
	lt.mu.Unlock()
	if closed || lt.t.crashed.Load() {
		return
	}
	c, cancel := context.WithTimeout(ctx, time.Second)
	defer cancel()
	info, err := proto.TargetGetTargetInfo{TargetID: lt.t.page.TargetID}.Call(lt.s.b.Context(c))
	if err != nil || info.TargetInfo == nil {
		return
	}
	// Masked now, while the run's secrets are known: a form sent with GET
	// puts a typed secret in the address.
	u, title := lt.redact(info.TargetInfo.URL), lt.redact(info.TargetInfo.Title)
	lt.mu.Lock()
	lt.url, lt.title = u, title
	lt.mu.Unlock()
}

// LiveFrame returns the last frame of a tab of run runID (nil when none
// was taken: nobody watched it yet).
func (m *Manager) LiveFrame(runID, tabID string) *engine.LiveFrame {
	lt := m.live.tab(runID, tabID)
	if lt == nil {
		return nil
	}
	lt.mu.Lock()
	defer lt.mu.Unlock()
	return lt.last
}

// WatchTab streams the frames of tab tabID of run runID, scaled to fit
// width × height, until ctx ends or the tab closes (the channel is closed
// then). The first viewer starts the tab's screencast, the last one
// leaving stops it; a slow viewer gets the newest frame, never a backlog.
// Errors: INVALID_PARAMETER for an unknown tab (or one closed already).
func (m *Manager) WatchTab(ctx context.Context, runID, tabID string, width, height int) (<-chan engine.LiveFrame, error) {
	lt := m.live.tab(runID, tabID)
	if lt == nil {
		return nil, engine.Errorf(engine.InvalidParameter, "run %s has no tab %q in this process", runID, tabID).
			WithDetails(map[string]any{"field": "tab"})
	}
	ch := make(chan engine.LiveFrame, 1)
	lt.mu.Lock()
	if lt.closed {
		lt.mu.Unlock()
		return nil, engine.Errorf(engine.InvalidParameter, "tab %q of run %s is closed", tabID, runID).
			WithDetails(map[string]any{"field": "tab"})
	}
	lt.viewers[ch] = struct{}{}
	first := lt.stop == nil
	var castCtx context.Context
	if first {
		castCtx, lt.stop = context.WithCancel(engine.CarryFaults(context.Background(), ctx))
	}
	if lt.last != nil {
		ch <- *lt.last
	}
	lt.mu.Unlock()
	if first {
		w, h := clampSide(width), clampSide(height)
		engine.Go(castCtx, m.log, "browser.live.start", func() { lt.startCast(castCtx, w, h, m) }, nil)
	}
	context.AfterFunc(ctx, func() { lt.unwatch(ch) })
	return ch, nil
}

// Backoff of startCast's attempts.
const (
	castRetryFirst = 250 * time.Millisecond
	castRetryMax   = 5 * time.Second
)

// clampSide bounds a viewer's width or height.
func clampSide(n int) int { return min(max(n, liveMinSide), liveMaxSide) }

// startCast subscribes to the tab's frames, then starts its screencast,
// trying again with backoff until it starts or ctx ends (the last viewer
// left, or the tab closed). No attempt has a time bound of its own: a
// loaded browser may take seconds to answer, and a screencast given up
// after a fixed wait left the person's live view blank for good (the
// next viewer saw a cast "running" that never sent a frame). Each frame
// is acknowledged, without a bound either, so Chromium paces itself and
// never waits for an acknowledgement that was abandoned.
func (lt *liveTab) startCast(ctx context.Context, width, height int, m *Manager) {
	p := lt.t.page.Context(ctx)
	wait := p.EachEvent(func(ev *proto.PageScreencastFrame) {
		// Acknowledge off the event loop: a CDP call made from an event
		// handler would wait on the loop that delivers its answer.
		engine.Go(ctx, nil, "browser.live.ack", func() {
			_ = proto.PageScreencastFrameAck{SessionID: ev.SessionID}.Call(lt.t.page.Context(ctx))
		}, nil)
		lt.frame(ev)
	})
	engine.Go(ctx, nil, "browser.live.frames", wait, nil)
	q := liveQuality
	delay := castRetryFirst
	for {
		err := proto.PageStartScreencast{Format: proto.PageStartScreencastFormatJpeg, Quality: &q, MaxWidth: &width, MaxHeight: &height}.Call(p)
		if err == nil || ctx.Err() != nil || lt.t.crashed.Load() {
			return
		}
		m.log.Debug("live: screencast did not start; trying again", "runId", lt.runID, "tab", lt.id, "err", err, "retryIn", delay)
		t := time.NewTimer(delay)
		select {
		case <-ctx.Done():
			t.Stop()
			return
		case <-t.C:
		}
		delay = min(2*delay, castRetryMax)
	}
}

// stopCast stops the screencast and its event loop.
func (lt *liveTab) stopCast(stop context.CancelFunc) {
	defer stop()
	if lt.t.crashed.Load() {
		return
	}
	c, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	_ = proto.PageStopScreencast{}.Call(lt.t.page.Context(c))
}

// frame keeps a frame and hands it to every viewer (replacing one it has
// not taken yet).
func (lt *liveTab) frame(ev *proto.PageScreencastFrame) {
	f := engine.LiveFrame{JPEG: ev.Data}
	if md := ev.Metadata; md != nil {
		f.Width, f.Height = md.DeviceWidth, md.DeviceHeight
	}
	lt.mu.Lock()
	defer lt.mu.Unlock()
	if lt.closed {
		return
	}
	lt.seq++
	f.Seq = lt.seq
	lt.last = &f
	for ch := range lt.viewers {
		select {
		case <-ch:
		default:
		}
		ch <- f
	}
}

// unwatch removes a viewer; the last one stops the screencast.
func (lt *liveTab) unwatch(ch chan engine.LiveFrame) {
	lt.mu.Lock()
	if _, ok := lt.viewers[ch]; !ok {
		lt.mu.Unlock()
		return
	}
	delete(lt.viewers, ch)
	close(ch)
	var stop context.CancelFunc
	if len(lt.viewers) == 0 {
		stop, lt.stop = lt.stop, nil
	}
	lt.mu.Unlock()
	if stop != nil {
		lt.stopCast(stop)
	}
}

// HoldRun pauses run runID's browser work for a person's takeover: each of
// its tabs stops at its next CDP call until every hold is released. The
// returned function releases this hold (calls after the first do
// nothing).
func (m *Manager) HoldRun(runID string) (release func()) {
	l := m.live
	l.mu.Lock()
	r := l.runs[runID]
	if r == nil {
		r = &liveRun{}
		l.runs[runID] = r
		l.order = append(l.order, runID)
	}
	r.holds++
	if r.released == nil {
		r.released = make(chan struct{})
	}
	l.mu.Unlock()
	var once sync.Once
	return func() {
		once.Do(func() {
			l.mu.Lock()
			defer l.mu.Unlock()
			r.holds--
			if r.holds == 0 {
				close(r.released)
				r.released = nil
			}
		})
	}
}

// DispatchInput sends a person's input events to tab tabID of run runID,
// in order: mouse events as Input.dispatchMouseEvent (coordinates mapped
// from the frame to the page through the last frame's size), keys as
// Input.dispatchKeyEvent, text as Input.insertText. The URL policy holds
// for every request the input causes (the tab's interception checks
// them). Errors: INVALID_PARAMETER (unknown or closed tab, a bad event),
// EXECUTION_ERROR when the browser refuses an event.
func (m *Manager) DispatchInput(ctx context.Context, runID, tabID string, events []engine.LiveInput) error {
	lt := m.live.tab(runID, tabID)
	if lt == nil {
		return engine.Errorf(engine.InvalidParameter, "run %s has no tab %q in this process", runID, tabID).
			WithDetails(map[string]any{"field": "tab"})
	}
	lt.mu.Lock()
	closed := lt.closed
	var w, h float64
	if lt.last != nil {
		w, h = lt.last.Width, lt.last.Height
	}
	lt.mu.Unlock()
	if closed {
		return engine.Errorf(engine.InvalidParameter, "tab %q of run %s is closed", tabID, runID).
			WithDetails(map[string]any{"field": "tab"})
	}
	for _, ev := range events {
		if err := ev.Validate(); err != nil {
			return err
		}
	}
	c, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	p := lt.t.page.Context(c)
	if w <= 0 || h <= 0 {
		lm, err := proto.PageGetLayoutMetrics{}.Call(p)
		if err != nil {
			return engine.Wrap(engine.ExecutionError, err, "read the tab's size: %v", err)
		}
		w, h = float64(lm.CSSLayoutViewport.ClientWidth), float64(lm.CSSLayoutViewport.ClientHeight)
	}
	for _, ev := range events {
		if err := dispatchOne(p, ev, w, h); err != nil {
			return engine.Wrap(engine.ExecutionError, err, "send %s to the tab: %v", ev.Type, err)
		}
	}
	return nil
}

// dispatchOne sends one event to page p whose viewport is w × h CSS px.
func dispatchOne(p *rod.Page, ev engine.LiveInput, w, h float64) error {
	x, y := ev.X*w, ev.Y*h
	mods := ev.Modifiers
	button := proto.InputMouseButton(ev.Button)
	if button == "" {
		button = proto.InputMouseButtonNone
	}
	buttons := ev.Buttons
	switch ev.Type {
	case "mousemove":
		if buttons&1 != 0 {
			button = proto.InputMouseButtonLeft
		}
		return proto.InputDispatchMouseEvent{Type: proto.InputDispatchMouseEventTypeMouseMoved, X: x, Y: y, Button: button, Buttons: &buttons, Modifiers: mods}.Call(p)
	case "mousedown", "mouseup":
		typ := proto.InputDispatchMouseEventTypeMousePressed
		if ev.Type == "mouseup" {
			typ = proto.InputDispatchMouseEventTypeMouseReleased
		}
		if button == proto.InputMouseButtonNone {
			button = proto.InputMouseButtonLeft
		}
		clicks := max(ev.ClickCount, 1)
		return proto.InputDispatchMouseEvent{Type: typ, X: x, Y: y, Button: button, Buttons: &buttons, ClickCount: clicks, Modifiers: mods}.Call(p)
	case "wheel":
		return proto.InputDispatchMouseEvent{Type: proto.InputDispatchMouseEventTypeMouseWheel, X: x, Y: y, DeltaX: ev.DeltaX, DeltaY: ev.DeltaY, Modifiers: mods}.Call(p)
	case "keydown":
		k := proto.InputDispatchKeyEvent{Type: proto.InputDispatchKeyEventTypeRawKeyDown, Key: ev.Key, Code: ev.Code,
			WindowsVirtualKeyCode: ev.KeyCode, NativeVirtualKeyCode: ev.KeyCode, Modifiers: mods}
		switch {
		case ev.Key == "Enter":
			k.Type, k.Text, k.UnmodifiedText = proto.InputDispatchKeyEventTypeKeyDown, "\r", "\r"
		case len([]rune(ev.Key)) == 1 && mods&(2|4) == 0:
			// A printable key types its character.
			k.Type, k.Text, k.UnmodifiedText = proto.InputDispatchKeyEventTypeKeyDown, ev.Key, ev.Key
		}
		return k.Call(p)
	case "keyup":
		return proto.InputDispatchKeyEvent{Type: proto.InputDispatchKeyEventTypeKeyUp, Key: ev.Key, Code: ev.Code,
			WindowsVirtualKeyCode: ev.KeyCode, NativeVirtualKeyCode: ev.KeyCode, Modifiers: mods}.Call(p)
	case "text":
		return proto.InputInsertText{Text: ev.Text}.Call(p)
	}
	return nil
}
