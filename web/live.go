package web

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/browsertask/browsertask/engine"
)

// Live views (the run page's "Live view" section): the process that
// executes a run streams its tabs to the run page as Server-Sent Events —
// a "tabs" event (the tabs' panels: title, URL, newest frame, whether they
// take input) whenever that changes, a "frame-<tab>" event per screencast
// frame (an <img>), and "end" when the run is over — and takes the
// person's input for a tab while a takeover is open. The stream, the input
// and "Take over" pass the same guard as every route (Host, cross-origin:
// the stream is checked like a state change, token).

// Live is what the dashboard needs of the browser for live views;
// *browser.Manager implements it.
type Live interface {
	LiveTabs(ctx context.Context, runID string) []engine.LiveTab
	LiveFrame(runID, tabID string) *engine.LiveFrame
	WatchTab(ctx context.Context, runID, tabID string, width, height int) (<-chan engine.LiveFrame, error)
	DispatchInput(ctx context.Context, runID, tabID string, events []engine.LiveInput) error
	HoldRun(runID string) (release func())
	GoTo(ctx context.Context, runID, tabID, rawURL string) error
	ForgetFrames(runID string)
	// SessionLiveKey is the key a session's interactive tabs are filed
	// under, taken by LiveTabs, LiveFrame, WatchTab and ForgetFrames in
	// place of a run id, and whether the session lives in this process
	// (session_live.go).
	SessionLiveKey(sessionID string) (key string, here bool)
}

// Live view limits.
const (
	liveTick          = 500 * time.Millisecond // how often the stream looks at the tabs and the run
	liveDefaultWidth  = 960
	liveDefaultHeight = 640
	maxLiveEvents     = 500     // input events per request
	maxLiveInputBytes = 1 << 20 // input request body
)

// isLivePath reports whether a path is a live view route whose GET must be
// same-origin too (the frame stream shows a run's or a session's browser).
func isLivePath(p string) bool {
	return (strings.HasPrefix(p, "/runs/") || strings.HasPrefix(p, "/sessions/")) && strings.Contains(p, "/live/")
}

// liveView builds the live view of run (nil for a run that has none to
// show: finished with no stills kept here).
func (d *Dashboard) liveView(ctx context.Context, run *engine.Run) *LiveView {
	id := run.RunID
	base := "/runs/" + url.PathEscape(id)
	lv := &LiveView{TakeOverURL: base + "/takeover"}
	switch {
	case run.Status.Terminal():
		if d.live == nil {
			return nil
		}
		if framesPrivate(run) {
			d.live.ForgetFrames(id)
			lv.Note = privateFramesOver
			return lv
		}
		// Only the tabs somebody watched have a last frame to show.
		for _, t := range d.liveTabViews(ctx, id, runLiveBase(id), false) {
			if t.Frame != "" {
				lv.Tabs = append(lv.Tabs, t)
			}
		}
		if len(lv.Tabs) == 0 {
			return nil
		}
		lv.Note = "The run is over; these are the last frames of its tabs."
		return lv
	case run.Status == engine.StatusQueued:
		lv.StreamURL = base + "/live/stream"
		lv.Note = "The run has not started yet; its tabs show here once it opens them."
		return lv
	}
	where := d.eng.LiveLocation(ctx, run)
	if !where.Here {
		lv.Elsewhere = d.elsewhere(where)
		lv.ElsewhereURL = where.URL
		return lv
	}
	lv.StreamURL = base + "/live/stream"
	d.fillLive(ctx, run, lv, true)
	return lv
}

// elsewhere says where a live view is served by another process.
func (d *Dashboard) elsewhere(w engine.LiveWhere) string {
	switch {
	case w.PID != 0 && w.URL != "":
		return fmt.Sprintf("Another browsertask process (pid %d) runs this run; its browser is shown on that process's dashboard.", w.PID)
	case w.PID != 0:
		return fmt.Sprintf("Another browsertask process (pid %d) runs this run and serves no dashboard, so its browser cannot be shown here. Start it with the HTTP listener to watch it.", w.PID)
	}
	return "The process that runs this run is not known (it may have just stopped); its browser cannot be shown here."
}

// fillLive sets the tabs, Control and CanTakeOver of a run executing here.
func (d *Dashboard) fillLive(ctx context.Context, run *engine.Run, lv *LiveView, streamed bool) {
	if d.live == nil {
		lv.Note = "This process has no browser, so there is nothing to show."
		return
	}
	lv.Control = d.inTakeover(ctx, run.RunID)
	if framesPrivate(run) && !lv.Control {
		// Nobody has the wheel: no frame is shown, streamed or kept.
		d.live.ForgetFrames(run.RunID)
		lv.Tabs = d.liveTabViews(ctx, run.RunID, runLiveBase(run.RunID), false)
		for i := range lv.Tabs {
			lv.Tabs[i].Frame, lv.Tabs[i].Hidden = "", true
		}
		lv.CanTakeOver = !lv.Control
		if len(lv.Tabs) == 0 {
			lv.Note = "The run has no tab open right now."
		}
		return
	}
	lv.Tabs = d.liveTabViews(ctx, run.RunID, runLiveBase(run.RunID), streamed)
	lv.CanTakeOver = !lv.Control
	if len(lv.Tabs) == 0 {
		lv.Note = "The run has no tab open right now."
	}
}

// runLiveBase is where the routes of run runID's tabs start.
func runLiveBase(runID string) string { return "/runs/" + url.PathEscape(runID) + "/live/" }

// liveTabViews lists the tabs filed under key (a run id, or a session's
// key) with their newest frames. base is where the tabs' input and address
// bar routes start; "" for a watch-only view (a session's), whose tabs get
// none.
func (d *Dashboard) liveTabViews(ctx context.Context, key, base string, streamed bool) []LiveTabView {
	var out []LiveTabView
	for _, t := range d.live.LiveTabs(ctx, key) {
		v := LiveTabView{ID: t.ID, URL: t.URL, Title: t.Title, Label: t.Label, Closed: t.Closed}
		if base != "" {
			v.InputURL, v.GoURL = base+url.PathEscape(t.ID)+"/input", base+url.PathEscape(t.ID)+"/goto"
		}
		if f := d.live.LiveFrame(key, t.ID); f != nil {
			v.Frame = frameURL(*f)
		}
		if streamed && !t.Closed {
			v.Event = frameEvent(t.ID)
		}
		out = append(out, v)
	}
	return out
}

// frameEvent is the stream's event name for a tab's frames.
func frameEvent(tabID string) string { return "frame-" + tabID }

// frameURL is a frame as a data: URL.
func frameURL(f engine.LiveFrame) string {
	return "data:image/jpeg;base64," + base64.StdEncoding.EncodeToString(f.JPEG)
}

// inTakeover reports whether run runID waits for a takeover.
func (d *Dashboard) inTakeover(ctx context.Context, runID string) bool {
	pending, err := d.eng.PendingQuestions(ctx, runID)
	if err != nil {
		return false
	}
	for _, q := range pending {
		if q.Kind == engine.QuestionTakeover {
			return true
		}
	}
	return false
}

// liveStream serves GET /runs/{id}/live/stream: the run's tabs and their
// frames as Server-Sent Events until the run ends (then "end") or the
// viewer leaves. Frames flow only while someone watches: each open tab is
// watched (browser screencast) for as long as this stream lasts. ?w= and
// ?h= are the viewer's frame size in device pixels.
func (d *Dashboard) liveStream(w http.ResponseWriter, r *http.Request) {
	id := r.PathValue("id")
	run, err := d.eng.Get(r.Context(), id)
	if err != nil {
		d.fail(w, r, err)
		return
	}
	d.serveLive(w, r, id, func(ctx context.Context) (*LiveView, bool, error) {
		if run == nil {
			if run, err = d.eng.Get(ctx, id); err != nil {
				return nil, false, err
			}
		}
		lv, over := d.runLiveNow(ctx, run)
		run = nil // read again on the next tick
		return lv, over, nil
	})
}

// runLiveNow is a run's live view as its stream sends it: nil while the
// run is queued (nothing to send yet); over once it ended or another
// process runs it.
func (d *Dashboard) runLiveNow(ctx context.Context, run *engine.Run) (lv *LiveView, over bool) {
	if run.Status == engine.StatusQueued {
		return nil, false
	}
	lv = d.liveView(ctx, run)
	if lv == nil {
		lv = &LiveView{Note: "The run is over."}
	}
	over = run.Status.Terminal() || lv.StreamURL == ""
	if over && run.Status.Terminal() && !framesPrivate(run) {
		lv.Note = "The run is over; these are the last frames of its tabs."
		if len(lv.Tabs) == 0 {
			lv.Note = "The run is over."
		}
	}
	return lv, over
}

// queryInt reads a positive integer query parameter (def when absent or
// not a positive integer).
func queryInt(r *http.Request, name string, def int) int {
	n, err := strconv.Atoi(r.URL.Query().Get(name))
	if err != nil || n <= 0 {
		return def
	}
	return n
}

// liveInput serves POST /runs/{id}/live/{tab}/input: a JSON body
// {"events": [engine.LiveInput …]} sent to the tab in order. Accepted only
// while the run waits for a takeover (409 otherwise) and only by the
// process that runs it. Answers 204, or a JSON error naming the field.
func (d *Dashboard) liveInput(w http.ResponseWriter, r *http.Request) {
	id, tab := r.PathValue("id"), r.PathValue("tab")
	if ct := r.Header.Get("Content-Type"); !strings.HasPrefix(ct, "application/json") {
		jsonError(w, http.StatusUnsupportedMediaType, engine.Errorf(engine.InvalidParameter, "send the input as application/json, got %q", ct))
		return
	}
	var body struct {
		Events []engine.LiveInput `json:"events"`
	}
	dec := json.NewDecoder(http.MaxBytesReader(w, r.Body, maxLiveInputBytes))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&body); err != nil {
		jsonError(w, http.StatusBadRequest, engine.Errorf(engine.InvalidParameter, "input body: %v; send {\"events\": [{\"type\": …}]}", err).
			WithDetails(map[string]any{"field": "events"}))
		return
	}
	if len(body.Events) == 0 || len(body.Events) > maxLiveEvents {
		jsonError(w, http.StatusBadRequest, engine.Errorf(engine.InvalidParameter, "events must hold 1 to %d input events, got %d", maxLiveEvents, len(body.Events)).
			WithDetails(map[string]any{"field": "events"}))
		return
	}
	for _, ev := range body.Events {
		if err := ev.Validate(); err != nil {
			jsonError(w, http.StatusBadRequest, err)
			return
		}
	}
	run, err := d.eng.Get(r.Context(), id)
	if err != nil {
		jsonError(w, errorStatus(engine.AsError(err)), err)
		return
	}
	if where := d.eng.LiveLocation(r.Context(), run); !where.Here || d.live == nil {
		jsonError(w, http.StatusConflict, engine.Errorf(engine.InvalidParameter, "run %s does not run in this process: send input to the dashboard of the process that runs it", id).
			WithDetails(map[string]any{"field": "runId"}))
		return
	}
	if !d.inTakeover(r.Context(), id) {
		jsonError(w, http.StatusConflict, engine.Errorf(engine.InvalidParameter, "run %s is not waiting for a takeover: press Take over first (input goes to a tab only during a takeover)", id).
			WithDetails(map[string]any{"field": "runId"}))
		return
	}
	if err := d.live.DispatchInput(r.Context(), id, tab, body.Events); err != nil {
		jsonError(w, errorStatus(engine.AsError(err)), err)
		return
	}
	w.WriteHeader(http.StatusNoContent)
}

// jsonError answers a domain error as JSON {"error": {code, message, details}}.
func jsonError(w http.ResponseWriter, status int, err error) {
	e := engine.AsError(err)
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(map[string]any{"error": map[string]any{"code": e.Code, "message": e.Message, "details": e.Details}})
}

// takeOver serves POST /runs/{id}/takeover ("Take over"): the run pauses
// (its tabs stop at their next browser call), a takeover question opens,
// and the tabs take the person's input until Done. A plain form is
// redirected to the run page; htmx gets the live region.
func (d *Dashboard) takeOver(w http.ResponseWriter, r *http.Request) {
	id := r.PathValue("id")
	if d.live == nil {
		d.fail(w, r, engine.Errorf(engine.InvalidParameter, "this process has no browser to take over"))
		return
	}
	_, err := d.eng.TakeOver(r.Context(), id, func() func() { return d.live.HoldRun(id) })
	if err == nil {
		d.log.Info("run taken over from the dashboard", "runId", id)
	}
	if engine.CodeOf(err) == engine.RunNotFound {
		d.fail(w, r, err)
		return
	}
	if r.Header.Get("HX-Request") != "true" && err == nil {
		http.Redirect(w, r, "/runs/"+url.PathEscape(id), http.StatusSeeOther)
		return
	}
	v, verr := d.runView(r, id)
	if verr != nil {
		d.fail(w, r, verr)
		return
	}
	status := http.StatusOK
	if err != nil {
		v.AnswerError = errorView(engine.AsError(err))
		if r.Header.Get("HX-Request") != "true" {
			status = errorStatus(engine.AsError(err))
		}
	}
	d.render(w, r, status, runPage(v), answerReply(v))
}
