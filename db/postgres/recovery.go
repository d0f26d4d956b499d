package postgres

import (
	"context"

	"github.com/browsertask/browsertask/db/sqlcommon"
	"github.com/browsertask/browsertask/engine"
)

// recoverySQL is the PostgreSQL store's statements for taking back a gone
// process's runs (arguments numbered as sqlcommon.RecoveryStatements
// orders them).
var recoverySQL = sqlcommon.RecoveryStatements{
	RunStatements: runSQL,
	Expired: `SELECT ` + sqlcommon.RunColumns + ` FROM runs
		WHERE status = 'running' AND lease_expires_at <= $1 ORDER BY lease_expires_at, id`,
	Requeue: `UPDATE runs SET status = 'queued', owner_id = '', lease_expires_at = 0, crashes = crashes + 1,
			updated_at = GREATEST(updated_at, $3)
		WHERE id = $1 AND status = 'running' AND owner_id = $2 AND lease_expires_at <= $3
		RETURNING attempt`,
	End: `UPDATE runs SET status = $4, error = $5, lease_expires_at = 0, crashes = crashes + 1,
			finished_at = GREATEST(updated_at, $3), updated_at = GREATEST(updated_at, $3), expires_at = GREATEST(created_at + ttl_ms, $3::bigint + $6::bigint)
		WHERE id = $1 AND status = 'running' AND owner_id = $2 AND lease_expires_at <= $3
		RETURNING attempt`,
	FailOrphans: `UPDATE runs SET status = 'failed', error = $1, lease_expires_at = 0,
			finished_at = GREATEST(updated_at, $2), updated_at = GREATEST(updated_at, $2), expires_at = GREATEST(created_at + ttl_ms, $2::bigint + $3::bigint)
		WHERE status = 'queued' AND session_owner_id <> '' AND created_at < $4
			AND session_owner_id NOT IN (SELECT id FROM owners)
		RETURNING id`,
	CloseOrphans: `UPDATE sessions SET closed_at = $1
		WHERE closed_at IS NULL AND created_at < $2 AND owner_id NOT IN (SELECT id FROM owners)`,
}

// ExpiredLeases returns running runs whose lease_expires_at <= now, oldest
// lease first: their process died or released them, and any live process may
// recover them with RecoverRun.
func (d *DB) ExpiredLeases(ctx context.Context, now int64) (runs []*engine.Run, err error) {
	err = d.readTx(ctx, func(tx *txn) error {
		runs, err = sqlcommon.ExpiredLeases(ctx, tx, recoverySQL, now)
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
	return d.writeTx(ctx, func(tx *txn) error { return sqlcommon.RecoverRun(ctx, tx, recoverySQL, r) })
}

// FailOrphanedSessionRuns fails the queued runs created before p.OlderThan
// whose session_owner_id names no owner row (the process holding their
// session is gone), appends their "status" events, and closes the open
// sessions created before p.OlderThan whose owner row is gone, all in one
// transaction. The age bound keeps it off a process that is still starting
// (its sessions may exist a moment before its owner row). It returns the
// ids of the failed runs.
func (d *DB) FailOrphanedSessionRuns(ctx context.Context, p engine.FailOrphansParams) (ids []string, err error) {
	err = d.writeTx(ctx, func(tx *txn) error {
		ids, err = sqlcommon.FailOrphanedSessionRuns(ctx, tx, recoverySQL, p)
		return err
	})
	return ids, err
}
