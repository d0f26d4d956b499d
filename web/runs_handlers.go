package web

import (
	"encoding/json"
	"net/http"
	"net/url"
	"strconv"
	"time"

	"github.com/browsertask/browsertask/engine"
)

// runsPageSize is how many runs one page of the list shows.
const runsPageSize = 25

// runsPage serves the runs list; with HX-Request only the live table.
func (d *Dashboard) runsPage(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	v := RunsView{Page: d.page("Runs", "runs"), Status: q.Get("status"), Template: q.Get("template"), Profile: q.Get("profile")}
	if v.Status != "" && !engine.RunStatus(v.Status).Valid() {
		v.Status = ""
	}
	offset, _ := strconv.Atoi(q.Get("offset"))
	offset = max(offset, 0)
	list, err := d.eng.List(r.Context(), engine.ListQuery{Status: v.Status, TemplateID: v.Template, Profile: v.Profile, Limit: runsPageSize, Offset: offset})
	if err != nil {
		d.fail(w, r, err)
		return
	}
	now := d.now()
	for _, run := range list.Runs {
		v.Rows = append(v.Rows, runRow(run, now, d.eng.InputsSummary))
		v.Live = v.Live || !run.Status.Terminal()
	}
	if v.Waiting, err = d.waitingRuns(r); err != nil {
		d.fail(w, r, err)
		return
	}
	for _, s := range engine.AllStatuses {
		v.Statuses = append(v.Statuses, string(s))
	}
	for _, t := range d.eng.Templates() {
		v.Templates = append(v.Templates, t.TemplateID)
	}
	v.Profiles = d.profileNames(r.Context(), v.Profile)
	v.Total, v.Filtered = list.Total, v.Status != "" || v.Template != "" || v.Profile != ""
	if len(v.Rows) > 0 {
		v.From, v.To = offset+1, offset+len(v.Rows)
	}
	link := func(off int) string {
		u := url.Values{}
		if v.Status != "" {
			u.Set("status", v.Status)
		}
		if v.Template != "" {
			u.Set("template", v.Template)
		}
		if v.Profile != "" {
			u.Set("profile", v.Profile)
		}
		if off > 0 {
			u.Set("offset", strconv.Itoa(off))
		}
		if len(u) == 0 {
			return "/"
		}
		return "/?" + u.Encode()
	}
	v.SelfURL = link(offset)
	if offset > 0 {
		v.PrevURL = link(max(offset-runsPageSize, 0))
	}
	if offset+len(v.Rows) < list.Total {
		v.NextURL = link(offset + runsPageSize)
	}
	if r.Header.Get("HX-Trigger") == "filters" {
		// The address bar shows the filters set, not the empty ones the
		// form sends too.
		w.Header().Set("HX-Push-Url", v.SelfURL)
	}
	d.render(w, r, http.StatusOK, runsPage(v), runsTable(v))
}

// maxWaitingScan bounds how many running runs waitingRuns looks at.
const maxWaitingScan = 1000

// waitingRuns counts the running runs that wait for a person's answer.
func (d *Dashboard) waitingRuns(r *http.Request) (int, error) {
	list, err := d.eng.List(r.Context(), engine.ListQuery{Status: string(engine.StatusRunning), Limit: maxWaitingScan})
	if err != nil {
		return 0, err
	}
	n := 0
	for _, run := range list.Runs {
		if run.Question != nil {
			n++
		}
	}
	return n, nil
}

// runRow builds a table row; summarize is the engine's one-line
// summary of a run's inputs (Engine.InputsSummary).
func runRow(run *engine.Run, now time.Time, summarize func(templateID string, inputs json.RawMessage) string) RunRow {
	row := RunRow{
		ID: run.RunID, ShortID: shortID(run.RunID), Template: run.TemplateID, Status: string(run.Status),
		Progress: progressView(run.Progress), Age: ago(now, run.CreatedAt), Session: shortID(run.SessionID),
		Created: time.UnixMilli(run.CreatedAt).Format(time.RFC3339), Terminal: run.Status.Terminal(),
		DetailURL: "/runs/" + url.PathEscape(run.RunID),
		Waiting:   run.Status == engine.StatusRunning && run.Question != nil,
		Profile:   run.Profile,
	}
	if run.Profile != "" {
		row.ProfileURL = profileRunsURL(run.Profile)
	}
	row.SummaryFull = summarize(run.TemplateID, run.Inputs)
	row.Summary = clip(row.SummaryFull, maxSummary)
	if run.StartedAt != nil {
		row.Duration = span(time.Duration(run.Metrics.ElapsedMs) * time.Millisecond)
	} else {
		row.Duration = "—"
	}
	return row
}

// runPage serves a run's detail; with HX-Request only its live region.
func (d *Dashboard) runPage(w http.ResponseWriter, r *http.Request) {
	v, err := d.runView(r, r.PathValue("id"))
	if err != nil {
		d.fail(w, r, err)
		return
	}
	if rid := r.URL.Query().Get(answeredParam); rid != "" {
		v.AnswerNote = answerNote(rid)
	}
	if r.Header.Get("HX-Request") != "true" {
		if run, err := d.eng.Get(r.Context(), v.ID); err == nil {
			v.Live = d.liveView(r.Context(), run)
		}
	}
	d.render(w, r, http.StatusOK, runPage(v), runLive(v))
}

// confirmCancelPage serves GET /runs/{id}/cancel: the confirmation step of
// a Cancel pressed without JavaScript (with it, the button asks itself,
// hx-confirm, and posts). It changes nothing; its form posts the cancel.
func (d *Dashboard) confirmCancelPage(w http.ResponseWriter, r *http.Request) {
	v, err := d.runView(r, r.PathValue("id"))
	if err != nil {
		d.fail(w, r, err)
		return
	}
	v.Page.Title = "Cancel run " + shortID(v.ID) + "?"
	d.render(w, r, http.StatusOK, confirmCancelPage(v), nil)
}

// cancelRun cancels the run, then answers the live region (htmx) or
// redirects back to the detail page (plain form).
func (d *Dashboard) cancelRun(w http.ResponseWriter, r *http.Request) {
	id := r.PathValue("id")
	res, err := d.eng.Cancel(r.Context(), id, "canceled from the dashboard")
	if err != nil {
		d.fail(w, r, err)
		return
	}
	if r.Header.Get("HX-Request") != "true" {
		http.Redirect(w, r, "/runs/"+url.PathEscape(id), http.StatusSeeOther)
		return
	}
	v, err := d.runView(r, id)
	if err != nil {
		d.fail(w, r, err)
		return
	}
	if !res.Success {
		v.CancelNote = res.Reason
	}
	d.render(w, r, http.StatusOK, runLive(v), runLive(v))
}
