package engine

import (
	"context"
	"errors"
	"fmt"
)

// Cancel cancels a queued or running run: the canceled state is written
// before it returns, then local work stops at once (a peer executing the
// run notices on its next heartbeat). A terminal run gives Success=false.
// Errors: RUN_NOT_FOUND.
func (e *Engine) Cancel(ctx context.Context, runID, reason string) (*CancelResult, error) {
	r, err := e.Get(ctx, runID)
	if err != nil {
		return nil, err
	}
	if r.Status.Terminal() {
		return &CancelResult{Success: false, RunID: runID, Status: r.Status, Reason: fmt.Sprintf("run already %s", r.Status)}, nil
	}
	msg := "the run was canceled"
	if reason != "" {
		msg += ": " + reason
	}
	cerr := Errorf(RunCanceled, "%s", msg)
	if reason != "" {
		cerr.WithDetails(map[string]any{"reason": reason})
	}
	after, changed, err := e.store.CancelRun(ctx, CancelRunParams{RunID: runID, Reason: reason, Error: cerr, Now: e.now(), RunTTLMs: e.cfg.RunTTL.Milliseconds()})
	if errors.Is(err, ErrNotFound) {
		return nil, Errorf(RunNotFound, "run %q does not exist or has expired", runID)
	}
	if err != nil {
		return nil, Wrap(ExecutionError, err, "cancel run: %v", err)
	}
	if !changed {
		return &CancelResult{Success: false, RunID: runID, Status: after.Status, Reason: fmt.Sprintf("run already %s", after.Status)}, nil
	}
	e.interrupt(runID, errCauseCanceled)
	e.notify()
	e.kick()
	e.log.Info("run canceled", "runId", runID, "reason", reason)
	return &CancelResult{Success: true, RunID: runID, Status: StatusCanceled}, nil
}
