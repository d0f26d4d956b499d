package browser

import (
	"slices"

	"github.com/browsertask/browsertask/engine"
)

// Live views of interactive sessions. The interactive tools
// (internal/pagetools) drive a named session's tabs outside any run, so
// those tabs have no run id to be filed under. They are filed in the same
// registry as a run's tabs, under the key LiveSessionKey gives
// ("session:" + the session id), and every live method that takes a run
// id (LiveTabs, LiveFrame, WatchTab, ForgetFrames) takes that key in its
// place. The key cannot collide with a run's: run ids are made by the
// engine alone ("run_" + a UUID) and never hold a colon. Nor can a run's
// routes reach a session's tabs through it: the dashboard looks every run
// id up in the engine first, and no run has such an id. A session's tabs
// are watch-only: nothing holds them for a takeover (there is no run to
// pause and hand back), so DispatchInput, GoTo and HoldRun are never
// called with a session's key.

// liveSessionPrefix starts the registry key of a session's tabs.
const liveSessionPrefix = "session:"

// LiveSessionKey is the live registry's key for the tabs the interactive
// tools drive in session sessionID.
func LiveSessionKey(sessionID string) string { return liveSessionPrefix + sessionID }

// SessionLiveKey returns the key session sessionID's interactive tabs are
// filed under (the key the live methods take in place of a run id) and
// whether the session lives in this process: only then are its tabs in
// this registry, so only then can this process's dashboard show them.
func (m *Manager) SessionLiveKey(sessionID string) (key string, here bool) {
	return LiveSessionKey(sessionID), m.Named(sessionID)
}

// ShowLive files tb, a tab of named session sessionID that the interactive
// tools hold, in the live views under LiveSessionKey(sessionID), named
// label (their tab id, engine.LiveTab.Label); Release then marks it
// closed, as it does a run's tab. A tab a run acquired is filed under its
// run already and stays there: the run's live view owns it. The holder
// calls it once, before Release and from the goroutine that acquired the
// tab (the tools do both under their page's lock).
func (tb *Tab) ShowLive(sessionID, label string) {
	if tb.live != nil || sessionID == "" {
		return
	}
	redact := engine.Redactor(func(s string) string { return s })
	if r := tb.t.redact.Load(); r != nil {
		redact = *r
	}
	lt := tb.s.policy.m.live.open(LiveSessionKey(sessionID), tb.s, tb.t, redact)
	lt.mu.Lock()
	lt.label = label
	lt.mu.Unlock()
	tb.live = lt
}

// forgetSession drops session sessionID's live views when the session
// closes: its tabs are marked closed (their screencasts stop and every
// viewer's frame channel is closed, so the dashboard's streams end at
// once), their last frames are dropped and the entry is removed, so no
// still of a closed session stays in memory. A tab the tools still hold
// is released later; its Release then finds it closed already.
func (m *Manager) forgetSession(sessionID string) {
	l, key := m.live, LiveSessionKey(sessionID)
	l.mu.Lock()
	r := l.runs[key]
	delete(l.runs, key)
	l.order = slices.DeleteFunc(l.order, func(id string) bool { return id == key })
	l.mu.Unlock()
	if r == nil {
		return
	}
	for _, lt := range r.tabs {
		l.close(lt)
		lt.mu.Lock()
		lt.last = nil
		lt.mu.Unlock()
	}
}
