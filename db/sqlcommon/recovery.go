package sqlcommon

import (
	"context"
	"fmt"

	"github.com/browsertask/browsertask/engine"
)

// RecoveryStatements is a store's SQL for taking back the runs of a
// process that is gone; arguments numbered from 1 in the order each field
// names.
type RecoveryStatements struct {
	RunStatements
	// Expired selects RunColumns of the running runs whose lease expired,
	// oldest lease first: now.
	Expired string
	// Requeue puts a running run back in the queue, returning its attempt:
	// id, owner, now.
	Requeue string
	// End ends a running run, returning its attempt: id, owner, now,
	// status, error, ttl.
	End string
	// FailOrphans fails the queued runs whose session owner is gone,
	// returning their ids: error, now, ttl, older than.
	FailOrphans string
	// CloseOrphans closes the open sessions whose owner is gone: now,
	// older than.
	CloseOrphans string
}

// ExpiredLeases is engine.Store.ExpiredLeases on q.
func ExpiredLeases(ctx context.Context, q Querier, st RecoveryStatements, now int64) ([]*engine.Run, error) {
	return QueryRuns(ctx, q, st.ArtifactIDs, st.Expired, now)
}

// RecoverRun is engine.Store.RecoverRun in the caller's transaction: a
// compare-and-set on a running run of r.OwnerID whose lease expired, to
// queued (Requeue) or to failed or canceled (End), and a "status" event.
// Errors: ErrNotFound, ErrConflict, or an error for another r.To.
func RecoverRun(ctx context.Context, tx Tx, st RecoveryStatements, r engine.Recovery) error {
	switch r.To {
	case engine.StatusQueued, engine.StatusFailed, engine.StatusCanceled:
	default:
		return fmt.Errorf("db: recover run %s: cannot recover to %q", r.RunID, r.To)
	}
	errJSON, err := EncodeError(r.Error)
	if err != nil {
		return err
	}
	query, args := st.Requeue, []any{r.RunID, r.OwnerID, r.Now}
	if r.To != engine.StatusQueued {
		// PostgreSQL refuses arguments a statement does not use, so each
		// statement gets exactly its own.
		query, args = st.End, append(args, string(r.To), errJSON, r.RunTTLMs)
	}
	var attempt int
	if err := tx.QueryRowContext(ctx, query, args...).Scan(&attempt); err != nil {
		return CASError(ctx, tx, st.RunExists, r.RunID, err)
	}
	return AppendJSONEvent(ctx, tx, st.Events, r.RunID, EventStatus, StatusEvent{Status: r.To, Attempt: attempt}, r.Now)
}

// FailOrphanedSessionRuns is engine.Store.FailOrphanedSessionRuns in the
// caller's transaction: it fails the orphaned queued runs with a "status"
// event each, closes the orphaned sessions and returns the failed runs'
// ids.
func FailOrphanedSessionRuns(ctx context.Context, tx Tx, st RecoveryStatements, p engine.FailOrphansParams) ([]string, error) {
	errJSON, err := EncodeError(p.Error)
	if err != nil {
		return nil, err
	}
	rows, err := tx.QueryContext(ctx, st.FailOrphans, errJSON, p.Now, p.RunTTLMs, p.OlderThan)
	if err != nil {
		return nil, fmt.Errorf("db: fail orphaned session runs: %w", err)
	}
	ids, err := Collect(rows, "fail orphaned session runs", func(s Scanner) (string, error) {
		var id string
		return id, s.Scan(&id)
	})
	if err != nil {
		return nil, err
	}
	for _, id := range ids {
		if err := AppendJSONEvent(ctx, tx, st.Events, id, EventStatus, StatusEvent{Status: engine.StatusFailed}, p.Now); err != nil {
			return nil, err
		}
	}
	if _, err := tx.ExecContext(ctx, st.CloseOrphans, p.Now, p.OlderThan); err != nil {
		return nil, fmt.Errorf("db: close orphaned sessions: %w", err)
	}
	if len(ids) == 0 {
		return nil, nil // as the stores returned before they shared this
	}
	return ids, nil
}
