package browser

import (
	"context"
	"errors"

	"github.com/go-rod/rod/lib/proto"

	"github.com/browsertask/browsertask/engine"
)

// adopt intercepts the requests of an auto-attached child target (an
// out-of-process iframe or a worker), then lets it run. It gets the URL
// policy's patterns and the tab's blocked resource types. Its events are
// read from the browser's event stream filtered by its session id.
//
// The child stays paused until it is let run, and a frame nested across
// sites cannot start before its parent ran: a page with frames three
// sites deep waits for three adoptions in a row. So the calls that
// prepare the child (interception, page events, auto-attach of its own
// children), which do not depend on each other, go out together
// (prepareChild), and only the call that lets it run waits for them: two
// round trips to the browser per child instead of four. Under load
// (about 33 on 2 cores, -race, two hostile sweeps at once) the last two
// of the four took 1.1-2.8 s together, since rod hands every answer to
// its caller goroutine synchronously: three levels of four calls in a
// row came near the 10 s a run_steps navigation to such a page had.
//
// None of these calls has a deadline of its own: each lasts until the
// browser answers, the child detaches or the tab ends (its context).
// With callTimeout (5 s) on them, a browser slowed down by load, not
// wedged, got the child abandoned: paused for good, silently when the
// call that lets it run was the one cut, and the page could only end
// NAVIGATION_TIMEOUT. A wedged browser leaves these goroutines waiting
// until its tabs are closed.
func (s *Session) adopt(t *tab, children *childSessions, e *proto.TargetAttachedToTarget) {
	defer s.recoverHandler(t, "Target.attachedToTarget")
	ctx, cancel := context.WithCancel(t.crash)
	children.add(e.SessionID, cancel)
	child := cdpTarget{b: s.b, id: e.SessionID, ctx: ctx}
	if e.TargetInfo != nil {
		s.noteOrigin(e.TargetInfo.URL)
	}
	// Subscribe before the child runs, so none of its events is missed.
	msgs := s.b.Context(ctx).Event()
	var calls []func(cdpTarget) error
	if f := s.childFetch(t, e); f != nil {
		calls = append(calls, f)
	}
	if e.TargetInfo != nil && (e.TargetInfo.Type == "iframe" || e.TargetInfo.Type == proto.TargetTargetInfoTypePage) {
		// Page events of the child frame: the origins its later navigations load.
		calls = append(calls, func(c cdpTarget) error { return proto.PageEnable{}.Call(c) })
	}
	calls = append(calls, func(c cdpTarget) error {
		// Its own children are adopted the same way (childEvents); a
		// target that has none to attach may refuse: not a reason to keep
		// it paused.
		_ = proto.TargetSetAutoAttach{AutoAttach: true, WaitForDebuggerOnStart: true, Flatten: true}.Call(c)
		return nil
	})
	if err := s.prepareChild(t, child, calls); err != nil {
		// Fail closed: a child we cannot intercept stays paused (it never
		// loads) rather than running unchecked.
		kind := ""
		if e.TargetInfo != nil {
			kind = string(e.TargetInfo.Type)
		}
		s.log.Warn("cannot intercept a child target; it stays paused", "type", kind, "err", err)
		cancel()
		for range msgs { // drain until the subscription ends with ctx
		}
		return
	}
	grand := &childSessions{m: map[proto.TargetSessionID]context.CancelFunc{}}
	s.goTab(t, "browser.childEvents", func() { s.childEvents(t, child, grand, msgs) })
	_ = proto.RuntimeRunIfWaitingForDebugger{}.Call(child)
}

// childFetch returns the call that gives child target e of tab t the request
// interception it needs (the URL policy's patterns and the tab's blocked
// resource types), or nil when it needs none: a new target intercepts
// nothing until told to.
func (s *Session) childFetch(t *tab, e *proto.TargetAttachedToTarget) func(cdpTarget) error {
	policyPats := s.policy.m.fetchPatterns()
	pats := withBlocking(policyPats, resourceMask(t.block.Load()))
	worker := e.TargetInfo != nil && e.TargetInfo.Type != "iframe" && e.TargetInfo.Type != proto.TargetTargetInfoTypePage
	switch {
	case len(pats) == 0:
		// Nothing to intercept (and workers have no Fetch domain to
		// disable: the call fails).
		return nil
	case worker && len(policyPats) == 0:
		// Only blocked resource types to intercept. A worker that has a
		// Fetch domain (service, shared) gets them; one that has none
		// (dedicated) runs without: it loads no images, fonts, media or
		// stylesheets of its own, and the policy needs nothing here.
		return func(c cdpTarget) error {
			if setFetch(c, pats) != nil {
				s.log.Debug("worker without request interception; nothing the URL policy needs", "type", e.TargetInfo.Type)
			}
			return nil
		}
	case worker:
		// Dedicated workers have no Fetch domain of their own; service
		// and shared workers do. Where it is missing, a worker of a
		// launched browser may still run: under restricted every
		// connection of a launched browser goes through the egress
		// proxy, which refuses internal addresses; under local the only
		// rule is the daemon's own listener, whose Host/Origin checks
		// refuse requests from pages. On a remote browser (no proxy) it
		// stays paused (fail closed). Workers left paused would break
		// every site that uses one.
		return func(c cdpTarget) error {
			err := setFetch(c, pats)
			if err != nil && !s.in.remote {
				s.log.Debug("worker without request interception; the egress proxy holds its connections", "type", e.TargetInfo.Type, "err", err)
				return nil
			}
			return err
		}
	}
	return func(c cdpTarget) error { return setFetch(c, pats) }
}

// prepareChild makes calls on child at once and returns their errors
// joined once all of them answered (nil when none failed). A panic in one
// is that call's error.
func (s *Session) prepareChild(t *tab, child cdpTarget, calls []func(cdpTarget) error) error {
	errs := make([]error, len(calls))
	answered := make(chan struct{}, len(calls))
	for i, call := range calls {
		engine.Go(t.crash, s.log, "browser.adopt.prepare", func() {
			errs[i] = call(child)
			answered <- struct{}{}
		}, func(p *engine.Panic) {
			errs[i] = engine.InternalError(p)
			answered <- struct{}{}
		})
	}
	for range calls {
		<-answered
	}
	return errors.Join(errs...)
}
