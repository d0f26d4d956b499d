package browser

import (
	"context"
	"sync"
	"sync/atomic"
	"time"

	"github.com/go-rod/rod"
	"github.com/go-rod/rod/lib/proto"

	"github.com/browsertask/browsertask/engine"
)

// tab is a pooled page and what is known about its renderer.
type tab struct {
	page    *rod.Page
	crashed atomic.Bool
	// crash is cancelled when the renderer crashes: CDP calls to a crashed
	// tab never answer, so calls are bound to it as well.
	crash       context.Context
	markCrashed context.CancelFunc
	// blocked is the first request the URL policy refused since the last
	// navigation started.
	blocked atomic.Pointer[engine.Error]
	// verdicts counts the URL-policy decisions under way for the tab's
	// requests.
	verdicts verdicts
	// synthetic answers the tab's requests locally with an empty page
	// (reading or writing an origin's storage without contacting it).
	synthetic atomic.Bool
	// emulated is set while a viewport override is active.
	emulated atomic.Bool
	// identity is set once a holder gave the tab a User-Agent or extra
	// headers (Tab.SetIdentity): the tab is closed on release, not pooled.
	identity atomic.Bool
	// policyGen is the deny-list generation its interception was set for
	// (read and written only by the tab's holder).
	policyGen int64
	// block is the resourceMask of the types its holder blocks (written
	// by the holder, read by the interception's goroutines).
	block atomic.Uint32
	// paused counts the requests of the tab and its child targets the
	// Fetch domain paused (policy checks and blocked resources).
	paused atomic.Int64
	// docs records what its main frame did since the last navigation
	// started (see Tab.overtaken).
	docs docLog
	// redact masks the secrets of the run holding the tab (set when it is
	// acquired) in what is logged about its requests.
	redact atomic.Pointer[engine.Redactor]
}

// masked returns s with the secrets of the run holding the tab masked.
func (t *tab) masked(s string) string {
	if r := t.redact.Load(); r != nil {
		return (*r)(s)
	}
	return s
}

// verdicts counts decisions under way, so a navigation can let them land
// before it reads or clears the tab's refusal.
type verdicts struct {
	mu   sync.Mutex
	n    int
	idle chan struct{} // closed when n drops back to 0; nil while n == 0
}

// start counts a decision.
func (v *verdicts) start() {
	v.mu.Lock()
	if v.n == 0 {
		v.idle = make(chan struct{})
	}
	v.n++
	v.mu.Unlock()
}

// done uncounts a decision.
func (v *verdicts) done() {
	v.mu.Lock()
	v.n--
	if v.n == 0 {
		close(v.idle)
		v.idle = nil
	}
	v.mu.Unlock()
}

// wait returns once the decisions under way have landed, ctx ended or d
// passed.
func (v *verdicts) wait(ctx context.Context, d time.Duration) {
	v.mu.Lock()
	idle := v.idle
	v.mu.Unlock()
	if idle == nil {
		return
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-idle:
	case <-ctx.Done():
	case <-t.C:
	}
}

// Tab is one tab of a session, held by one caller from Session.AcquireTab
// until Release. Its methods load pages, evaluate scripts, act on elements
// and capture the tab; each is bound to the renderer, so a crash ends a
// call with PAGE_CRASHED instead of leaving it waiting.
type Tab struct {
	s    *Session
	t    *tab
	stop func() bool // unregisters the stop-loading-on-cancel hook
	once sync.Once
	// runID is the run holding the tab ("" outside runs); live is its
	// entry in the live views (nil when runID is "").
	runID string
	live  *liveTab
	// free hands back the tab's slot in the session it was acquired from
	// and its capacity on its endpoint (pool.go).
	free func()
}

// AcquireTab returns a tab of the session, reusing an idle one when
// possible; it blocks while the session already has MaxTabs tabs in use.
// Release must be called once. When ctx ends while the tab is held, its
// loading is stopped at once so the browser stops fetching. Errors: the
// context's error; SESSION_NOT_FOUND when the session was closed;
// EXECUTION_ERROR when the browser is gone.
func (s *Session) AcquireTab(ctx context.Context) (*Tab, error) {
	select {
	case s.slots <- struct{}{}:
	case <-ctx.Done():
		return nil, context.Cause(ctx)
	}
	m := s.policy.m
	var part *Session
	var t *tab
	for {
		var err error
		if part, err = s.placeTab(ctx); err != nil {
			<-s.slots
			return nil, err
		}
		if t, err = part.takeTab(ctx); err == nil {
			break
		}
		m.unreserve(part.in)
		// A spread session's browser that died between placing the tab
		// and opening it is taken out of the pool, and the tab placed
		// again (elsewhere, or once a browser is back: reserve waits out
		// an outage of the whole pool). It is asked (answers), not only
		// looked up (alive): the connection may be closed before its
		// watcher has noticed.
		if ctx.Err() == nil && s.spreadSet() != nil && part.in.remote && !part.in.answers(part.gen) {
			m.markDown(part.in, err)
			continue
		}
		<-s.slots
		return nil, err
	}
	free := func() {
		m.unreserve(part.in)
		<-s.slots
	}
	redact := engine.RedactorFrom(ctx)
	t.redact.Store(&redact)
	tb := &Tab{s: part, t: t, runID: engine.RunIDFrom(ctx), free: free}
	if tb.runID != "" {
		tb.live = m.live.open(tb.runID, part, t, redact)
	}
	tb.stop = context.AfterFunc(ctx, func() { tb.stopLoading(true) })
	return tb, nil
}

// Release hands the tab back: reusable=true returns it to the pool (reset
// to about:blank; a crashed tab, a tab whose renderer no longer answers or
// one whose holder's context ended is closed instead), false closes it.
// Calls after the first do nothing.
func (tb *Tab) Release(reusable bool) {
	tb.once.Do(func() {
		if tb.live != nil {
			tb.s.policy.m.live.close(tb.live)
		}
		stopped := tb.stop()
		engine.Go(tb.t.crash, tb.s.log, "browser.Tab.release", func() {
			tb.s.putTab(tb.t, reusable && stopped)
			tb.free()
		}, func(*engine.Panic) { tb.free() })
	})
}

// Page returns the rod page of the tab, for CDP calls the Tab does not
// offer. Calls on it are not bound to the renderer's crash.
func (tb *Tab) Page() *rod.Page { return tb.t.page }

// Remote reports whether the tab's browser is a CDP endpoint this process
// connected to (--browser ws://… or http://…) rather than one it launched:
// such a browser may run on another machine, where this machine's file
// paths mean nothing.
func (tb *Tab) Remote() bool { return tb.s.in.remote }

// takeTab pops an idle tab or opens a new one.
func (s *Session) takeTab(ctx context.Context) (*tab, error) {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return nil, s.goneErr()
	}
	if n := len(s.idle); n > 0 {
		t := s.idle[n-1]
		s.idle = s.idle[:n-1]
		s.mu.Unlock()
		// A new holder starts with nothing blocked (Tab.BlockResources):
		// the previous run's blocking is not this one's.
		if t.block.Swap(0) != 0 || t.policyGen != s.policy.m.policyGen.Load() {
			if err := s.enableFetch(t.page, t); err != nil {
				s.putTab(t, false)
				return nil, s.mapErr(ctx, nil, err, "update a tab's request interception")
			}
		}
		return t, nil
	}
	s.mu.Unlock()
	if !s.in.alive(s.gen) {
		return nil, s.goneErr()
	}
	// In the background: a new tab must not hide the tab in front of the
	// session's window, which may be being captured (see Session.front).
	// In a shared session (the default context of a profile's browser or
	// of a person's Chrome) each tab gets a window of its own: a
	// background tab beside the window's other tabs would be hidden, and
	// a hidden tab's timers and animation frames are throttled.
	target, err := proto.TargetCreateTarget{URL: "about:blank", BrowserContextID: s.b.BrowserContextID, Background: true, NewWindow: s.shared}.Call(s.b.Context(ctx))
	if err != nil {
		return nil, s.mapErr(ctx, nil, err, "open a tab")
	}
	// Attach with the connection's context: the page must outlive ctx.
	p, err := s.b.PageFromTarget(target.TargetID)
	if err != nil {
		_, _ = proto.TargetCloseTarget{TargetID: target.TargetID}.Call(s.b)
		return nil, s.mapErr(ctx, nil, err, "attach to a tab")
	}
	t := &tab{page: p}
	t.crash, t.markCrashed = context.WithCancel(engine.CarryFaults(context.Background(), ctx))
	if err := s.watchTab(t); err != nil {
		t.markCrashed()
		_, _ = proto.TargetCloseTarget{TargetID: target.TargetID}.Call(s.b)
		return nil, s.mapErr(ctx, nil, err, "set up a tab")
	}
	s.watchDocs(t)
	s.endOnLost(t)
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		_ = p.Close()
		return nil, s.goneErr()
	}
	s.tabs[p.TargetID] = t
	s.mu.Unlock()
	return t, nil
}

// healthProbeTimeout bounds Healthy's trivial script.
const healthProbeTimeout = 500 * time.Millisecond

// Healthy reports whether the tab's renderer did not crash and still
// answers a trivial script promptly. A renderer stuck in a script loop or
// still allocating answers neither, and Page.navigate to about:blank does
// not notice it (it answers from the browser process): such a tab must be
// closed, not reused, or it fails the next page loaded in it and keeps a
// CPU core busy for as long as it lives.
func (tb *Tab) Healthy() bool {
	if tb.Crashed() {
		return false
	}
	c, cancel := context.WithTimeout(context.Background(), healthProbeTimeout)
	defer cancel()
	_, err := tb.Eval(c, "1")
	return err == nil
}

// putTab resets a released tab and pools it, or closes it (crashed, or
// stuck: see Healthy).
func (s *Session) putTab(t *tab, reusable bool) {
	if reusable && !t.identity.Load() && (&Tab{s: s, t: t}).Healthy() {
		c, cancel := context.WithTimeout(context.Background(), resetTimeout)
		_, err := proto.PageNavigate{URL: "about:blank"}.Call(t.page.Context(c))
		if err == nil && t.emulated.Load() {
			err = proto.EmulationClearDeviceMetricsOverride{}.Call(t.page.Context(c))
			t.emulated.Store(false)
		}
		cancel()
		if err == nil {
			s.mu.Lock()
			if !s.closed {
				s.idle = append(s.idle, t)
				s.mu.Unlock()
				return
			}
			s.mu.Unlock()
		}
	}
	s.mu.Lock()
	delete(s.tabs, t.page.TargetID)
	s.mu.Unlock()
	t.markCrashed() // releases the crash watcher's context
	c, cancel := context.WithTimeout(context.Background(), resetTimeout)
	defer cancel()
	_, _ = proto.TargetCloseTarget{TargetID: t.page.TargetID}.Call(s.b.Context(c))
}

// stopLoading stops whatever the tab is fetching, with a fresh short
// deadline (the caller's context is already over). blank also navigates to
// about:blank, which aborts a main document that never answered.
func (tb *Tab) stopLoading(blank bool) {
	if tb.Crashed() {
		return
	}
	c, cancel := context.WithTimeout(context.Background(), resetTimeout)
	defer cancel()
	if blank {
		_, _ = proto.PageNavigate{URL: "about:blank"}.Call(tb.t.page.Context(c))
		return
	}
	_ = proto.PageStopLoading{}.Call(tb.t.page.Context(c))
}

// Crashed reports whether the tab's renderer crashed.
func (tb *Tab) Crashed() bool { return tb.t.crashed.Load() }

// guard returns ctx, additionally cancelled when the renderer crashes. It
// first waits while a person has taken the run over (Manager.HoldRun).
func (tb *Tab) guard(ctx context.Context) (context.Context, context.CancelFunc) {
	tb.s.policy.m.live.waitHeld(ctx, tb.runID)
	c, cancel := context.WithCancel(ctx)
	stop := context.AfterFunc(tb.t.crash, cancel)
	return c, func() { stop(); cancel() }
}

// client is the tab's page bound to ctx, for CDP calls.
func (tb *Tab) client(ctx context.Context) *rod.Page { return tb.t.page.Context(ctx) }

// mapErr turns a CDP failure of this tab into a domain error (see
// Session.mapErr), PAGE_CRASHED when its renderer crashed.
func (tb *Tab) mapErr(ctx context.Context, err error, what string) error {
	return tb.s.mapErr(ctx, tb.t, err, what)
}
