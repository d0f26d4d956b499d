package engine

import (
	"context"
	"errors"
	"time"
)

// heartbeatOnce performs one heartbeat: it extends this process's leases
// and stops local runs that were cancelled or recovered by another process.
func (e *Engine) heartbeatOnce(ctx context.Context) {
	// Snapshot before the write: a run claimed after it is not judged yet.
	e.mu.Lock()
	before := make([]string, 0, len(e.active))
	executing := make([]HeldRun, 0, len(e.active))
	for id, a := range e.active {
		if a.finished.Load() {
			continue // its final state is being stored: it is not held any more
		}
		before = append(before, id)
		executing = append(executing, HeldRun{RunID: id, Attempt: a.run.Attempt})
	}
	e.mu.Unlock()
	now := e.now()
	held, err := e.store.Heartbeat(ctx, HeartbeatParams{
		OwnerID: e.ownerID, Now: now, LeaseUntil: now + e.cfg.LeaseDuration.Milliseconds(), Held: executing,
	})
	if took := time.Duration(e.now()-now) * time.Millisecond; took > e.cfg.LeaseDuration/3 {
		e.log.Warn("heartbeat slow: leases may run out before the next one", "took", took, "lease", e.cfg.LeaseDuration, "runs", len(executing))
	}
	if err != nil {
		if ctx.Err() == nil {
			e.log.Warn("heartbeat failed", "err", err)
		}
		return
	}
	still := make(map[string]bool, len(held))
	for _, id := range held {
		still[id] = true
	}
	for _, id := range before {
		if !still[id] && e.interruptUnfinished(id, errCauseLost) {
			e.log.Info("run stopped: cancelled or recovered by another process", "runId", id)
		}
	}
}

// recoverOnce releases owners that are gone (PeerAlive) and recovers
// runs whose lease expired: resumable ones go back to the queue, others
// fail with EXECUTION_ERROR "interrupted".
func (e *Engine) recoverOnce(ctx context.Context) {
	now := e.now()
	owners, err := e.store.ListOwners(ctx)
	if err != nil {
		if ctx.Err() == nil {
			e.log.Warn("list owners failed", "err", err)
		}
		return
	}
	for _, o := range owners {
		if !e.PeerAlive(o) {
			if err := e.store.ReleaseOwner(ctx, o.ID, now); err != nil {
				e.log.Warn("release dead owner failed", "ownerId", o.ID, "err", err)
				continue
			}
			e.log.Info("released a stopped process's runs", "ownerId", o.ID, "pid", o.PID,
				"silence", time.Duration(now-o.HeartbeatAt)*time.Millisecond)
		}
	}
	// Queued runs bound to a session whose process is gone can never be
	// claimed (the session's browser context died with it): fail them now
	// instead of leaving them queued until they expire, and close such
	// sessions.
	lost, err := e.store.FailOrphanedSessionRuns(ctx, FailOrphansParams{
		Error: sessionLostError(), Now: now, OlderThan: now - e.orphanGrace(), RunTTLMs: e.cfg.RunTTL.Milliseconds(),
	})
	if err != nil && ctx.Err() == nil {
		e.log.Warn("fail runs of lost sessions failed", "err", err)
	}
	for _, id := range lost {
		e.log.Info("failed a queued run whose session was lost with its process", "runId", id)
	}
	if len(lost) > 0 {
		e.notify()
	}
	runs, err := e.store.ExpiredLeases(ctx, now)
	if err != nil {
		return
	}
	requeued, renew := false, false
	for _, r := range runs {
		if r.OwnerID == e.ownerID && e.executing(r.RunID, r.Attempt) {
			// Our own execution, whose lease ran out while this process
			// was paused (SIGSTOP, a suspended laptop): it is still
			// running here, so the lease is renewed rather than the run
			// recovered and executed a second time.
			renew = true
			continue
		}
		rec := Recovery{RunID: r.RunID, OwnerID: r.OwnerID, Now: now, RunTTLMs: e.cfg.RunTTL.Milliseconds()}
		tpl := e.templates[r.TemplateID]
		switch {
		case r.Crashes+1 >= e.cfg.MaxAttempts:
			// A run that keeps ending with its process gone (it crashes the
			// process, or runs it out of memory) is not tried again: every
			// restart would die the same way.
			rec.To = StatusFailed
			rec.Error = poisonedError(r.Crashes + 1)
		case tpl != nil && tpl.Info().Resumable:
			rec.To = StatusQueued
		default:
			rec.To = StatusFailed
			rec.Error = interruptedError()
		}
		err := e.store.RecoverRun(ctx, rec)
		switch {
		case errors.Is(err, ErrConflict):
		case err != nil:
			e.log.Warn("recover run failed", "runId", r.RunID, "err", err)
		default:
			e.log.Info("recovered run with an expired lease", "runId", r.RunID, "to", rec.To)
			requeued = requeued || rec.To == StatusQueued
		}
	}
	if renew {
		e.heartbeatOnce(ctx)
	}
	if len(runs) > 0 {
		e.notify()
	}
	if requeued {
		e.kick()
	}
}

// orphanGrace is the one grace period of the orphan rule: a session, or a
// queued run bound to one, whose owner row is gone is orphaned (its process
// stopped and the session's browser context with it) only once it is older
// than this, one LeaseDuration. A process starting up may open a session a
// moment before its engine registers its owner row; a lease is far longer
// than that moment. Recovery applies the rule on every pass
// (FailOrphanedSessionRuns), for runs and sessions alike.
func (e *Engine) orphanGrace() int64 { return e.cfg.LeaseDuration.Milliseconds() }

// executing reports whether this process executes runID in attempt.
func (e *Engine) executing(runID string, attempt int) bool {
	e.mu.Lock()
	defer e.mu.Unlock()
	a := e.active[runID]
	return a != nil && a.run.Attempt == attempt
}

// poisonedError is the error of a run whose executions ended with their
// process gone n times.
func poisonedError(n int) *Error {
	return Errorf(ExecutionError, "interrupted %d times: every execution of this run ended with its browsertask process gone (crashed, killed or out of memory), so it is not tried again; check the process's stderr for the cause, and submit it again (smaller, or without the page that crashes) once fixed", n).
		WithDetails(map[string]any{"reason": "interrupted", "interruptions": n})
}

// sessionLostError is the error of a queued run whose session was lost with
// the process that held it.
func sessionLostError() *Error {
	return Errorf(SessionNotFound, "the run's browser session was lost before the run started: the browsertask process that held it stopped")
}

// janitorOnce purges expired rows and shrinks the file.
func (e *Engine) janitorOnce(ctx context.Context) {
	now := e.now()
	// The runs about to go leave a history row first (history.go).
	if err := e.archive(ctx, now); err != nil {
		if ctx.Err() == nil {
			e.log.Warn("archiving expired runs failed; they are kept until it works", "err", err)
		}
		return
	}
	n, err := e.store.Purge(ctx, PurgeParams{Now: now, TombstoneBefore: now - e.cfg.TombstoneTTL.Milliseconds(), Batch: 500,
		HistoryBefore: now, ArchivedOnly: true})
	if err != nil {
		if ctx.Err() == nil {
			e.log.Warn("purge failed", "err", err)
		}
		return
	}
	if n > 0 {
		e.log.Debug("purged expired rows", "rows", n)
		if err := e.store.Compact(ctx); err != nil {
			e.log.Debug("compact failed", "err", err)
		}
	}
}
