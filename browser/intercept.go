package browser

import (
	"context"
	"runtime/debug"
	"sync"

	"github.com/go-rod/rod"
	"github.com/go-rod/rod/lib/proto"

	"github.com/browsertask/browsertask/engine"
)

// callTimeout bounds the CDP calls that answer a paused request or a
// dialog, so a wedged browser cannot pile up goroutines. (Setting up a
// child target waits for the child's own end instead: see adopt.)
const callTimeout = 5e9 // 5 s

// watchTab wires a new tab: crash detection, the origins its frames load
// (Page events, which rod enables on every page) and the URL policy on the
// requests fetchPatterns selects, plus the resource types the holder
// blocks (Tab.BlockResources). Those requests are paused by the Fetch
// domain and continued or failed by check, redirects included (each hop is
// paused again); a blocked type is failed once the policy let it through.
// Frames and workers that site isolation puts in another
// process are separate targets: they are auto-attached while paused, given
// the same interception, then resumed, so no sub-frame request escapes the
// policy. Errors: the CDP error when interception cannot be enabled (the
// tab must not be used then; the caller cancels t.crash, which ends the
// event loop).
func (s *Session) watchTab(t *tab) error {
	p := t.page
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
		func(e *proto.FetchRequestPaused) {
			t.paused.Add(1)
			t.verdicts.start()
			s.goDecide(s.tabTarget(t), t, e)
		},
		func(e *proto.FetchAuthRequired) {
			tt := s.tabTarget(t)
			s.goTab(t, "browser.answerAuth", func() { s.answerAuth(tt, t, e) })
		},
		func(e *proto.PageJavascriptDialogOpening) {
			tt := s.tabTarget(t)
			s.goTab(t, "browser.answerDialog", func() { s.answerDialog(tt, t, e) })
		},
		func(e *proto.TargetAttachedToTarget) { s.goTab(t, "browser.adopt", func() { s.adopt(t, children, e) }) },
		func(e *proto.TargetDetachedFromTarget) { children.end(e.SessionID) },
	)
	s.goTab(t, "browser.tabEvents", wait)
	// After EachEvent, not before: rod enables the domain of every event
	// it is given a callback for unless it saw that domain enabled, and
	// Fetch.enable without patterns pauses every request of the tab. With
	// no patterns to intercept, setFetch turns that off again.
	if err := s.enableFetch(p, t); err != nil {
		return err
	}
	// Every tab is created in the background, so all but one tab of a
	// session's window are hidden; Chromium then never fires load on a
	// page whose inline SVG <use>s an external document (issue 28: 12
	// saved pages timed out). Focus emulation makes each tab behave as
	// the focused, visible one (TestLoadBesideAnIdleTab).
	if err := (proto.EmulationSetFocusEmulationEnabled{Enabled: true}).Call(p); err != nil {
		return err
	}
	return (proto.TargetSetAutoAttach{AutoAttach: true, WaitForDebuggerOnStart: true, Flatten: true}).Call(p)
}

// enableFetch (re)starts request interception of page p (tab t) with the current
// policy's patterns and those of the resource types the tab blocks, or stops
// it when neither needs any.
func (s *Session) enableFetch(p *rod.Page, t *tab) error {
	gen := s.policy.m.policyGen.Load()
	pats := withBlocking(s.policy.m.fetchPatterns(), resourceMask(t.block.Load()))
	if s.creds != nil {
		// The proxy's authentication is answered through the Fetch
		// domain, which asks only for the requests it pauses: every
		// request is paused, and decide continues each as it does the
		// policy's (checking the policy and the blocked types itself).
		pats = []*proto.FetchRequestPattern{{URLPattern: "*"}}
		if err := (proto.FetchEnable{Patterns: pats, HandleAuthRequests: true}).Call(p); err != nil {
			return err
		}
		t.policyGen = gen
		return nil
	}
	if err := setFetch(p, pats); err != nil {
		return err
	}
	t.policyGen = gen
	return nil
}

// setFetch intercepts the requests of target p that match pats; with no
// patterns it turns interception off (Fetch.enable without patterns would
// pause every request).
func setFetch(p proto.Client, pats []*proto.FetchRequestPattern) error {
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

// cdpTarget addresses CDP commands to one attached target by its session id
// (an auto-attached out-of-process iframe or worker, or a tab) with a
// context. rod's PageFromSession would build a *rod.Page whose internal
// helpers lock is nil, so any helper on it (Context included) panics; child
// targets are therefore driven only through this raw session handle and
// never as a *rod.Page.
type cdpTarget struct {
	b   *rod.Browser
	id  proto.TargetSessionID
	ctx context.Context
}

// Call implements proto.Client.
func (c cdpTarget) Call(ctx context.Context, sessionID, method string, params any) ([]byte, error) {
	return c.b.Call(ctx, sessionID, method, params)
}

// GetSessionID implements proto.Sessionable.
func (c cdpTarget) GetSessionID() proto.TargetSessionID { return c.id }

// GetContext implements proto.Contextable.
func (c cdpTarget) GetContext() context.Context { return c.ctx }

// with returns the handle bound to ctx.
func (c cdpTarget) with(ctx context.Context) cdpTarget { c.ctx = ctx; return c }

// tabTarget is the raw handle of a tab's own session.
func (s *Session) tabTarget(t *tab) cdpTarget {
	return cdpTarget{b: s.b, id: t.page.SessionID, ctx: t.crash}
}

// goTab starts fn for tab t through engine.Go: a panic fails the tab's
// current page with EXECUTION_ERROR "internal error" (as recoverHandler
// does for one inside fn), the stack in the log.
func (s *Session) goTab(t *tab, site string, fn func()) {
	engine.Go(t.crash, s.log, site, fn, func(p *engine.Panic) {
		t.blocked.CompareAndSwap(nil, engine.InternalError(p))
	})
}

// goDecide starts decide for a paused request. decide contains its own
// panics (recoverHandler); one before it runs (an injected fault) fails
// the page the same way, settles the verdict and fails the request, so
// the page does not wait for it.
func (s *Session) goDecide(target cdpTarget, t *tab, e *proto.FetchRequestPaused) {
	engine.Go(t.crash, s.log, "browser.decide", func() { s.decide(target, t, e) }, func(p *engine.Panic) {
		t.blocked.CompareAndSwap(nil, engine.InternalError(p))
		t.verdicts.done()
		c, cancel := context.WithTimeout(context.Background(), callTimeout)
		defer cancel()
		_ = proto.FetchFailRequest{RequestID: e.RequestID, ErrorReason: proto.NetworkErrorReasonFailed}.Call(target.with(c))
	})
}

// recoverHandler contains a panic in a browser event handler or CDP callback
// of tab t: the stack goes to the log (stderr) and the tab's current page
// fails with EXECUTION_ERROR "internal error" instead of the process dying.
// Use as `defer s.recoverHandler(t, "what")`.
func (s *Session) recoverHandler(t *tab, what string) {
	p := recover()
	if p == nil {
		return
	}
	s.log.Error("internal error in a browser event handler", "handler", what, "panic", p, "stack", string(debug.Stack()))
	t.blocked.CompareAndSwap(nil, engine.InternalError(&engine.Panic{Site: "browser event " + what, Value: p}))
}

// childEvents handles the events of one child target until it detaches or
// its tab goes away (msgs ends with the child's context).
func (s *Session) childEvents(t *tab, child cdpTarget, grand *childSessions, msgs <-chan *rod.Message) {
	defer s.recoverHandler(t, "child target events")
	for msg := range msgs {
		if msg.SessionID != child.id {
			continue
		}
		switch msg.Method {
		case (&proto.PageFrameNavigated{}).ProtoEvent():
			var ev proto.PageFrameNavigated
			if msg.Load(&ev) && ev.Frame != nil {
				s.noteOrigin(ev.Frame.URL)
			}
		case (&proto.FetchRequestPaused{}).ProtoEvent():
			ev := &proto.FetchRequestPaused{}
			if msg.Load(ev) {
				t.paused.Add(1)
				t.verdicts.start()
				s.goDecide(child, t, ev)
			}
		case (&proto.PageJavascriptDialogOpening{}).ProtoEvent():
			ev := &proto.PageJavascriptDialogOpening{}
			if msg.Load(ev) {
				s.goTab(t, "browser.answerDialog", func() { s.answerDialog(child, t, ev) })
			}
		case (&proto.TargetAttachedToTarget{}).ProtoEvent():
			ev := &proto.TargetAttachedToTarget{}
			if msg.Load(ev) {
				s.goTab(t, "browser.adopt", func() { s.adopt(t, grand, ev) })
			}
		case (&proto.TargetDetachedFromTarget{}).ProtoEvent():
			var ev proto.TargetDetachedFromTarget
			if msg.Load(&ev) {
				grand.end(ev.SessionID)
			}
		}
	}
}

// decide continues a paused request the policy allows and fails the others
// (net::ERR_BLOCKED_BY_CLIENT), recording the first refusal on the tab so
// the page's navigation or step fails with it. A request the policy allows
// whose resource type the tab blocks is failed the same way without being
// recorded: it never reaches the network and never fails the page. target is the session the
// request was paused in (the tab or one of its child targets). The caller
// counted the decision (t.verdicts.start); it is uncounted once the
// refusal, if any, is recorded.
func (s *Session) decide(target cdpTarget, t *tab, e *proto.FetchRequestPaused) {
	defer s.recoverHandler(t, "Fetch.requestPaused")
	decided := false
	settle := func() {
		if !decided {
			decided = true
			t.verdicts.done()
		}
	}
	defer settle()
	c, cancel := context.WithTimeout(context.Background(), callTimeout)
	defer cancel()
	tc := target.with(c)
	if t.synthetic.Load() {
		settle()
		_ = proto.FetchFulfillRequest{RequestID: e.RequestID, ResponseCode: 200, Body: []byte("<!doctype html><title></title>"),
			ResponseHeaders: []*proto.FetchHeaderEntry{{Name: "Content-Type", Value: "text/html"}}}.Call(tc)
		return
	}
	if e.Request != nil {
		if bad := s.policy.check(e.Request.URL); bad != nil {
			// A sub-resource on a host that does not resolve (a dead ad
			// or tracker domain) is refused without failing the page: it
			// could not have loaded anyway. Everything else the policy
			// refuses fails the page, and so does an unresolvable main
			// document.
			if bad.Details["policy"] != "unresolvable" || s.mainDocument(target, t, e) {
				t.blocked.CompareAndSwap(nil, bad)
			}
			settle()
			blockedURL, _ := bad.Details["blockedUrl"].(string)
			s.log.Info("request blocked by the URL policy", "url", t.masked(blockedURL), "code", bad.Code)
			_ = proto.FetchFailRequest{RequestID: e.RequestID, ErrorReason: proto.NetworkErrorReasonBlockedByClient}.Call(tc)
			return
		}
	}
	settle()
	if resourceMask(t.block.Load()).has(e.ResourceType) {
		_ = proto.FetchFailRequest{RequestID: e.RequestID, ErrorReason: proto.NetworkErrorReasonBlockedByClient}.Call(tc)
		return
	}
	_ = proto.FetchContinueRequest{RequestID: e.RequestID}.Call(tc)
}

// answerDialog closes a JavaScript dialog at once, so a page that opens
// one cannot stall its tab (a dialog blocks the renderer, its load and
// every later CDP evaluation) until the page timeout: alerts and
// beforeunload prompts are accepted (so a navigation away proceeds),
// confirm and prompt are dismissed (a run never agrees to something on
// its own). The message goes to the debug log.
func (s *Session) answerDialog(target cdpTarget, t *tab, e *proto.PageJavascriptDialogOpening) {
	defer s.recoverHandler(t, "Page.javascriptDialogOpening")
	accept := e.Type == proto.PageDialogTypeAlert || e.Type == proto.PageDialogTypeBeforeunload
	c, cancel := context.WithTimeout(context.Background(), callTimeout)
	defer cancel()
	err := proto.PageHandleJavaScriptDialog{Accept: accept}.Call(target.with(c))
	s.log.Debug("answered a JavaScript dialog", "type", e.Type, "accepted", accept, "url", e.URL, "err", err)
}

// mainDocument reports whether e is the document request of the tab's own
// main frame (Chromium gives a page target's main frame the target's id).
func (s *Session) mainDocument(target cdpTarget, t *tab, e *proto.FetchRequestPaused) bool {
	return e.ResourceType == proto.NetworkResourceTypeDocument && target.id == t.page.SessionID &&
		e.FrameID == proto.PageFrameID(t.page.TargetID)
}

// Blocked returns the first request of the tab the URL policy refused
// since its last navigation started (nil if none): TRUST_LEVEL_NOT_ALLOWED
// or STEP_EXECUTION_FAILED with details {blockedUrl, policy}.
func (tb *Tab) Blocked() error {
	if e := tb.t.blocked.Load(); e != nil {
		return e
	}
	return nil
}
