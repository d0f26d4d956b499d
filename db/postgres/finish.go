package postgres

import (
	"context"

	"github.com/browsertask/browsertask/db/sqlcommon"
	"github.com/browsertask/browsertask/engine"
)

// finishSQL is the PostgreSQL store's statements for ending runs (arguments
// numbered as sqlcommon.FinishStatements orders them).
var finishSQL = sqlcommon.FinishStatements{
	RunStatements: runSQL,
	Finish: `UPDATE runs SET status = $1, result = $2, error = $3,
			lease_expires_at = 0, finished_at = GREATEST(updated_at, $4), updated_at = GREATEST(updated_at, $4),
			expires_at = GREATEST(created_at + ttl_ms, $4::bigint + $5::bigint),
			progress_done = CASE WHEN $6::boolean THEN $7 ELSE progress_done END,
			progress_total = CASE WHEN $6::boolean THEN $8 ELSE progress_total END,
			progress_failed = CASE WHEN $6::boolean THEN $9 ELSE progress_failed END,
			progress_message = CASE WHEN $6::boolean THEN $10 ELSE progress_message END
		WHERE id = $11 AND status = 'running' AND owner_id = $12 AND attempt = $13 RETURNING attempt`,
	Cancel: `UPDATE runs SET status = 'canceled', error = $1,
			cancel_reason = $2, cancel_requested = 1, lease_expires_at = 0,
			finished_at = GREATEST(updated_at, $3), updated_at = GREATEST(updated_at, $3), expires_at = GREATEST(created_at + ttl_ms, $3::bigint + $4::bigint)
		WHERE id = $5 AND status IN ('queued', 'running')`,
	KeptError: `SELECT error FROM runs
		WHERE id = $1 AND status = 'canceled' AND owner_id = $2 AND attempt = $3`,
	Keep: `UPDATE runs SET error = $1, updated_at = GREATEST(updated_at, $2) WHERE id = $3`,
}

// FinishRun writes a terminal state for a run held by f.OwnerID in execution
// f.Attempt. The write is a compare-and-set on status running, owner and
// attempt, so a late finish after a cancel or a recovery changes nothing —
// not even when the same process claimed the run again meanwhile. It sets
// finished_at and expires_at = max(created_at + ttl_ms, now + f.RunTTLMs)
// and appends a "status" event. Errors: ErrNotFound, ErrConflict (CAS
// failed), or an error for a non-terminal f.Status.
func (d *DB) FinishRun(ctx context.Context, f engine.Finish) error {
	return d.writeTx(ctx, func(tx *txn) error { return sqlcommon.FinishRun(ctx, tx, finishSQL, f) })
}

// CancelRun moves a queued or running run to canceled with p.Error as its error,
// records p.Reason and the cancel_requested flag, sets finished_at and
// expires_at as FinishRun does, appends a "status" event and returns the run
// as stored. A run already terminal is returned unchanged with changed =
// false. The owner notices through its context or its next Heartbeat.
// Errors: ErrNotFound.
func (d *DB) CancelRun(ctx context.Context, p engine.CancelRunParams) (run *engine.Run, changed bool, err error) {
	err = d.writeTx(ctx, func(tx *txn) error {
		run, changed, err = sqlcommon.CancelRun(ctx, tx, finishSQL, p)
		return err
	})
	if err != nil {
		return nil, false, err
	}
	return run, changed, nil
}

// KeepCanceled adds what a canceled run kept to its error (message note and
// details) and appends a "kept" event with the details, if the run is
// still canceled and its owner and attempt are p.Holder's. Errors:
// ErrNotFound, ErrConflict.
func (d *DB) KeepCanceled(ctx context.Context, p engine.KeepParams) error {
	return d.writeTx(ctx, func(tx *txn) error { return sqlcommon.KeepCanceled(ctx, tx, finishSQL, p) })
}
