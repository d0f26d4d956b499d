package db

import (
	"context"
	"database/sql"
	"fmt"

	"github.com/browsertask/browsertask/engine"
)

// ExpiredLeases returns running runs whose lease_expires_at <= now, oldest
// lease first: their process died or released them, and any live process may
// recover them with RecoverRun.
func (d *DB) ExpiredLeases(ctx context.Context, now int64) ([]*engine.Run, error) {
	var runs []*engine.Run
	err := d.readTx(ctx, func(tx *txn) error {
		var err error
		runs, err = queryRuns(ctx, tx, `SELECT `+runColumns+` FROM runs
			WHERE status = 'running' AND lease_expires_at <= ? ORDER BY lease_expires_at, id`, now)
		return err
	})
	return runs, err
}

// RecoverRun applies r to a running run whose owner is r.OwnerID and whose
// lease expired at r.Now (compare-and-set, so two recovering processes or a
// late heartbeat cannot both win). To queued clears owner and lease and keeps
// attempt (the next claim increments it); to failed or canceled writes r.Error
// and the terminal timestamps as FinishRun. A "status" event is appended.
// Errors: ErrNotFound, ErrConflict, or an error for another r.To.
func (d *DB) RecoverRun(ctx context.Context, r engine.Recovery) error {
	switch r.To {
	case engine.StatusQueued, engine.StatusFailed, engine.StatusCanceled:
	default:
		return fmt.Errorf("db: recover run %s: cannot recover to %q", r.RunID, r.To)
	}
	errJSON, err := encodeError(r.Error)
	if err != nil {
		return err
	}
	return d.writeTx(ctx, func(tx *txn) error {
		const cas = ` WHERE id = :id AND status = 'running' AND owner_id = :owner AND lease_expires_at <= :now
			RETURNING attempt`
		query := `UPDATE runs SET status = 'queued', owner_id = '', lease_expires_at = 0, updated_at = :now` + cas
		if r.To != engine.StatusQueued {
			query = `UPDATE runs SET status = :status, error = :error, lease_expires_at = 0,
				finished_at = :now, updated_at = :now, expires_at = MAX(created_at + ttl_ms, :now + :ttl)` + cas
		}
		var attempt int
		err := tx.QueryRowContext(ctx, query,
			sql.Named("id", r.RunID), sql.Named("owner", r.OwnerID), sql.Named("now", r.Now),
			sql.Named("status", string(r.To)), sql.Named("error", errJSON),
			sql.Named("ttl", r.RunTTLMs)).Scan(&attempt)
		if err != nil {
			return casError(ctx, tx, r.RunID, err)
		}
		return appendJSONEvent(ctx, tx, r.RunID, eventStatus, statusEvent{Status: r.To, Attempt: attempt}, r.Now)
	})
}
