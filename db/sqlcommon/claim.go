package sqlcommon

import (
	"context"
	"fmt"
	"sort"

	"github.com/browsertask/browsertask/engine"
)

// ClaimStatements is a store's SQL for taking and holding runs; arguments
// in the order each field names.
//
// The two stores keep the global limit exact in different ways, and that
// lives in their SQL, not here: SQLite has one writer at a time, so the
// count and the claim in one transaction cannot interleave with another
// claimer; PostgreSQL takes a transaction-scoped advisory lock first (Lock)
// and claims with FOR UPDATE SKIP LOCKED, so two processes never both see
// room for the last slot nor take one row twice. The Go around them —
// count, cap, claim, order, events — is the same.
type ClaimStatements struct {
	RunStatements
	// Lock, when not empty, runs first in the claim's transaction (no
	// arguments).
	Lock string
	// Running counts the running runs with a live lease: now.
	Running string
	// Claim takes the queued runs FIFO, returning RunColumns: owner,
	// lease until, now, limit (NoLimit for none).
	Claim string
	// NoLimit is the store's limit value that takes every queued run.
	NoLimit any
	// Beat records an owner's heartbeat: now, owner id.
	Beat string
	// Extend extends one held run's lease: lease until, id, owner,
	// attempt.
	Extend string
	// Requeue puts a held run back in the queue, returning its attempt:
	// now, id, owner, attempt.
	Requeue string
}

// ClaimRuns is engine.Store.ClaimRuns in the caller's transaction: at most
// min(c.Max, c.MaxRunning - running) queued runs become c.OwnerID's, in
// FIFO order, each with a "status" event.
func ClaimRuns(ctx context.Context, tx Tx, st ClaimStatements, c engine.Claim) ([]*engine.Run, error) {
	if st.Lock != "" {
		if _, err := tx.ExecContext(ctx, st.Lock); err != nil {
			return nil, fmt.Errorf("db: claim lock: %w", err)
		}
	}
	limit := -1
	if c.MaxRunning > 0 {
		var running int
		if err := tx.QueryRowContext(ctx, st.Running, c.Now).Scan(&running); err != nil {
			return nil, fmt.Errorf("db: count running: %w", err)
		}
		limit = c.MaxRunning - running
		if limit <= 0 {
			return nil, nil
		}
	}
	if c.Max > 0 && (limit < 0 || c.Max < limit) {
		limit = c.Max
	}
	n := st.NoLimit
	if limit >= 0 {
		n = limit
	}
	rows, err := tx.QueryContext(ctx, st.Claim, c.OwnerID, c.LeaseUntil, c.Now, n)
	if err != nil {
		return nil, fmt.Errorf("db: claim runs: %w", err)
	}
	// RETURNING gives the rows as updated, so no second read is needed.
	runs, err := Collect(rows, "claim runs", ScanRun)
	if err != nil || len(runs) == 0 {
		return nil, err
	}
	// RETURNING does not follow the subquery's order.
	sort.Slice(runs, func(i, j int) bool {
		if runs[i].CreatedAt != runs[j].CreatedAt {
			return runs[i].CreatedAt < runs[j].CreatedAt
		}
		return runs[i].RunID < runs[j].RunID
	})
	for _, r := range runs {
		if err := AppendJSONEvent(ctx, tx, st.Events, r.RunID, EventStatus,
			StatusEvent{Status: engine.StatusRunning, Attempt: r.Attempt}, c.Now); err != nil {
			return nil, err
		}
	}
	if err := FillArtifactIDs(ctx, tx, runs, st.ArtifactIDs); err != nil {
		return nil, err
	}
	return runs, nil
}

// Heartbeat is engine.Store.Heartbeat in the caller's transaction: it
// returns the ids of the held runs whose lease it extended, never nil.
func Heartbeat(ctx context.Context, tx Tx, st ClaimStatements, p engine.HeartbeatParams) ([]string, error) {
	if _, err := tx.ExecContext(ctx, st.Beat, p.Now, p.OwnerID); err != nil {
		return nil, fmt.Errorf("db: heartbeat owner: %w", err)
	}
	ids := []string{}
	for _, h := range p.Held {
		res, err := tx.ExecContext(ctx, st.Extend, p.LeaseUntil, h.RunID, p.OwnerID, h.Attempt)
		if err != nil {
			return nil, fmt.Errorf("db: heartbeat lease of %s: %w", h.RunID, err)
		}
		if n, err := res.RowsAffected(); err != nil {
			return nil, fmt.Errorf("db: heartbeat lease of %s: %w", h.RunID, err)
		} else if n == 1 {
			ids = append(ids, h.RunID)
		}
	}
	return ids, nil
}

// RequeueRun is engine.Store.RequeueRun in the caller's transaction: a
// compare-and-set back to queued and a "status" event. Errors:
// ErrNotFound, ErrConflict.
func RequeueRun(ctx context.Context, tx Tx, st ClaimStatements, runID string, h engine.Holder, now int64) error {
	var attempt int
	if err := tx.QueryRowContext(ctx, st.Requeue, now, runID, h.OwnerID, h.Attempt).Scan(&attempt); err != nil {
		return CASError(ctx, tx, st.RunExists, runID, err)
	}
	return AppendJSONEvent(ctx, tx, st.Events, runID, EventStatus,
		StatusEvent{Status: engine.StatusQueued, Attempt: attempt}, now)
}
