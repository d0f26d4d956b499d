package db

import (
	"context"
	"database/sql"
	"fmt"

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
	err := d.write(ctx, func(tx *sql.Tx) error {
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
			RETURNING id, attempt`,
			sql.Named("owner", c.OwnerID), sql.Named("lease", c.LeaseUntil),
			sql.Named("now", c.Now), sql.Named("n", n))
		if err != nil {
			return fmt.Errorf("db: claim runs: %w", err)
		}
		type claimed struct {
			id      string
			attempt int
		}
		var got []claimed
		for rows.Next() {
			var cl claimed
			if err := rows.Scan(&cl.id, &cl.attempt); err != nil {
				rows.Close()
				return fmt.Errorf("db: claim runs: %w", err)
			}
			got = append(got, cl)
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return fmt.Errorf("db: claim runs: %w", err)
		}
		if len(got) == 0 {
			return nil
		}
		args := make([]any, len(got))
		for i, cl := range got {
			args[i] = cl.id
			if err := appendJSONEvent(ctx, tx, cl.id, eventStatus,
				statusEvent{Status: engine.StatusRunning, Attempt: cl.attempt}, c.Now); err != nil {
				return err
			}
		}
		runs, err = queryRuns(ctx, tx, `SELECT `+runColumns+` FROM runs WHERE id IN (`+
			placeholders(len(args))+`) ORDER BY created_at, id`, args...)
		return err
	})
	if err != nil {
		return nil, err
	}
	return runs, nil
}

// Heartbeat records the owner's heartbeat and extends the lease of every run
// it holds as running to leaseUntil. It returns those runs' ids: a run the
// caller executes that is missing was cancelled or recovered elsewhere.
func (d *DB) Heartbeat(ctx context.Context, ownerID string, now, leaseUntil int64) ([]string, error) {
	ids := []string{}
	err := d.write(ctx, func(tx *sql.Tx) error {
		if _, err := tx.ExecContext(ctx, `UPDATE owners SET heartbeat_at = ? WHERE id = ?`, now, ownerID); err != nil {
			return fmt.Errorf("db: heartbeat owner: %w", err)
		}
		rows, err := tx.QueryContext(ctx, `UPDATE runs SET lease_expires_at = ?
			WHERE status = 'running' AND owner_id = ? RETURNING id`, leaseUntil, ownerID)
		if err != nil {
			return fmt.Errorf("db: heartbeat leases: %w", err)
		}
		defer rows.Close()
		for rows.Next() {
			var id string
			if err := rows.Scan(&id); err != nil {
				return fmt.Errorf("db: heartbeat leases: %w", err)
			}
			ids = append(ids, id)
		}
		return rows.Err()
	})
	if err != nil {
		return nil, err
	}
	return ids, nil
}

// RequeueRun moves a running run held by ownerID back to queued (graceful
// shutdown of a resumable run), clearing owner and lease; the attempt count
// is kept so the next claim increments it. Errors: ErrNotFound, ErrConflict.
func (d *DB) RequeueRun(ctx context.Context, runID, ownerID string, now int64) error {
	return d.write(ctx, func(tx *sql.Tx) error {
		var attempt int
		err := tx.QueryRowContext(ctx, `UPDATE runs SET status = 'queued', owner_id = '',
				lease_expires_at = 0, updated_at = ?
			WHERE id = ? AND status = 'running' AND owner_id = ? RETURNING attempt`,
			now, runID, ownerID).Scan(&attempt)
		if err != nil {
			return casError(ctx, tx, runID, err)
		}
		return appendJSONEvent(ctx, tx, runID, eventStatus,
			statusEvent{Status: engine.StatusQueued, Attempt: attempt}, now)
	})
}
