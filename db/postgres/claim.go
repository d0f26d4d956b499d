package postgres

import (
	"context"
	"strconv"

	"github.com/browsertask/browsertask/db/sqlcommon"
	"github.com/browsertask/browsertask/engine"
)

// claimLockKey is the transaction-scoped advisory lock every claim holds
// while it counts the running runs and takes queued ones. Measured with
// concurrent claimers (TestClaimLimitUnderConcurrentClaimers): without it,
// two READ COMMITTED transactions both count the same free slots and the
// global limit is exceeded; FOR UPDATE SKIP LOCKED alone keeps them off the
// same rows but not under the limit. With it the limit holds exactly.
const claimLockKey = 0x62745f636c61 // "bt_cla"

// claimSQL is the PostgreSQL store's statements for taking and holding
// runs: the advisory lock (claimLockKey) orders claimers; FOR UPDATE SKIP
// LOCKED only steps over rows another writer, a cancel or a recovery,
// holds.
var claimSQL = sqlcommon.ClaimStatements{
	RunStatements: runSQL,
	Lock:          `SELECT pg_advisory_xact_lock(` + strconv.FormatInt(claimLockKey, 10) + `)`,
	Running: `SELECT COUNT(*) FROM runs
		WHERE status = 'running' AND lease_expires_at > $1`,
	Claim: `UPDATE runs SET status = 'running', owner_id = $1,
			lease_expires_at = $2, attempt = attempt + 1,
			started_at = COALESCE(started_at, GREATEST(created_at, $3)), updated_at = GREATEST(updated_at, $3)
		WHERE id IN (SELECT id FROM runs
			WHERE status = 'queued' AND (session_owner_id = '' OR session_owner_id = $1)
			ORDER BY created_at, id LIMIT $4::bigint FOR UPDATE SKIP LOCKED)
		RETURNING ` + sqlcommon.RunColumns,
	NoLimit: nil, // LIMIT NULL is no limit
	Beat:    `UPDATE owners SET heartbeat_at = $1 WHERE id = $2`,
	Extend: `UPDATE runs SET lease_expires_at = $1
		WHERE id = $2 AND status = 'running' AND owner_id = $3 AND attempt = $4`,
	Requeue: `UPDATE runs SET status = 'queued', owner_id = '',
			lease_expires_at = 0, updated_at = GREATEST(updated_at, $1)
		WHERE id = $2 AND status = 'running' AND owner_id = $3 AND attempt = $4 RETURNING attempt`,
}

// ClaimRuns claims queued runs for c.OwnerID in one write transaction. The
// global limit is enforced inside it: running runs with a live lease
// (lease_expires_at > c.Now), across every owner and process, are counted and
// at most min(c.Max, c.MaxRunning - count) runs are claimed, FIFO by
// created_at then id, skipping runs bound to another owner's session.
// MaxRunning <= 0 means no global limit; Max <= 0 means no per-call limit.
// Each claimed run becomes running with the lease, attempt+1, started_at set
// the first time, and a "status" event.
func (d *DB) ClaimRuns(ctx context.Context, c engine.Claim) (runs []*engine.Run, err error) {
	st := claimSQL
	if d.noClaimLock {
		st.Lock = "" // tests measure the limit without it
	}
	err = d.writeTx(ctx, func(tx *txn) error {
		runs, err = sqlcommon.ClaimRuns(ctx, tx, st, c)
		return err
	})
	if err != nil {
		return nil, err
	}
	return runs, nil
}

// Heartbeat records the owner's heartbeat and extends to p.LeaseUntil the
// lease of each run in p.Held that is still running under this owner in that
// execution (attempt). Only the executions the caller names are extended: a
// run whose execution ended without its final write (a failed write, a
// panic) loses its lease and is recovered, instead of holding a slot
// forever. It returns the ids of the runs extended: a run the caller
// executes that is missing was cancelled or recovered elsewhere. It runs on
// the heartbeats' own connections (DB.leases), never queued behind the
// main pool's work.
func (d *DB) Heartbeat(ctx context.Context, p engine.HeartbeatParams) (ids []string, err error) {
	err = d.writeTxOn(ctx, d.leases, func(tx *txn) error {
		ids, err = sqlcommon.Heartbeat(ctx, tx, claimSQL, p)
		return err
	})
	if err != nil {
		return nil, err
	}
	return ids, nil
}

// RequeueRun moves a running run held by h back to queued (graceful
// shutdown of a resumable run), clearing owner and lease; the attempt count
// is kept so the next claim increments it. Errors: ErrNotFound, ErrConflict.
func (d *DB) RequeueRun(ctx context.Context, runID string, h engine.Holder, now int64) error {
	return d.writeTx(ctx, func(tx *txn) error { return sqlcommon.RequeueRun(ctx, tx, claimSQL, runID, h, now) })
}
