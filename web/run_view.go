package web

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"sort"
	"strings"
	"time"

	"github.com/browsertask/browsertask/engine"
)

// Limits of the detail page, so a 1000-URL run stays quick to render.
const (
	maxItemRows  = 500
	maxEventRows = 100
)

// runView builds the detail view model from one read of the run (with its
// items and events). Errors: RUN_NOT_FOUND.
func (d *Dashboard) runView(r *http.Request, id string) (RunView, error) {
	detail, err := d.eng.Detail(r.Context(), id)
	if err != nil {
		return RunView{}, err
	}
	run, items, evs := detail.Run, detail.Items, detail.Events
	now := d.now()
	v := RunView{
		Page: d.page("Run "+shortID(run.RunID), "runs"),
		ID:   run.RunID, Template: run.TemplateID, Version: run.TemplateVersion, Status: string(run.Status),
		Terminal: run.Status.Terminal(), Session: run.SessionID, BrowserProfile: run.Profile, OwnsSession: run.OwnsSession, Mode: string(run.Mode),
		Created: clock(&run.CreatedAt), Started: clock(run.StartedAt), Finished: clock(run.FinishedAt),
		Queued:   span(time.Duration(run.Metrics.QueuedMs) * time.Millisecond),
		Progress: progressView(run.Progress), Error: errorView(run.Error), Result: pretty(shownResult(run.Result)),
		SelfURL: "/runs/" + url.PathEscape(run.RunID), CancelURL: "/runs/" + url.PathEscape(run.RunID) + "/cancel",
		ConfirmCancelURL: "/runs/" + url.PathEscape(run.RunID) + "/cancel",
		AnswerURL:        "/runs/" + url.PathEscape(run.RunID) + "/answer",
	}
	v.Progress.Message = contractSpelling(v.Progress.Message)
	if run.Status == engine.StatusRunning && run.Question != nil {
		pending, err := d.eng.PendingQuestions(r.Context(), run.RunID)
		if err != nil {
			return RunView{}, err
		}
		v.Questions = questionViews(pending, now)
	}
	if run.StartedAt != nil {
		v.Elapsed = span(time.Duration(run.Metrics.ElapsedMs) * time.Millisecond)
		if v.Terminal {
			v.RanFor = v.Elapsed
		}
	}
	if run.Status == engine.StatusRunning {
		v.InFlight = d.inFlight(r.Context(), run.RunID)
	}
	if v.Terminal {
		v.Expires = clock(&run.ExpiresAt)
	}
	var schema json.RawMessage
	for _, t := range d.eng.Templates() {
		if t.TemplateID == run.TemplateID {
			schema = t.InputSchema
		}
	}
	v.Inputs = maskInputs(run.Inputs, schema)
	for i, it := range items {
		if i == maxItemRows {
			break
		}
		v.Items = append(v.Items, itemRow(it))
	}
	v.ItemsMore = max(detail.ItemsTotal, len(items)) - len(v.Items)
	v.Artifacts = d.artifactViews(r, run.ArtifactIDs, v.Items)
	for _, it := range v.Items {
		v.ItemArtifacts = v.ItemArtifacts || it.ArtifactURL != ""
	}
	if n := len(evs); n > maxEventRows {
		v.EventsNote = fmt.Sprintf("Newest %d of %d events.", maxEventRows, n)
		evs = evs[n-maxEventRows:]
	}
	for i := len(evs) - 1; i >= 0; i-- {
		v.Events = append(v.Events, eventRow(evs[i], now))
	}
	return v, nil
}

// inFlight lists the pages the open tabs of a run executing here are on
// (none when it runs elsewhere or this process has no browser).
func (d *Dashboard) inFlight(ctx context.Context, runID string) []InFlightView {
	if d.live == nil {
		return nil
	}
	var out []InFlightView
	for _, t := range d.live.LiveTabs(ctx, runID) {
		if !t.Closed {
			out = append(out, InFlightView{URL: t.URL, Title: t.Title})
		}
	}
	return out
}

// artifactViews loads the run's artifacts in item order — those an item
// made in the order of their items, each with its item's URL, then the
// others (pages.json) as the run stored them — and links each item row to
// its artifact.
func (d *Dashboard) artifactViews(r *http.Request, ids []string, items []ItemRow) []ArtifactView {
	byID := map[string]int{} // artifact id → index in items
	for i, it := range items {
		if it.ArtifactID != "" {
			byID[it.ArtifactID] = i
		}
	}
	out := make([]ArtifactView, 0, len(ids))
	for _, id := range ids {
		a := d.artifactView(r, id)
		if i, ok := byID[id]; ok {
			it := &items[i]
			a.Item, a.ItemAnchor = orText(it.URL, it.Key), it.Anchor()
			if !a.Expired {
				it.ArtifactURL, it.ArtifactName = a.URL, a.Name
			}
		}
		out = append(out, a)
	}
	order := func(a ArtifactView) int {
		if i, ok := byID[a.ID]; ok {
			return i
		}
		return len(items)
	}
	sort.SliceStable(out, func(i, j int) bool { return order(out[i]) < order(out[j]) })
	return out
}

// itemRow reads the common fields templates put in an item's output (url,
// httpStatus/status) without knowing the template.
func itemRow(it engine.Item) ItemRow {
	row := ItemRow{Index: it.Index, Key: it.Key, Status: it.Status}
	var out map[string]any
	_ = json.Unmarshal(it.Output, &out)
	if u, ok := out["url"].(string); ok {
		row.URL = u
	} else if strings.Contains(it.Key, "://") {
		row.URL = it.Key
	}
	for _, k := range []string{"httpStatus", "statusCode", "status"} {
		if n, ok := out[k].(float64); ok {
			row.HTTPStatus = fmt.Sprint(int(n))
			break
		}
	}
	if id, ok := out["artifactId"].(string); ok {
		row.ArtifactID = id
	}
	if it.Error != nil {
		row.Error = string(it.Error.Code) + ": " + contractSpelling(it.Error.Message)
	}
	return row
}

// artifactView loads an artifact's metadata for the detail page.
func (d *Dashboard) artifactView(r *http.Request, id string) ArtifactView {
	v := ArtifactView{ID: id, Name: id, URL: "/artifacts/" + url.PathEscape(id)}
	v.Download = v.URL + "?download=1"
	a, err := d.eng.Artifact(r.Context(), id)
	if err != nil {
		v.Expired = true
		return v
	}
	v.Name, v.MimeType, v.Size = a.Name, a.MimeType, size(a.Size)
	v.Image = inlineImage(a.MimeType)
	return v
}

// eventRow renders an event as one timeline line.
func eventRow(e engine.Event, now time.Time) EventRow {
	row := EventRow{Seq: e.Seq, Time: time.UnixMilli(e.At).Format("15:04:05.000"), Ago: ago(now, e.At), Type: e.Type}
	var data map[string]any
	_ = json.Unmarshal(e.Data, &data)
	switch e.Type {
	case "status":
		row.Text = fmt.Sprint(data["status"])
		if a, ok := data["attempt"].(float64); ok && a > 1 {
			row.Text += fmt.Sprintf(" (attempt %d)", int(a))
		}
	case "progress":
		row.Text = fmt.Sprintf("%v/%v done", data["doneSteps"], data["totalSteps"])
	case "created":
		row.Text = "run created"
	case "input":
		if data["answered"] == true {
			row.Text = fmt.Sprintf("answer received (%v)", data["requestId"])
		} else {
			row.Text = fmt.Sprintf("asks (%v, %v): %v", data["requestId"], data["kind"], data["message"])
		}
	case "item":
		row.Text = fmt.Sprintf("%v %v", data["key"], data["status"])
	case "artifact":
		n, _ := data["size"].(float64)
		row.Text = fmt.Sprintf("%v (%v, %s)", data["name"], data["mimeType"], size(int64(n)))
	default:
		row.Text = compactJSON(e.Data, 160)
	}
	row.Text = contractSpelling(row.Text)
	return row
}

// compactJSON shortens raw JSON to n characters for one line.
func compactJSON(raw json.RawMessage, n int) string {
	s := strings.Join(strings.Fields(string(raw)), " ")
	if len(s) > n {
		s = s[:n] + "…"
	}
	return s
}
