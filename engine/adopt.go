package engine

import (
	"context"
	"time"
)

// A resubmission continues where an earlier run stopped: the first attempt
// of a run whose template ContinuesEarlierRuns adopts the checkpoints of
// the newest run of the same template version, with the same inputs (and
// options.outputSchema, for templates that use it) and a
// comparable session (both owned their session, or the same named
// session), that ended failed or canceled, has not expired (runTtlMs) and
// has at least one succeeded item. Its succeeded items are copied into the
// new run (an "adopted" event says from where and how many), so they are
// neither fetched again nor lost if the new run stops too. Its failed
// items are not: submitting the same inputs again is how a client
// retries (the recovery of a failed page says "Retry"), so the new run
// fetches those pages again, and a server that came back or a model key
// that was fixed gets its chance. (A resume after a crash, within one
// run, still takes its failed items as done.) A run that succeeded is
// never continued: asking again for the same inputs after a success
// means fresh data (an idempotencyKey returns the same run instead).

// adopt copies the checkpoints of run r's predecessor into r and returns
// them by key (nil when there is none).
func (e *Engine) adopt(ctx context.Context, r *Run, tpl Template) map[string]Item {
	info := tpl.Info()
	if r.Attempt != 1 || !info.Resumable || !info.ContinuesEarlierRuns || e.secrets.get(r.RunID) != nil {
		return nil
	}
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	stopped, err := e.store.StoppedRuns(ctx, StoppedRunsQuery{TemplateID: r.TemplateID, Version: r.TemplateVersion, Now: e.now(), Before: r.CreatedAt})
	if err != nil {
		e.log.Warn("looking for a run to continue failed", "runId", r.RunID, "err", err)
		return nil
	}
	for _, s := range stopped {
		if s.Items == 0 || !sameJSON(s.Inputs, r.Inputs) || !sameOutputSchema(s.OutputSchema, r.OutputSchema) ||
			!(s.SessionID == r.SessionID || (s.OwnsSession && r.OwnsSession)) {
			continue
		}
		items, err := e.store.AdoptItems(ctx, s.RunID, r.RunID, e.holder(r), e.now())
		if err != nil {
			e.log.Warn("continuing an earlier run failed", "runId", r.RunID, "from", s.RunID, "err", err)
			return nil
		}
		e.log.Info("run continues an earlier one", "runId", r.RunID, "from", s.RunID, "items", len(items))
		done := make(map[string]Item, len(items))
		for _, it := range items {
			done[it.Key] = it
		}
		return done
	}
	return nil
}

// sameOutputSchema compares two runs' outputSchema (both nil: the same).
func sameOutputSchema(a, b []byte) bool {
	if len(a) == 0 || len(b) == 0 {
		return len(a) == len(b)
	}
	return sameJSON(a, b)
}
