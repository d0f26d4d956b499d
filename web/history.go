package web

import (
	"net/http"
	"net/url"
	"strconv"
	"time"

	"github.com/browsertask/browsertask/engine"
)

// HistoryView is the history page.
type HistoryView struct {
	Page                      Page
	Keep, RunTTL, ArtifactTTL string
	Rows                      []HistoryRow
	// Next is the next page's URL ("" on the last page).
	Next string
}

// HistoryRow is one forgotten run.
type HistoryRow struct {
	ID, Short, Status, Template, Progress, Summary, Error, Age, CreatedAt string
	Artifacts                                                             []ArtifactLink
	// Gone counts the run's artifacts that expired.
	Gone int
}

// ArtifactLink is an artifact that still exists.
type ArtifactLink struct{ Name, URL string }

// historyPageSize is how many forgotten runs a page shows.
const historyPageSize = 50

// historyPage lists the history of forgotten runs (GET /history?offset=).
func (d *Dashboard) historyPage(w http.ResponseWriter, r *http.Request) {
	offset, _ := strconv.Atoi(r.URL.Query().Get("offset"))
	offset = max(offset, 0)
	hist, err := d.eng.History(r.Context(), historyPageSize, offset)
	if err != nil {
		d.fail(w, r, err)
		return
	}
	p := d.eng.Profile()
	ms := func(n int64) string { return longDuration(time.Duration(n) * time.Millisecond) }
	v := HistoryView{Page: d.page("History", "runs"), Keep: ms(p.HistoryTTLMs), RunTTL: ms(p.RunTTLMs), ArtifactTTL: ms(p.ArtifactTTLMs)}
	now := d.now()
	for _, h := range hist.Runs {
		row := HistoryRow{ID: h.RunID, Short: shortID(h.RunID), Status: string(h.Status), Template: h.TemplateID,
			Progress: progressText(h.Progress), Summary: h.InputsSummary, Age: ago(now, h.CreatedAt),
			CreatedAt: time.UnixMilli(h.CreatedAt).UTC().Format(time.RFC3339),
			Gone:      len(h.ArtifactIDs) - len(h.Artifacts)}
		if h.ErrorCode != "" {
			row.Error = h.ErrorCode + ": " + contractSpelling(h.ErrorMessage)
		}
		for _, a := range h.Artifacts {
			row.Artifacts = append(row.Artifacts, ArtifactLink{Name: a.Name, URL: "/artifacts/" + url.PathEscape(a.ID)})
		}
		v.Rows = append(v.Rows, row)
	}
	if offset+len(hist.Runs) < hist.Total {
		v.Next = "/history?offset=" + strconv.Itoa(offset+len(hist.Runs))
	}
	d.render(w, r, http.StatusOK, historyPage(v), nil)
}

// progressText is "998/1000" ("-" when nothing was counted).
func progressText(p engine.Progress) string {
	if p.TotalSteps == 0 && p.DoneSteps == 0 {
		return "-"
	}
	return strconv.Itoa(p.DoneSteps) + "/" + strconv.Itoa(p.TotalSteps)
}

// longDuration says a TTL in words: "7 days", "30 min", "24 h".
func longDuration(d time.Duration) string {
	switch {
	case d >= 48*time.Hour && d%(24*time.Hour) == 0:
		return strconv.Itoa(int(d/(24*time.Hour))) + " days"
	case d >= time.Hour && d%time.Hour == 0:
		return strconv.Itoa(int(d/time.Hour)) + " h"
	case d >= time.Minute:
		return strconv.Itoa(int(d/time.Minute)) + " min"
	}
	return d.String()
}
