package web

import (
	"context"
	"net/http"
	"net/url"
)

// The live view of an interactive session (the session page's "Live view"
// section): the tabs the interactive tools (browser_navigate, browser_tabs,
// …) drive in a named session, streamed like a run's by the one streamer
// (serveLive) from the browser's live registry, where the tools file them
// under the session's key (Live.SessionLiveKey: "session:<id>", which no
// run id can equal). The stream's source checks, on every tick, that the
// session is still open and lives in this process; it ends ("end") when
// the session closes, and the browser drops the session's frames then.
//
// It is watch-only: no "Take over", no input, no address bar. A takeover
// pauses a run and hands it back on Done; nothing waits on a session
// between two tool calls, and a person's clicks would land in the middle
// of an agent's steps unannounced.
//
// Private frames (live_private.go) do not apply: they keep a person's own
// typing in a profile's sign-in from later viewers. In a session every
// value typed comes from the MCP client's own tool calls, frames live in
// memory only while the session is open, and the person watching holds
// the dashboard token, with which they could drive the session
// themselves. Recorded calls mask a secret field's value because they are
// stored; a frame is not. Secrets a run types are still obscured in the
// page itself (browser.TypeSecret) for any viewer.

// Notes of a session's live view.
const (
	sessionLiveEmpty     = "No tab is open in this session right now; the tabs the interactive tools open show here."
	sessionLiveClosed    = "The session is closed; its tabs are gone."
	sessionLiveNoBrowser = "This process has no browser, so there is nothing to show."
	sessionElsewhere     = "Another browsertask process sharing this database holds this session's browser; its tabs show on that process's dashboard."
)

// sessionLiveStreamURL is the frame stream of session id's tabs.
func sessionLiveStreamURL(id string) string {
	return "/sessions/" + url.PathEscape(id) + "/live/stream"
}

// sessionLiveView builds the live view of session id (nil once the
// session is closed: the page then shows no live view). streamed names
// the tabs' frame events (the stream's panels only; the page's first
// render has none).
func (d *Dashboard) sessionLiveView(ctx context.Context, id string, open, streamed bool) *LiveView {
	if !open {
		return nil
	}
	if d.live == nil {
		return &LiveView{Note: sessionLiveNoBrowser}
	}
	key, here := d.live.SessionLiveKey(id)
	if !here {
		return &LiveView{Elsewhere: sessionElsewhere}
	}
	lv := &LiveView{StreamURL: sessionLiveStreamURL(id), Tabs: d.liveTabViews(ctx, key, "", streamed)}
	if len(lv.Tabs) == 0 {
		lv.Note = sessionLiveEmpty
	}
	return lv
}

// sessionOpen reports whether session id is open (created, neither closed
// nor expired).
func (d *Dashboard) sessionOpen(ctx context.Context, id string) (bool, error) {
	list, err := d.eng.ListSessions(ctx)
	if err != nil {
		return false, err
	}
	for _, s := range list {
		if s.ID == id && s.ClosedAt == nil {
			return true, nil
		}
	}
	return false, nil
}

// sessionLiveStream serves GET /sessions/{id}/live/stream: the session's
// tabs and their frames as Server-Sent Events (serveLive) until the
// session closes (then a last "tabs" saying so, and "end") or the viewer
// leaves. A session that never was is 404, as its page is; a closed one
// answers the closing note and "end" (an EventSource that got an error
// status would be reconnected forever by htmx's sse extension).
func (d *Dashboard) sessionLiveStream(w http.ResponseWriter, r *http.Request) {
	id := r.PathValue("id")
	open, err := d.sessionOpen(r.Context(), id)
	if err != nil {
		d.fail(w, r, err)
		return
	}
	if !open {
		evs, err := d.eng.SessionEvents(r.Context(), id, 0, 1)
		if err != nil {
			d.fail(w, r, err)
			return
		}
		if len(evs) == 0 {
			d.notFound(w, r)
			return
		}
	}
	key := ""
	if d.live != nil {
		key, _ = d.live.SessionLiveKey(id)
	}
	d.serveLive(w, r, key, func(ctx context.Context) (*LiveView, bool, error) {
		open, err := d.sessionOpen(ctx, id)
		if err != nil {
			return nil, false, err
		}
		lv := d.sessionLiveView(ctx, id, open, true)
		if lv == nil {
			// The browser dropped the session's tabs and frames as it
			// closed (browser.Manager.CloseSession).
			return &LiveView{Note: sessionLiveClosed}, true, nil
		}
		return lv, lv.StreamURL == "", nil
	})
}
