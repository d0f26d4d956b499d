// Package pagetools is the interactive side of a browser session: MCP tools
// that navigate one page of a session, read it as a snapshot made for a
// model (internal/snapshot), act on its elements by reference and capture
// it, one call at a time, as a person at the keyboard would. It plugs into
// the MCP server as an mcp.Plugin, since the server itself knows only the
// engine.
package pagetools

import (
	"context"
	"sync"
	"sync/atomic"

	"github.com/browsertask/browsertask/browser"
	"github.com/browsertask/browsertask/engine"
	"github.com/browsertask/browsertask/internal/snapshot"
)

// Sessions is what the tools ask of the engine: the open sessions, so a
// page is only ever opened in a session create_browser_session made and
// that is neither closed nor expired.
type Sessions interface {
	ListSessions(ctx context.Context) ([]*engine.Session, error)
	// RecordSessionEvent stores a call of the tools on a session
	// (events.go), for the dashboard's session page.
	RecordSessionEvent(ctx context.Context, ev engine.SessionEvent) error
}

// Browsers is what the tools ask of the browser manager.
type Browsers interface {
	Named(sessionID string) bool
	// Policy is the URL policy runs are held to (trust level, file:,
	// the daemon's own listener).
	Policy() engine.URLPolicy
	Session(ctx context.Context, sessionID string) (*browser.Session, error)
}

// page is what a session's interactive tools drive: its tabs (tabs.go),
// with tab and refs the current one's tab and reference table. mu
// serialises the calls on it: two actions on one page at once would
// interleave their input events.
type page struct {
	// id is the session's id: its tabs show in the dashboard's live view
	// of the session under it (tabs.go add, browser.Tab.ShowLive).
	id    string
	mu    sync.Mutex
	tab   *browser.Tab
	refs  *snapshot.Refs
	files pageFiles
	set   tabSet
	sess  *browser.Session
	// seq numbers the console messages of all its tabs.
	seq atomic.Int64
	// notes are what the call's tab syncs saw (popups, closed tabs), for
	// its answer.
	notes []string
}

// pages holds the page of each session that used the tools.
type pages struct {
	sessions Sessions
	browsers Browsers
	mu       sync.Mutex
	bySess   map[string]*page
}

// get returns the session's page, locked: the caller unlocks it. A tab is
// taken from the session on first use and kept (it is not returned to the
// session's pool, so what the person or model did on it stays). Errors:
// SESSION_NOT_FOUND when sessionID is not an open session; EXECUTION_ERROR
// when it belongs to another server process.
func (ps *pages) get(ctx context.Context, sessionID string) (*page, error) {
	if sessionID == "" {
		return nil, &engine.Error{Code: engine.InvalidParameter, Message: "sessionId is required",
			Recovery: "create one with create_browser_session and pass its sessionId"}
	}
	list, err := ps.sessions.ListSessions(ctx)
	if err != nil {
		return nil, err
	}
	open := false
	for _, s := range list {
		open = open || (s.ID == sessionID && s.ClosedAt == nil)
	}
	ps.sweep(list)
	if !open {
		ps.drop(sessionID)
		return nil, engine.Errorf(engine.SessionNotFound, "sessionId %q is not an open browser session", sessionID)
	}
	if !ps.browsers.Named(sessionID) {
		return nil, engine.Errorf(engine.ExecutionError, "session %s belongs to another server process", sessionID)
	}
	ps.mu.Lock()
	p := ps.bySess[sessionID]
	if p == nil {
		p = &page{id: sessionID, refs: snapshot.NewRefs()}
		ps.bySess[sessionID] = p
	}
	ps.mu.Unlock()
	p.mu.Lock()
	p.notes = nil
	s, err := ps.browsers.Session(ctx, sessionID)
	if err == nil && p.tab == nil {
		// The tab outlives this call: bound to no request's context.
		var tb *browser.Tab
		if tb, err = s.AcquireTab(context.WithoutCancel(ctx)); err == nil {
			p.use(p.add(tb))
		}
	}
	if err != nil {
		p.mu.Unlock()
		return nil, err
	}
	p.sess = s
	p.notes = p.sync(ctx, s)
	if err := ps.startFiles(ctx, sessionID, p); err != nil {
		p.mu.Unlock()
		return nil, err
	}
	return p, nil
}

// failed forgets p's tab when err says it is gone (crashed, session
// closed), so the next call takes a new one.
func (p *page) failed(err error) {
	switch engine.CodeOf(err) {
	case engine.PageCrashed:
		if p.set.cur != nil {
			p.remove(p.set.cur)
		}
	case engine.SessionNotFound:
		p.closeAll()
	}
}

// drop releases the page of a session that is no longer open.
func (ps *pages) drop(sessionID string) {
	ps.mu.Lock()
	p := ps.bySess[sessionID]
	delete(ps.bySess, sessionID)
	ps.mu.Unlock()
	if p != nil {
		p.mu.Lock()
		p.closeAll()
		p.files.close()
		p.mu.Unlock()
	}
}

// closeAll closes every tab of the page.
func (p *page) closeAll() {
	for len(p.set.all) > 0 {
		p.remove(p.set.all[0])
	}
}
