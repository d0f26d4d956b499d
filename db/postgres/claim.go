package postgres

import (
	"context"
	"fmt"
	"sort"

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

// ClaimRuns claims queued runs for c.OwnerID in one write transaction. The
// global limit is enforced inside it: running runs with a live lease
// (lease_expires_at > c.Now), across every owner and process, are counted and
// at most min(c.Max, c.MaxRunning - count) runs are claimed, FIFO by
// created_at then id, skipping runs bound to another owner's session.
// MaxRunning <= 0 means no global limit; Max <= 0 means no per-call limit.
// Each claimed run becomes running with the lease, attempt+1, started_at set
// the first time, and a "status" event.
func (d *DB) ClaimRuns(ctx context.Context, c engine.Claim) ([]*engine.Run, error) {
	var runs []*engine.Run
	err := d.writeTx(ctx, func(tx *txn) error {
		runs = runs[:0]
		// The global limit is counted and taken under one advisory lock,
		// so two claimers never both see room for the last slot.
		if !d.noClaimLock {
			if _, err := tx.ExecContext(ctx, `SELECT pg_advisory_xact_lock($1)`, int64(claimLockKey)); err != nil {
				return fmt.Errorf("postgres: claim lock: %w", err)
			}
		}
		var n any // NULL: LIMIT NULL is no limit
		limit := -1
		if c.MaxRunning > 0 {
			var running int
			if err := tx.QueryRowContext(ctx, `SELECT COUNT(*) FROM runs
				WHERE status = 'running' AND lease_expires_at > $1`, c.Now).Scan(&running); err != nil {
				return fmt.Errorf("db: count running: %w", err)
			}
			limit = c.MaxRunning - running
			if limit <= 0 {
				return nil
			}
		}
		if c.Max > 0 && (limit < 0 || c.Max < limit) {
			limit = c.Max
		}
		if limit >= 0 {
			n = limit
		}
		rows, err := tx.QueryContext(ctx, `UPDATE runs SET status = 'running', owner_id = $1,
				lease_expires_at = $2, attempt = attempt + 1,
				started_at = COALESCE(started_at, $3), updated_at = $3
			WHERE id IN (SELECT id FROM runs
				WHERE status = 'queued' AND (session_owner_id = '' OR session_owner_id = $1)
				ORDER BY created_at, id LIMIT $4::bigint FOR UPDATE SKIP LOCKED)
			RETURNING `+sqlcommon.RunColumns,
			c.OwnerID, c.LeaseUntil, c.Now, n)
		if err != nil {
			return fmt.Errorf("db: claim runs: %w", err)
		}
		// RETURNING gives the rows as updated, so no second read is needed.
		for rows.Next() {
			r, err := sqlcommon.ScanRun(rows)
			if err != nil {
				rows.Close()
				return fmt.Errorf("db: claim runs: %w", err)
			}
			runs = append(runs, r)
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return fmt.Errorf("db: claim runs: %w", err)
		}
		if len(runs) == 0 {
			return nil
		}
		// RETURNING does not follow the subquery's order.
		// (The lock above also orders claims: FOR UPDATE SKIP LOCKED only
		// steps over rows another writer, a cancel or a recovery, holds.)
		sort.Slice(runs, func(i, j int) bool {
			if runs[i].CreatedAt != runs[j].CreatedAt {
				return runs[i].CreatedAt < runs[j].CreatedAt
			}
			return runs[i].RunID < runs[j].RunID
		})
		for _, r := range runs {
			if err := appendJSONEvent(ctx, tx, r.RunID, sqlcommon.EventStatus,
				sqlcommon.StatusEvent{Status: engine.StatusRunning, Attempt: r.Attempt}, c.Now); err != nil {
				return err
			}
		}
		return fillArtifactIDs(ctx, tx, runs)
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
// executes that is missing was cancelled or recovered elsewhere.
func (d *DB) Heartbeat(ctx context.Context, p engine.HeartbeatParams) ([]string, error) {
	ownerID, now, leaseUntil, held := p.OwnerID, p.Now, p.LeaseUntil, p.Held
	ids := []string{}
	err := d.writeTx(ctx, func(tx *txn) error {
		ids = ids[:0]
		if _, err := tx.ExecContext(ctx, `UPDATE owners SET heartbeat_at = $1 WHERE id = $2`, now, ownerID); err != nil {
			return fmt.Errorf("db: heartbeat owner: %w", err)
		}
		for _, h := range held {
			res, err := tx.ExecContext(ctx, `UPDATE runs SET lease_expires_at = $1
				WHERE id = $2 AND status = 'running' AND owner_id = $3 AND attempt = $4`,
				leaseUntil, h.RunID, ownerID, h.Attempt)
			if err != nil {
				return fmt.Errorf("db: heartbeat lease of %s: %w", h.RunID, err)
			}
			if n, err := res.RowsAffected(); err != nil {
				return fmt.Errorf("db: heartbeat lease of %s: %w", h.RunID, err)
			} else if n == 1 {
				ids = append(ids, h.RunID)
			}
		}
		return nil
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
	return d.writeTx(ctx, func(tx *txn) error {
		var attempt int
		err := tx.QueryRowContext(ctx, `UPDATE runs SET status = 'queued', owner_id = '',
				lease_expires_at = 0, updated_at = $1
			WHERE id = $2 AND status = 'running' AND owner_id = $3 AND attempt = $4 RETURNING attempt`,
			now, runID, h.OwnerID, h.Attempt).Scan(&attempt)
		if err != nil {
			return casError(ctx, tx, runID, err)
		}
		return appendJSONEvent(ctx, tx, runID, sqlcommon.EventStatus,
			sqlcommon.StatusEvent{Status: engine.StatusQueued, Attempt: attempt}, now)
	})
}
