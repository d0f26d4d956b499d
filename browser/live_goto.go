package browser

import (
	"context"
	"time"

	"github.com/go-rod/rod/lib/proto"

	"github.com/browsertask/browsertask/engine"
)

// liveGoTimeout bounds a person's navigation until the new document
// commits (its loading goes on, watched in the live view).
const liveGoTimeout = 20 * time.Second

// GoTo navigates tab tabID of run runID to rawURL on a person's request
// (the live view's address bar during a takeover). The URL passes the
// same policy as a run's own URLs first (engine.CheckURL with this
// Manager's policy: schemes, file: URLs, the daemon's own address, trust
// restricted); a refused URL is never handed to the browser. GoTo returns
// once the document commits, not when it finished loading: the person
// watches it load. Errors: INVALID_PARAMETER (unknown or closed tab, a
// URL the policy refuses, field "url"), TRUST_LEVEL_NOT_ALLOWED (an
// internal address under trust restricted), STEP_EXECUTION_FAILED (the
// browser could not load it: a network error, or a redirect the
// interception refused), EXECUTION_ERROR (browser gone).
func (m *Manager) GoTo(ctx context.Context, runID, tabID, rawURL string) error {
	if err := engine.CheckURL(rawURL, m.Policy()); err != nil {
		e := engine.AsError(err)
		d := map[string]any{"field": "url"}
		for k, v := range e.Details {
			d[k] = v
		}
		return engine.Errorf(e.Code, "%s", e.Message).WithDetails(d)
	}
	lt := m.live.tab(runID, tabID)
	if lt == nil {
		return engine.Errorf(engine.InvalidParameter, "run %s has no tab %q in this process", runID, tabID).
			WithDetails(map[string]any{"field": "tab"})
	}
	lt.mu.Lock()
	closed := lt.closed
	lt.mu.Unlock()
	if closed || lt.t.crashed.Load() {
		return engine.Errorf(engine.InvalidParameter, "tab %q of run %s is closed", tabID, runID).
			WithDetails(map[string]any{"field": "tab"})
	}
	// A refusal recorded by an earlier page is not this navigation's.
	lt.t.blocked.Store(nil)
	c, cancel := context.WithTimeout(ctx, liveGoTimeout)
	defer cancel()
	nav, err := proto.PageNavigate{URL: rawURL}.Call(lt.t.page.Context(c))
	if err != nil {
		return engine.Wrap(engine.ExecutionError, err, "navigate the tab to %s: %v", rawURL, err)
	}
	if nav.ErrorText != "" {
		if blocked := lt.t.blocked.Load(); blocked != nil {
			return blocked
		}
		return engine.Errorf(engine.StepExecutionFailed, "the browser could not load %s: %s", rawURL, nav.ErrorText).
			WithDetails(map[string]any{"url": rawURL, "netError": nav.ErrorText})
	}
	return nil
}
