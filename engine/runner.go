package engine

import (
	"context"
	"encoding/json"
	"errors"
	"runtime/debug"
	"time"
)

// execute runs one claimed run to its final write. ctx carries the run's
// cancel cause (canceled, shutdown, lease lost); the run's timeout is added
// here so it bounds only the running phase.
func (e *Engine) execute(ctx context.Context, r *Run, stop context.CancelCauseFunc) {
	log := e.runLogger(r.RunID, e.log.With("runId", r.RunID, "templateId", r.TemplateID, "attempt", r.Attempt))
	// Secret inputs live only in memory; the stored copy says "***".
	defer e.secrets.forget(r.RunID)
	if sec := e.secrets.get(r.RunID); sec != nil {
		r.Inputs = sec.inputs
	}
	tpl, ok := e.templates[r.TemplateID]
	if !ok {
		// A peer with more templates created it; this process cannot run it.
		e.finish(r, StatusFailed, nil, Errorf(TemplateNotFound, "template %q is not available in the process that claimed the run", r.TemplateID))
		return
	}
	timeout := time.Duration(r.TimeoutMs) * time.Millisecond
	if timeout <= 0 {
		timeout = e.cfg.AsyncTimeout
	}
	// The timeout bounds the running phase, less the time spent waiting for
	// a person (deadline.go).
	rctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	deadline := newRunDeadline(timeout, func() { cancel(errCauseTimeout) })
	defer deadline.stop()

	done := map[string]Item{}
	// Checkpoints exist only from earlier attempts, or a run this one
	// continues (adopt.go): the first attempt of a run saves the read (one
	// query per run, noticeable at hundreds of short runs per second).
	if adopted := e.adopt(rctx, r, tpl); adopted != nil {
		done = adopted
	} else if r.Attempt > 1 {
		if items, err := e.store.ListItems(rctx, r.RunID); err == nil {
			for _, it := range items {
				done[it.Key] = it
			}
		} else {
			log.Warn("load checkpoints failed", "err", err)
		}
	}
	env := &runEnv{e: e, run: r, done: done, log: log, cancel: stop, deadline: deadline}
	rctx = WithRedactor(WithRunID(rctx, r.RunID), e.runRedactor(r.RunID))
	e.mu.Lock()
	if a := e.active[r.RunID]; a != nil {
		a.env, a.ctx = env, rctx
	}
	e.mu.Unlock()
	log.Debug("run started", "resumedItems", len(done))

	out, err := e.callTemplate(rctx, tpl, env)
	if err == nil && out == nil {
		err = Errorf(ExecutionError, "template %s returned no outcome", r.TemplateID)
	}
	if err == nil {
		res, merr := json.Marshal(out.Result)
		if merr != nil {
			e.finish(r, StatusFailed, nil, Wrap(ExecutionError, merr, "encode result: %v", merr))
			return
		}
		res = e.keepWholeResult(rctx, env, res)
		st := StatusSucceeded
		if out.Partial {
			st = StatusPartialSuccess
		}
		// The last progress is written with the result: SetProgress's
		// throttle may have held it back (a quick run ending at 1/3).
		e.finishWith(r, st, res, nil, env.finalProgress())
		e.closeOwnedSession(r)
		return
	}

	if rctx.Err() != nil {
		cause := context.Cause(rctx)
		if errors.Is(cause, errCauseShutdown) {
			// The process is exiting and its browser with it (the
			// browser's Close also disposes the contexts it made in a
			// remote browser): the run is handed back at once, its
			// session is not closed on its own, so the exit does not wait
			// for that.
			e.interrupted(r, env)
			return
		}
		// Stop the browser work before the final state is visible, so a
		// client that sees RUN_TIMEOUT never finds the run's pages still
		// loading.
		e.closeOwnedSession(r)
		switch {
		case errors.Is(cause, errCauseTimeout):
			e.finish(r, StatusFailed, nil, withKept(Errorf(RunTimeout,
				"the run exceeded options.timeoutMs=%d ms while running and was stopped", r.TimeoutMs).
				WithDetails(map[string]any{"timeoutMs": r.TimeoutMs}), e.keep(r, tpl, env)))
		default:
			// Canceled or lost: the final state was written by whoever
			// cancelled or recovered it. A canceled run this execution
			// still holds gets what it kept (a peer's cancel shows here as
			// a lost lease); anything else would be discarded.
			log.Debug("run stopped", "cause", cause)
			e.keepCanceled(r, tpl, env)
		}
		return
	}
	rerr := AsError(err)
	if rerr.Code == ExecutionError {
		// Stopped by a failure, not by its items: keep what they finished.
		e.closeOwnedSession(r)
		e.finish(r, StatusFailed, nil, withKept(rerr, e.keep(r, tpl, env)))
		return
	}
	e.finishWith(r, StatusFailed, nil, rerr, env.finalProgress())
	e.closeOwnedSession(r)
}

// callTemplate runs the template, turning a panic into EXECUTION_ERROR.
func (e *Engine) callTemplate(ctx context.Context, tpl Template, env *runEnv) (out *Outcome, err error) {
	defer func() {
		if p := recover(); p != nil {
			env.log.Error("template panicked", "panic", p, "stack", string(debug.Stack()))
			out, err = nil, Errorf(ExecutionError, "internal error in template %s: %v", env.run.TemplateID, p)
		}
	}()
	return tpl.Run(ctx, env)
}

// finish writes a terminal state (compare-and-set: a run cancelled or
// recovered meanwhile is left as it is).
func (e *Engine) finish(r *Run, st RunStatus, result json.RawMessage, rerr *Error) {
	e.finishWith(r, st, result, rerr, nil)
}

// finishWith is finish that also writes the run's last progress (nil:
// leave it as stored).
func (e *Engine) finishWith(r *Run, st RunStatus, result json.RawMessage, rerr *Error, p *Progress) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	e.mu.Lock()
	if a := e.active[r.RunID]; a != nil && a.run == r {
		a.finished.Store(true)
	}
	e.mu.Unlock()
	err := e.store.FinishRun(ctx, Finish{
		RunID: r.RunID, OwnerID: e.ownerID, Attempt: r.Attempt, Status: st, Result: result, Error: rerr,
		Now: e.now(), RunTTLMs: e.cfg.RunTTL.Milliseconds(), Progress: p,
	})
	switch {
	case errors.Is(err, ErrConflict):
		e.log.Debug("final write discarded: run changed state meanwhile", "runId", r.RunID, "status", st)
	case err != nil:
		e.log.Error("final write failed", "runId", r.RunID, "err", err)
	default:
		attrs := []any{"runId", r.RunID, "status", st}
		if rerr != nil {
			attrs = append(attrs, "errorCode", rerr.Code)
		}
		e.log.Info("run finished", attrs...)
	}
}

// interrupted handles a run stopped by shutdown: resumable runs go back to
// the queue with their checkpoints, the others fail (browser steps may have
// had side effects), keeping what they finished.
func (e *Engine) interrupted(r *Run, env *runEnv) {
	tpl := e.templates[r.TemplateID]
	if tpl != nil && tpl.Info().Resumable {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if err := e.store.RequeueRun(ctx, r.RunID, e.holder(r), e.now()); err != nil && !errors.Is(err, ErrConflict) {
			e.log.Error("requeue failed", "runId", r.RunID, "err", err)
		}
		return
	}
	e.finish(r, StatusFailed, nil, withKept(interruptedError(), e.keep(r, tpl, env)))
}

func interruptedError() *Error {
	return Errorf(ExecutionError, "interrupted: the process running it stopped before the run finished")
}

// closeOwnedSession closes the session a run created for itself.
func (e *Engine) closeOwnedSession(r *Run) {
	if !r.OwnsSession || e.browser == nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := e.browser.CloseSession(ctx, r.SessionID); err != nil {
		e.log.Debug("close session failed", "sessionId", r.SessionID, "err", err)
	}
}

// holder names the execution r of this process in compare-and-set writes.
func (e *Engine) holder(r *Run) Holder { return Holder{OwnerID: e.ownerID, Attempt: r.Attempt} }
