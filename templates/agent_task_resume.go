package templates

import (
	"context"
	"encoding/json"
	"fmt"
	"sort"
	"strings"

	"github.com/browsertask/browsertask/browser"
	"github.com/browsertask/browsertask/internal/agent"
)

// resume reads the records of earlier attempts back: the steps done (for
// the history and replay), the step count, the page to return to, and an
// intent without an outcome.
func (r *agentRun) resume() {
	items := r.env.FinishedItems()
	recs := make([]agentRecord, 0, len(items))
	for _, it := range items {
		var rec agentRecord
		if json.Unmarshal(it.Output, &rec) == nil && rec.Phase != "" {
			recs = append(recs, rec)
		}
	}
	sort.Slice(recs, func(i, j int) bool {
		if recs[i].Step != recs[j].Step {
			return recs[i].Step < recs[j].Step
		}
		return recs[i].Phase == "intent" && recs[j].Phase == "done"
	})
	var open *agentRecord
	for i := range recs {
		rec := recs[i]
		r.step = max(r.step, rec.Step+1)
		if rec.Phase == "intent" {
			open = &rec
			r.lastURL = rec.URL
			continue
		}
		open = nil
		// The page an action led to, unless the action sent something
		// (its answer page may be a POST's, which a GET would not show, or
		// worse, repeat): then the page it was taken on.
		r.lastURL = rec.After
		if r.lastURL == "" || rec.Effect != agent.NoEffect.String() {
			r.lastURL = rec.URL
		}
		r.note(rec)
	}
	if open != nil {
		r.history = append(r.history, fmt.Sprintf("step %d: %s — interrupted by a restart; whether it happened is unknown", open.Step, describeAction(open.Action)))
		if open.Effect != agent.NoEffect.String() {
			r.interrupted = open
		} else {
			// Nothing outside the page changed: the step is simply not done.
			r.step = open.Step
		}
	}
}

// note adds a finished record to the history and the replay.
func (r *agentRun) note(rec agentRecord) {
	r.done = append(r.done, agent.Done{Action: rec.Action, Selector: rec.Selector, Confirmed: rec.Confirmed, ConfirmMessage: rec.ConfirmMessage, OK: rec.OK, WaitText: rec.WaitText})
	r.history = append(r.history, fmt.Sprintf("step %d: %s — %s", rec.Step, describeAction(rec.Action), rec.Outcome))
}

// open loads the start page, or for a resumed run the page it was on (a
// page that no longer loads, such as the answer to a POST, falls back to
// the page before, then startUrl).
func (r *agentRun) open(ctx context.Context) error {
	tries := []string{r.lastURL}
	if r.interrupted != nil {
		tries = append(tries, r.interrupted.URL)
	}
	tries = append(tries, r.in.StartURL)
	var last error
	for _, u := range tries {
		if u == "" || !strings.HasPrefix(u, "http") {
			continue
		}
		lp, fatal := loadPage(ctx, r.tb, u, browser.WaitLoad, defaultPerPageTimeoutMs)
		if fatal != nil {
			return fatal
		}
		if lp.failure == nil {
			return nil
		}
		last = lp.failure
	}
	return last
}
