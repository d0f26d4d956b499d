package browser

import (
	"context"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/go-rod/rod"
	"github.com/go-rod/rod/lib/proto"

	"github.com/browsertask/browsertask/engine"
)

// resetTimeout bounds resetting a released tab to about:blank and stopping
// a cancelled load: short, so cancellation finishes well within 2 s.
const resetTimeout = time.Second

// Session is one isolated browser context (own cookies and storage) with a
// pool of reused tabs. Measured here, a reused tab is ~3x faster per URL
// than a fresh one, and a new context per URL is slower still.
type Session struct {
	id  string
	in  *instance
	gen int
	b   *rod.Browser // bound to the session's browser context
	log *slog.Logger
	// policy holds every request of the session's tabs to the URL policy.
	policy *requestPolicy

	slots chan struct{} // one token per open tab, cap = max tabs

	mu     sync.Mutex
	idle   []*tab
	tabs   map[proto.TargetTargetID]*tab
	closed bool
	// origins are the http(s) origins whose documents the session loaded
	// (for ExportState's localStorage).
	origins map[string]bool
}

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
	// synthetic answers the tab's requests locally with an empty page
	// (reading or writing an origin's storage without contacting it).
	synthetic atomic.Bool
	// emulated is set while a viewport override is active.
	emulated atomic.Bool
	// policyGen is the deny-list generation its interception was set for
	// (read and written only by the tab's holder).
	policyGen int64
}

// newSession creates the browser context. Errors: EXECUTION_ERROR.
func newSession(ctx context.Context, id string, in *instance, b *rod.Browser, gen, maxTabs int, pol *requestPolicy, log *slog.Logger) (*Session, error) {
	res, err := proto.TargetCreateBrowserContext{DisposeOnDetach: true}.Call(b.Context(ctx))
	if err != nil {
		return nil, engine.Wrap(engine.ExecutionError, err, "cannot create a browser context for session %s: %v", id, err)
	}
	sb := *b
	sb.BrowserContextID = res.BrowserContextID
	return &Session{
		id: id, in: in, gen: gen, b: &sb, log: log, policy: pol,
		slots: make(chan struct{}, maxTabs),
		tabs:  map[proto.TargetTargetID]*tab{},
	}, nil
}

// ID returns the session id.
func (s *Session) ID() string { return s.id }

// Browser returns the rod browser bound to the session's browser context
// (for cookies and storage state).
func (s *Session) Browser() *rod.Browser { return s.b }

// MaxTabs is the session's tab cap; a run's concurrency must not exceed it.
func (s *Session) MaxTabs() int { return cap(s.slots) }

// AcquirePage returns a tab of the session, reusing an idle one when
// possible; it blocks while the session already has MaxTabs tabs in use.
// release must be called once: reusable=true returns the tab to the pool
// (reset to about:blank), false closes it. When ctx ends while the tab is
// held, its loading is stopped at once so the browser stops fetching.
// Errors: the context's error; SESSION_NOT_FOUND when the session was
// closed; EXECUTION_ERROR when the browser is gone.
func (s *Session) AcquirePage(ctx context.Context) (*rod.Page, func(reusable bool), error) {
	select {
	case s.slots <- struct{}{}:
	case <-ctx.Done():
		return nil, nil, context.Cause(ctx)
	}
	t, err := s.takeTab(ctx)
	if err != nil {
		<-s.slots
		return nil, nil, err
	}
	stop := context.AfterFunc(ctx, func() { s.stopLoading(t.page, true) })
	var once sync.Once
	release := func(reusable bool) {
		once.Do(func() {
			stopped := stop()
			go func() {
				defer func() { <-s.slots }()
				s.putTab(t, reusable && stopped)
			}()
		})
	}
	return t.page, release, nil
}

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
		if t.policyGen != s.policy.m.policyGen.Load() {
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
	target, err := proto.TargetCreateTarget{URL: "about:blank", BrowserContextID: s.b.BrowserContextID}.Call(s.b.Context(ctx))
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
	t.crash, t.markCrashed = context.WithCancel(context.Background())
	if err := s.watchTab(t); err != nil {
		t.markCrashed()
		_, _ = proto.TargetCloseTarget{TargetID: target.TargetID}.Call(s.b)
		return nil, s.mapErr(ctx, nil, err, "set up a tab")
	}
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

// Healthy reports whether the renderer of tab p did not crash and still
// answers a trivial script promptly. A renderer stuck in a script loop or
// still allocating answers neither, and Page.navigate to about:blank does
// not notice it (it answers from the browser process): such a tab must be
// closed, not reused, or it fails the next page loaded in it and keeps a
// CPU core busy for as long as it lives.
func (s *Session) Healthy(p *rod.Page) bool {
	if p == nil || s.Crashed(p) {
		return false
	}
	c, cancel := context.WithTimeout(context.Background(), healthProbeTimeout)
	defer cancel()
	_, err := s.Eval(c, p, "1")
	return err == nil
}

// putTab resets a released tab and pools it, or closes it (crashed, or
// stuck: see Healthy).
func (s *Session) putTab(t *tab, reusable bool) {
	if reusable && s.Healthy(t.page) {
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
func (s *Session) stopLoading(p *rod.Page, blank bool) {
	if s.Crashed(p) {
		return
	}
	c, cancel := context.WithTimeout(context.Background(), resetTimeout)
	defer cancel()
	if blank {
		_, _ = proto.PageNavigate{URL: "about:blank"}.Call(p.Context(c))
		return
	}
	_ = proto.PageStopLoading{}.Call(p.Context(c))
}

// Crashed reports whether the renderer of page p crashed.
func (s *Session) Crashed(p *rod.Page) bool {
	t := s.tab(p)
	return t != nil && t.crashed.Load()
}

func (s *Session) tab(p *rod.Page) *tab {
	if p == nil {
		return nil
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.tabs[p.TargetID]
}

// guard returns ctx, additionally cancelled when p's renderer crashes.
func (s *Session) guard(ctx context.Context, p *rod.Page) (context.Context, context.CancelFunc) {
	t := s.tab(p)
	if t == nil {
		return context.WithCancel(ctx)
	}
	c, cancel := context.WithCancel(ctx)
	stop := context.AfterFunc(t.crash, cancel)
	return c, func() { stop(); cancel() }
}

// goneErr is the error for a session that can no longer be used.
func (s *Session) goneErr() error {
	if !s.in.alive(s.gen) {
		return engine.Errorf(engine.ExecutionError, "the browser of session %s exited", s.id)
	}
	return engine.Errorf(engine.SessionNotFound, "session %s was closed", s.id).
		WithDetails(map[string]any{"sessionId": s.id})
}

// markClosed stops the pool from handing out or keeping tabs.
func (s *Session) markClosed() {
	s.mu.Lock()
	s.closed = true
	s.idle = nil
	s.mu.Unlock()
}

// close disposes the browser context, which closes all its tabs.
func (s *Session) close(ctx context.Context) error {
	s.markClosed()
	if !s.in.alive(s.gen) {
		return nil
	}
	c, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	err := proto.TargetDisposeBrowserContext{BrowserContextID: s.b.BrowserContextID}.Call(s.b.Context(c))
	if err != nil && s.in.alive(s.gen) {
		return engine.Wrap(engine.ExecutionError, err, "close session %s: %v", s.id, err)
	}
	return nil
}
