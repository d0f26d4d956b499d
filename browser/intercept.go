package browser

import (
	"context"
	"sync"

	"github.com/go-rod/rod"
	"github.com/go-rod/rod/lib/proto"

	"github.com/browsertask/browsertask/engine"
)

// callTimeout bounds the CDP calls that answer a paused request or set up
// a child target, so a wedged browser cannot pile up goroutines.
const callTimeout = 5e9 // 5 s

// watchTab wires a new tab: crash detection, the origins its frames load
// (Page events, which rod enables on every page) and the URL policy on the
// requests fetchPatterns selects. Those requests are paused by the Fetch
// domain and continued or failed by check, redirects included (each hop is
// paused again). Frames and workers that site isolation puts in another
// process are separate targets: they are auto-attached while paused, given
// the same interception, then resumed, so no sub-frame request escapes the
// policy. Errors: the CDP error when interception cannot be enabled (the
// tab must not be used then).
func (s *Session) watchTab(t *tab) error {
	p := t.page
	if err := s.enableFetch(p, t); err != nil {
		return err
	}
	children := &childSessions{m: map[proto.TargetSessionID]context.CancelFunc{}}
	wait := p.Context(t.crash).EachEvent(
		func(*proto.InspectorTargetCrashed) {
			t.crashed.Store(true)
			t.markCrashed()
		},
		func(e *proto.PageFrameNavigated) {
			if e.Frame != nil {
				s.noteOrigin(e.Frame.URL)
			}
		},
		func(e *proto.FetchRequestPaused) { go s.decide(p, t, e) },
		func(e *proto.TargetAttachedToTarget) { go s.adopt(t, children, e) },
		func(e *proto.TargetDetachedFromTarget) { children.end(e.SessionID) },
	)
	go wait()
	return (proto.TargetSetAutoAttach{AutoAttach: true, WaitForDebuggerOnStart: true, Flatten: true}).Call(p)
}

// enableFetch (re)starts request interception of tab p with the current
// policy's patterns, or stops it when the policy needs none.
func (s *Session) enableFetch(p *rod.Page, t *tab) error {
	gen := s.policy.m.policyGen.Load()
	if err := setFetch(p, s.policy.m.fetchPatterns()); err != nil {
		return err
	}
	t.policyGen = gen
	return nil
}

// setFetch intercepts the requests of target p that match pats; with no
// patterns it turns interception off (Fetch.enable without patterns would
// pause every request).
func setFetch(p *rod.Page, pats []*proto.FetchRequestPattern) error {
	if len(pats) == 0 {
		return proto.FetchDisable{}.Call(p)
	}
	return proto.FetchEnable{Patterns: pats}.Call(p)
}

// childSessions are the auto-attached targets of one tab (frames, workers)
// whose event loops must end when they detach.
type childSessions struct {
	mu sync.Mutex
	m  map[proto.TargetSessionID]context.CancelFunc
}

func (c *childSessions) add(id proto.TargetSessionID, cancel context.CancelFunc) {
	c.mu.Lock()
	c.m[id] = cancel
	c.mu.Unlock()
}

func (c *childSessions) end(id proto.TargetSessionID) {
	c.mu.Lock()
	cancel := c.m[id]
	delete(c.m, id)
	c.mu.Unlock()
	if cancel != nil {
		cancel()
	}
}

// adopt intercepts the requests of an auto-attached child target (an
// out-of-process iframe or a worker), then lets it run.
func (s *Session) adopt(t *tab, children *childSessions, e *proto.TargetAttachedToTarget) {
	ctx, cancel := context.WithCancel(t.crash)
	children.add(e.SessionID, cancel)
	child := s.b.PageFromSession(e.SessionID).Context(ctx)
	bounded := func() (*rod.Page, context.CancelFunc) {
		c, done := context.WithTimeout(ctx, callTimeout)
		return child.Context(c), done
	}
	s.noteOrigin(e.TargetInfo.URL)
	cp, done := bounded()
	err := setFetch(cp, s.policy.m.fetchPatterns())
	if err == nil {
		// Page events of the child: the origins its later navigations load.
		err = proto.PageEnable{}.Call(cp)
	}
	done()
	if err != nil {
		// Fail closed: a child we cannot intercept stays paused (it never
		// loads) rather than running unchecked.
		s.log.Warn("cannot intercept a child target; it stays paused", "type", e.TargetInfo.Type, "err", err)
		return
	}
	grand := &childSessions{m: map[proto.TargetSessionID]context.CancelFunc{}}
	wait := child.EachEvent(
		func(ev *proto.PageFrameNavigated) {
			if ev.Frame != nil {
				s.noteOrigin(ev.Frame.URL)
			}
		},
		func(ev *proto.FetchRequestPaused) { go s.decide(child, t, ev) },
		func(ev *proto.TargetAttachedToTarget) { go s.adopt(t, grand, ev) },
		func(ev *proto.TargetDetachedFromTarget) { grand.end(ev.SessionID) },
	)
	go wait()
	cp, done = bounded()
	defer done()
	_ = proto.TargetSetAutoAttach{AutoAttach: true, WaitForDebuggerOnStart: true, Flatten: true}.Call(cp)
	_ = proto.RuntimeRunIfWaitingForDebugger{}.Call(cp)
}

// decide continues a paused request the policy allows and fails the others
// (net::ERR_BLOCKED_BY_CLIENT), recording the first refusal on the tab so
// the page's navigation or step fails with it.
func (s *Session) decide(p *rod.Page, t *tab, e *proto.FetchRequestPaused) {
	c, cancel := context.WithTimeout(context.Background(), callTimeout)
	defer cancel()
	if t.synthetic.Load() {
		_ = proto.FetchFulfillRequest{RequestID: e.RequestID, ResponseCode: 200, Body: []byte("<!doctype html><title></title>"),
			ResponseHeaders: []*proto.FetchHeaderEntry{{Name: "Content-Type", Value: "text/html"}}}.Call(p.Context(c))
		return
	}
	if e.Request != nil {
		if bad := s.policy.check(e.Request.URL); bad != nil {
			t.blocked.CompareAndSwap(nil, bad)
			s.log.Info("request blocked by the URL policy", "url", bad.Details["blockedUrl"], "code", bad.Code)
			_ = proto.FetchFailRequest{RequestID: e.RequestID, ErrorReason: proto.NetworkErrorReasonBlockedByClient}.Call(p.Context(c))
			return
		}
	}
	_ = proto.FetchContinueRequest{RequestID: e.RequestID}.Call(p.Context(c))
}

// Blocked returns the first request of tab p the URL policy refused since
// its last navigation started (nil if none): TRUST_LEVEL_NOT_ALLOWED or
// STEP_EXECUTION_FAILED with details {blockedUrl, policy}.
func (s *Session) Blocked(p *rod.Page) error {
	t := s.tab(p)
	if t == nil {
		return nil
	}
	if e := t.blocked.Load(); e != nil {
		return e
	}
	return nil
}

// clearBlocked forgets an earlier refusal (a new navigation starts).
func (s *Session) clearBlocked(p *rod.Page) {
	if t := s.tab(p); t != nil {
		t.blocked.Store(nil)
	}
}

// blockedErr returns the tab's refusal as a domain error, or nil.
func (s *Session) blockedErr(p *rod.Page) *engine.Error {
	if t := s.tab(p); t != nil {
		return t.blocked.Load()
	}
	return nil
}
