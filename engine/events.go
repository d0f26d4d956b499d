package engine

import (
	"context"
	"time"
)

// Event log bounds for readers.
const (
	// MaxEventWait is the longest a subscriber may wait in one call.
	MaxEventWait = 30 * time.Second
	// DefaultEventLimit is how many events one read returns when the caller
	// does not say.
	DefaultEventLimit = 500
	// MaxEventLimit is the largest page of events one read returns.
	MaxEventLimit = 1000
	// eventPollInterval bounds how late an event written by another process
	// (which does not close this engine's change signal) is noticed.
	eventPollInterval = 50 * time.Millisecond
)

// EventsAfter returns up to limit events of the run with seq > afterSeq,
// the seq to resume from (the last returned seq, or afterSeq when none), and
// whether the log is complete: the run is terminal and nothing after nextSeq
// remains, so a follower can stop. limit <= 0 means DefaultEventLimit; it is
// clamped to MaxEventLimit. Errors: RUN_NOT_FOUND, INVALID_PARAMETER
// (negative afterSeq).
func (e *Engine) EventsAfter(ctx context.Context, runID string, afterSeq int64, limit int) ([]Event, int64, bool, error) {
	if afterSeq < 0 {
		return nil, 0, false, Errorf(InvalidParameter, "afterSeq must be >= 0, got %d", afterSeq).WithDetails(map[string]any{"field": "afterSeq"})
	}
	if limit <= 0 {
		limit = DefaultEventLimit
	}
	limit = min(limit, MaxEventLimit)
	// The run is read before its events: a terminal status is written in
	// the same transaction as its "status" event, so when the run was
	// already terminal the events read next are complete.
	r, err := e.Get(ctx, runID)
	if err != nil {
		return nil, 0, false, err
	}
	evs, err := e.events(ctx, runID, afterSeq, limit)
	if err != nil {
		return nil, 0, false, err
	}
	next := afterSeq
	if n := len(evs); n > 0 {
		next = evs[n-1].Seq
	}
	return evs, next, r.Status.Terminal() && len(evs) < limit, nil
}

// events lists up to limit events of a run with seq > afterSeq ([] when
// none).
func (e *Engine) events(ctx context.Context, runID string, afterSeq int64, limit int) ([]Event, error) {
	evs, err := e.store.ListEvents(ctx, ListEventsParams{RunID: runID, AfterSeq: afterSeq, Limit: limit})
	if err != nil {
		return nil, Wrap(ExecutionError, err, "list events: %v", err)
	}
	if evs == nil {
		evs = []Event{}
	}
	return evs, nil
}

// WaitEvents is the long-poll behind subscribe_task_run_events: it returns
// as soon as the run has events after afterSeq, or an empty list once wait
// has passed, or at once when the run is terminal and its log is complete.
// It wakes on this engine's change signal and polls the store every 50 ms
// for events written by other processes sharing the database. wait is
// clamped to 0..MaxEventWait. Errors: RUN_NOT_FOUND, INVALID_PARAMETER; a
// cancelled ctx returns its error.
func (e *Engine) WaitEvents(ctx context.Context, runID string, afterSeq int64, wait time.Duration) ([]Event, int64, bool, error) {
	wait = min(max(wait, 0), MaxEventWait)
	deadline := time.NewTimer(wait)
	defer deadline.Stop()
	tick := time.NewTicker(eventPollInterval)
	defer tick.Stop()
	for {
		ch := e.changes()
		evs, next, terminal, err := e.EventsAfter(ctx, runID, afterSeq, MaxEventLimit)
		if err != nil || len(evs) > 0 || terminal {
			return evs, next, terminal, err
		}
		select {
		case <-ctx.Done():
			return nil, afterSeq, false, ctx.Err()
		case <-deadline.C:
			return evs, next, false, nil
		case <-ch:
		case <-tick.C:
		}
	}
}
