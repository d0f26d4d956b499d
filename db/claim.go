package db

import (
	"context"
	"database/sql"
	"fmt"
	"sort"

	"github.com/browsertask/browsertask/db/sqlcommon"
	"github.com/browsertask/browsertask/engine"
)

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
		n := -1 // SQLite: LIMIT -1 is no limit
		if c.MaxRunning > 0 {
			var running int
			if err := tx.QueryRowContext(ctx, `SELECT COUNT(*) FROM runs
				WHERE status = 'running' AND lease_expires_at > ?`, c.Now).Scan(&running); err != nil {
				return fmt.Errorf("db: count running: %w", err)
			}
			n = c.MaxRunning - running
			if n <= 0 {
				return nil
			}
		}
		if c.Max > 0 && (n < 0 || c.Max < n) {
			n = c.Max
		}
		rows, err := tx.QueryContext(ctx, `UPDATE runs SET status = 'running', owner_id = :owner,
				lease_expires_at = :lease, attempt = attempt + 1,
				started_at = COALESCE(started_at, :now), updated_at = :now
			WHERE id IN (SELECT id FROM runs
				WHERE status = 'queued' AND (session_owner_id = '' OR session_owner_id = :owner)
				ORDER BY created_at, id LIMIT :n)
			RETURNING `+sqlcommon.RunColumns,
			sql.Named("owner", c.OwnerID), sql.Named("lease", c.LeaseUntil),
			sql.Named("now", c.Now), sql.Named("n", n))
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
		if _, err := tx.ExecContext(ctx, `UPDATE owners SET heartbeat_at = ? WHERE id = ?`, now, ownerID); err != nil {
			return fmt.Errorf("db: heartbeat owner: %w", err)
		}
		for _, h := range held {
			res, err := tx.ExecContext(ctx, `UPDATE runs SET lease_expires_at = ?
				WHERE id = ? AND status = 'running' AND owner_id = ? AND attempt = ?`,
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
				lease_expires_at = 0, updated_at = ?
			WHERE id = ? AND status = 'running' AND owner_id = ? AND attempt = ? RETURNING attempt`,
			now, runID, h.OwnerID, h.Attempt).Scan(&attempt)
		if err != nil {
			return casError(ctx, tx, runID, err)
		}
		return appendJSONEvent(ctx, tx, runID, sqlcommon.EventStatus,
			sqlcommon.StatusEvent{Status: engine.StatusQueued, Attempt: attempt}, now)
	})
}
