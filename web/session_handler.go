package web

import (
	"net/http"
	"net/url"
	"time"

	"github.com/browsertask/browsertask/engine"
)

// sessionEventsShown is how many of a session's latest calls its page
// shows.
const sessionEventsShown = 500

// SessionView is one browser session's page: its state and its calls.
type SessionView struct {
	Page  Page
	ID    string
	State string
	// Events are the latest calls, oldest first; Older counts the earlier
	// ones not shown.
	Events []SessionEventRow
	Older  int64
	// Live is the live view of the session's tabs (nil once it closed).
	Live *LiveView
	// Open is whether the session is open: its calls table then polls
	// SelfURL (the page's own address) for new calls.
	Open    bool
	SelfURL string
}

// SessionEventRow is one interactive call as the page shows it.
type SessionEventRow struct {
	engine.SessionEvent
	When string
}

// sessionPage shows a session's interactive calls (engine.SessionEvent),
// the latest 500, oldest first. A session that never was is 404; a closed
// or expired one still shows what was done in it.
func (d *Dashboard) sessionPage(w http.ResponseWriter, r *http.Request) {
	id := r.PathValue("id")
	v := SessionView{Page: d.page("Session", "sessions"), ID: id, State: "closed or expired"}
	open, err := d.eng.ListSessions(r.Context())
	if err != nil {
		d.fail(w, r, err)
		return
	}
	now := d.now()
	isOpen := false
	for _, s := range open {
		if s.ID == id && s.ClosedAt == nil {
			isOpen = true
			v.State = "open, expires in " + (time.Duration(s.ExpiresAt-now.UnixMilli()) * time.Millisecond).Round(time.Second).String()
		}
	}
	v.Live = d.sessionLiveView(r.Context(), id, isOpen, false)
	v.Open, v.SelfURL = isOpen, "/sessions/"+url.PathEscape(id)
	var all []engine.SessionEvent
	for after := int64(0); ; {
		page, err := d.eng.SessionEvents(r.Context(), id, after, engine.MaxEventLimit)
		if err != nil {
			d.fail(w, r, err)
			return
		}
		all = append(all, page...)
		if len(page) < engine.MaxEventLimit {
			break
		}
		after = page[len(page)-1].Seq
		if n := len(all) - sessionEventsShown; n > 0 {
			v.Older += int64(n)
			all = all[n:]
		}
	}
	if n := len(all) - sessionEventsShown; n > 0 {
		v.Older += int64(n)
		all = all[n:]
	}
	if len(all) == 0 && v.State != "closed or expired" {
		v.State += "; no calls yet"
	} else if len(all) == 0 {
		d.notFound(w, r)
		return
	}
	for _, e := range all {
		v.Events = append(v.Events, SessionEventRow{SessionEvent: e, When: ago(now, e.At)})
	}
	d.render(w, r, http.StatusOK, sessionPage(v), sessionCalls(v))
}
