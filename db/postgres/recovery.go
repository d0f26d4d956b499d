package postgres

import (
	"context"
	"fmt"

	"github.com/browsertask/browsertask/db/sqlcommon"
	"github.com/browsertask/browsertask/engine"
)

// ExpiredLeases returns running runs whose lease_expires_at <= now, oldest
// lease first: their process died or released them, and any live process may
// recover them with RecoverRun.
func (d *DB) ExpiredLeases(ctx context.Context, now int64) ([]*engine.Run, error) {
	var runs []*engine.Run
	err := d.readTx(ctx, func(tx *txn) error {
		var err error
		runs, err = queryRuns(ctx, tx, `SELECT `+sqlcommon.RunColumns+` FROM runs
			WHERE status = 'running' AND lease_expires_at <= $1 ORDER BY lease_expires_at, id`, now)
		return err
	})
	return runs, err
}

// RecoverRun applies r to a running run whose owner is r.OwnerID and whose
// lease expired at r.Now (compare-and-set, so two recovering processes or a
// late heartbeat cannot both win). The run's crashes count grows by one (its
// execution ended with its process gone). To queued clears owner and lease
// and keeps attempt (the next claim increments it); to failed or canceled writes r.Error
// and the terminal timestamps as FinishRun. A "status" event is appended.
// Errors: ErrNotFound, ErrConflict, or an error for another r.To.
func (d *DB) RecoverRun(ctx context.Context, r engine.Recovery) error {
	switch r.To {
	case engine.StatusQueued, engine.StatusFailed, engine.StatusCanceled:
	default:
		return fmt.Errorf("db: recover run %s: cannot recover to %q", r.RunID, r.To)
	}
	errJSON, err := sqlcommon.EncodeError(r.Error)
	if err != nil {
		return err
	}
	return d.writeTx(ctx, func(tx *txn) error {
		const cas = ` WHERE id = $1 AND status = 'running' AND owner_id = $2 AND lease_expires_at <= $3
			RETURNING attempt`
		query := `UPDATE runs SET status = 'queued', owner_id = '', lease_expires_at = 0, crashes = crashes + 1,
				updated_at = $3` + cas
		args := []any{r.RunID, r.OwnerID, r.Now}
		if r.To != engine.StatusQueued {
			query = `UPDATE runs SET status = $4, error = $5, lease_expires_at = 0, crashes = crashes + 1,
				finished_at = $3, updated_at = $3, expires_at = GREATEST(created_at + ttl_ms, $3::bigint + $6::bigint)` + cas
			args = append(args, string(r.To), errJSON, r.RunTTLMs)
		}
		var attempt int
		err := tx.QueryRowContext(ctx, query, args...).Scan(&attempt)
		if err != nil {
			return casError(ctx, tx, r.RunID, err)
		}
		return appendJSONEvent(ctx, tx, r.RunID, sqlcommon.EventStatus, sqlcommon.StatusEvent{Status: r.To, Attempt: attempt}, r.Now)
	})
}

// FailOrphanedSessionRuns fails the queued runs created before p.OlderThan
// whose session_owner_id names no owner row (the process holding their
// session is gone), appends their "status" events, and closes the open
// sessions created before p.OlderThan whose owner row is gone, all in one
// transaction. The age bound keeps it off a process that is still starting
// (its sessions may exist a moment before its owner row). It returns the
// ids of the failed runs.
func (d *DB) FailOrphanedSessionRuns(ctx context.Context, p engine.FailOrphansParams) ([]string, error) {
	now, olderThan, runTTLMs := p.Now, p.OlderThan, p.RunTTLMs
	errJSON, err := sqlcommon.EncodeError(p.Error)
	if err != nil {
		return nil, err
	}
	var ids []string
	err = d.writeTx(ctx, func(tx *txn) error {
		ids = ids[:0]
		rows, err := tx.QueryContext(ctx, `UPDATE runs SET status = 'failed', error = $1, lease_expires_at = 0,
				finished_at = $2, updated_at = $2, expires_at = GREATEST(created_at + ttl_ms, $2::bigint + $3::bigint)
			WHERE status = 'queued' AND session_owner_id <> '' AND created_at < $4
				AND session_owner_id NOT IN (SELECT id FROM owners)
			RETURNING id`,
			errJSON, now, runTTLMs, olderThan)
		if err != nil {
			return fmt.Errorf("db: fail orphaned session runs: %w", err)
		}
		for rows.Next() {
			var id string
			if err := rows.Scan(&id); err != nil {
				rows.Close()
				return fmt.Errorf("db: fail orphaned session runs: %w", err)
			}
			ids = append(ids, id)
		}
		if err := rows.Close(); err != nil {
			return fmt.Errorf("db: fail orphaned session runs: %w", err)
		}
		if err := rows.Err(); err != nil {
			return fmt.Errorf("db: fail orphaned session runs: %w", err)
		}
		for _, id := range ids {
			if err := appendJSONEvent(ctx, tx, id, sqlcommon.EventStatus, sqlcommon.StatusEvent{Status: engine.StatusFailed}, now); err != nil {
				return err
			}
		}
		if _, err := tx.ExecContext(ctx, `UPDATE sessions SET closed_at = $1
			WHERE closed_at IS NULL AND created_at < $2 AND owner_id NOT IN (SELECT id FROM owners)`, now, olderThan); err != nil {
			return fmt.Errorf("db: close orphaned sessions: %w", err)
		}
		return nil
	})
	return ids, err
}
