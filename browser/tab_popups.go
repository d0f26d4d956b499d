package browser

import (
	"context"

	"github.com/go-rod/rod/lib/proto"

	"github.com/browsertask/browsertask/engine"
)

// PageTarget is what the browser says of one page target of a session's
// browser context: a tab a holder took, or a popup one of its pages opened.
type PageTarget struct {
	ID     proto.TargetTargetID
	Opener proto.TargetTargetID
	URL    string
	Title  string
}

// PageTargets lists the page targets of the browser context tab tb lives
// in (the same browser of a spread session), so the interactive tools can
// see the popups their tab opened and the tabs a page closed. Errors:
// PAGE_CRASHED, EXECUTION_ERROR.
func (tb *Tab) PageTargets(ctx context.Context) ([]PageTarget, error) {
	s := tb.s
	res, err := proto.TargetGetTargets{}.Call(s.b.Context(ctx))
	if err != nil {
		return nil, tb.mapErr(ctx, err, "list the tabs")
	}
	var out []PageTarget
	for _, ti := range res.TargetInfos {
		if ti.Type != proto.TargetTargetInfoTypePage || ti.BrowserContextID != s.b.BrowserContextID {
			continue
		}
		out = append(out, PageTarget{ID: ti.TargetID, Opener: ti.OpenerID, URL: ti.URL, Title: ti.Title})
	}
	return out, nil
}

// TargetID is the tab's page target.
func (tb *Tab) TargetID() proto.TargetTargetID { return tb.t.page.TargetID }

// AdoptPopup makes page target id, a popup a page of opener's browser
// context opened (a target=_blank link, window.open), a Tab of session s
// held by the caller until Release, as if AcquireTab had opened it: its
// requests are held to the URL policy by interception of its own (the
// opener's auto-attach already pauses them; the popup must stay checked
// after the opener closes), its crashes end calls with PAGE_CRASHED, and
// Release(false) closes it. It takes one of the session's MaxTabs slots
// without waiting: a session that has them all in use refuses. Errors:
// INVALID_PARAMETER when the session has MaxTabs tabs in use; PAGE_CRASHED,
// SESSION_NOT_FOUND, EXECUTION_ERROR from the browser.
func (s *Session) AdoptPopup(ctx context.Context, opener *Tab, id proto.TargetTargetID) (*Tab, error) {
	select {
	case s.slots <- struct{}{}:
	default:
		return nil, &engine.Error{Code: engine.InvalidParameter, Message: "the session has its maximum of tabs open",
			Recovery: "close a tab (browser_tabs action close) to see the popup"}
	}
	part := opener.s
	m := s.policy.m
	if _, err := m.reserve(ctx, part.in); err != nil {
		<-s.slots
		return nil, err
	}
	free := func() {
		m.unreserve(part.in)
		<-s.slots
	}
	t, err := part.attachTab(ctx, id)
	if err != nil {
		free()
		return nil, err
	}
	redact := engine.RedactorFrom(ctx)
	t.redact.Store(&redact)
	tb := &Tab{s: part, t: t, free: free}
	tb.stop = context.AfterFunc(ctx, func() { tb.stopLoading(true) })
	return tb, nil
}

// attachTab wires an existing page target of the session's context as
// takeTab wires one it opened.
func (s *Session) attachTab(ctx context.Context, id proto.TargetTargetID) (*tab, error) {
	s.mu.Lock()
	closed := s.closed
	s.mu.Unlock()
	if closed || !s.in.alive(s.gen) {
		return nil, s.goneErr()
	}
	p, err := s.b.PageFromTarget(id)
	if err != nil {
		return nil, s.mapErr(ctx, nil, err, "attach to a popup")
	}
	t := &tab{page: p}
	t.crash, t.markCrashed = context.WithCancel(engine.CarryFaults(context.Background(), ctx))
	if err := s.watchTab(t); err != nil {
		t.markCrashed()
		return nil, s.mapErr(ctx, nil, err, "set up a popup")
	}
	s.watchDocs(t)
	s.endOnLost(t)
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		t.markCrashed()
		return nil, s.goneErr()
	}
	s.tabs[p.TargetID] = t
	s.mu.Unlock()
	return t, nil
}
