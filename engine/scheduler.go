package engine

import (
	"context"
)

// claimOnce claims as many runs as the global limit and the local free slots
// allow, and starts each.
func (e *Engine) claimOnce(ctx context.Context) {
	e.mu.Lock()
	free := e.cfg.MaxConcurrentRuns - len(e.active)
	ok := e.claiming
	e.mu.Unlock()
	if !ok || free <= 0 {
		return
	}
	now := e.now()
	runs, err := e.store.ClaimRuns(ctx, Claim{
		OwnerID:    e.ownerID,
		Now:        now,
		LeaseUntil: now + e.cfg.LeaseDuration.Milliseconds(),
		MaxRunning: e.cfg.MaxConcurrentRuns,
		Max:        free,
	})
	if err != nil {
		if ctx.Err() == nil {
			e.log.Warn("claim failed", "err", err)
		}
		return
	}
	for _, r := range runs {
		e.start(ctx, r)
	}
	if len(runs) > 0 {
		e.notify()
	}
}

// start registers r as active and executes it in its own goroutine. The
// run's context has nothing of the claim loop's but its WithFaults (for
// tests): a run ends by its own cancel.
func (e *Engine) start(loop context.Context, r *Run) {
	ctx, cancel := context.WithCancelCause(CarryFaults(context.Background(), loop))
	a := &activeRun{run: r, cancel: cancel}
	e.mu.Lock()
	if old := e.active[r.RunID]; old != nil {
		// An older execution of the same run is still winding down (this
		// process was paused past its lease and claimed the run again):
		// it lost the run; its writes already fail their compare-and-set.
		old.cancel(errCauseLost)
	}
	e.active[r.RunID] = a
	e.mu.Unlock()
	e.runsWG.Add(1)
	ended := func() {
		e.mu.Lock()
		if e.active[r.RunID] == a {
			delete(e.active, r.RunID)
		}
		e.mu.Unlock()
		e.notify()
		e.kick()
		cancel(nil)
		e.runsWG.Done()
	}
	Go(ctx, e.log, "engine.run", func() {
		e.executeGuarded(ctx, r, cancel)
		ended()
	}, func(p *Panic) {
		e.finish(r, StatusFailed, nil, InternalError(p))
		ended()
	})
}

// Running returns the ids of the runs this process is executing.
func (e *Engine) Running() []string {
	e.mu.Lock()
	defer e.mu.Unlock()
	ids := make([]string, 0, len(e.active))
	for id := range e.active {
		ids = append(ids, id)
	}
	return ids
}

// interrupt cancels a locally executing run with cause; it reports whether
// the run was executing here.
func (e *Engine) interrupt(runID string, cause error) bool {
	e.mu.Lock()
	defer e.mu.Unlock()
	a, ok := e.active[runID]
	if ok {
		a.cancel(cause)
	}
	return ok
}

// interruptUnfinished is interrupt for a run whose final state this
// process has not stored: one that finished while a heartbeat was asking
// the store what it holds is winding down, not lost.
func (e *Engine) interruptUnfinished(runID string, cause error) bool {
	e.mu.Lock()
	defer e.mu.Unlock()
	a, ok := e.active[runID]
	if !ok || a.finished.Load() {
		return false
	}
	a.cancel(cause)
	return true
}

// executeGuarded is execute with a last line of defence: a panic outside the
// template (in the engine's own bookkeeping or a browser callback it calls)
// fails the run with EXECUTION_ERROR "internal error" and logs the stack,
// instead of ending the process and every other run with it.
func (e *Engine) executeGuarded(ctx context.Context, r *Run, stop context.CancelCauseFunc) {
	if p := Guard(ctx, e.log.With("runId", r.RunID), "engine.execute", func() { e.execute(ctx, r, stop) }); p != nil {
		e.finish(r, StatusFailed, nil, InternalError(p))
	}
}
