package db

import (
	"context"
	"database/sql"
	"fmt"

	"github.com/browsertask/browsertask/db/sqlcommon"
	"github.com/browsertask/browsertask/engine"
)

// FinishRun writes a terminal state for a run held by f.OwnerID in execution
// f.Attempt. The write is a compare-and-set on status running, owner and
// attempt, so a late finish after a cancel or a recovery changes nothing —
// not even when the same process claimed the run again meanwhile. It sets finished_at and expires_at =
// max(created_at + ttl_ms, now + f.RunTTLMs) and appends a "status" event.
// Errors: ErrNotFound, ErrConflict (CAS failed), or an error for a
// non-terminal f.Status.
func (d *DB) FinishRun(ctx context.Context, f engine.Finish) error {
	if !f.Status.Terminal() {
		return fmt.Errorf("db: finish run %s: status %q is not terminal", f.RunID, f.Status)
	}
	errJSON, err := sqlcommon.EncodeError(f.Error)
	if err != nil {
		return err
	}
	return d.writeTx(ctx, func(tx *txn) error {
		var attempt int
		p, set := engine.Progress{}, 0
		if f.Progress != nil {
			p, set = *f.Progress, 1
		}
		err := tx.QueryRowContext(ctx, `UPDATE runs SET status = :status, result = :result, error = :error,
				lease_expires_at = 0, finished_at = :now, updated_at = :now,
				expires_at = MAX(created_at + ttl_ms, :now + :ttl),
				progress_done = CASE WHEN :set THEN :pdone ELSE progress_done END,
				progress_total = CASE WHEN :set THEN :ptotal ELSE progress_total END,
				progress_failed = CASE WHEN :set THEN :pfailed ELSE progress_failed END,
				progress_message = CASE WHEN :set THEN :pmsg ELSE progress_message END
			WHERE id = :id AND status = 'running' AND owner_id = :owner AND attempt = :attempt RETURNING attempt`,
			sql.Named("status", string(f.Status)), sql.Named("result", sqlcommon.NullJSON(f.Result)),
			sql.Named("error", errJSON), sql.Named("now", f.Now), sql.Named("ttl", f.RunTTLMs),
			sql.Named("set", set), sql.Named("pdone", p.DoneSteps), sql.Named("ptotal", p.TotalSteps),
			sql.Named("pfailed", p.FailedSteps), sql.Named("pmsg", p.Message),
			sql.Named("id", f.RunID), sql.Named("owner", f.OwnerID), sql.Named("attempt", f.Attempt)).Scan(&attempt)
		if err != nil {
			return casError(ctx, tx, f.RunID, err)
		}
		return appendJSONEvent(ctx, tx, f.RunID, sqlcommon.EventStatus, sqlcommon.StatusEvent{Status: f.Status, Attempt: attempt}, f.Now)
	})
}

// CancelRun moves a queued or running run to canceled with p.Error as its error,
// records p.Reason and the cancel_requested flag, sets finished_at and
// expires_at as FinishRun does, appends a "status" event and returns the run
// as stored. A run already terminal is returned unchanged with changed =
// false. The owner notices through its context or its next Heartbeat.
// Errors: ErrNotFound.
func (d *DB) CancelRun(ctx context.Context, p engine.CancelRunParams) (*engine.Run, bool, error) {
	runID, reason, now, runTTLMs := p.RunID, p.Reason, p.Now, p.RunTTLMs
	errJSON, err := sqlcommon.EncodeError(p.Error)
	if err != nil {
		return nil, false, err
	}
	var (
		run     *engine.Run
		changed bool
	)
	err = d.writeTx(ctx, func(tx *txn) error {
		res, err := tx.ExecContext(ctx, `UPDATE runs SET status = 'canceled', error = :error,
				cancel_reason = :reason, cancel_requested = 1, lease_expires_at = 0,
				finished_at = :now, updated_at = :now, expires_at = MAX(created_at + ttl_ms, :now + :ttl)
			WHERE id = :id AND status IN ('queued', 'running')`,
			sql.Named("error", errJSON), sql.Named("reason", reason), sql.Named("now", now),
			sql.Named("ttl", runTTLMs), sql.Named("id", runID))
		if err != nil {
			return fmt.Errorf("db: cancel run: %w", err)
		}
		n, err := res.RowsAffected()
		if err != nil {
			return fmt.Errorf("db: cancel run: %w", err)
		}
		if changed = n == 1; changed {
			if err := appendJSONEvent(ctx, tx, runID, sqlcommon.EventStatus,
				sqlcommon.StatusEvent{Status: engine.StatusCanceled}, now); err != nil {
				return err
			}
		}
		run, err = getRun(ctx, tx, runID)
		return err
	})
	if err != nil {
		return nil, false, err
	}
	return run, changed, nil
}

// casError explains a compare-and-set write that matched no row: the run is
// missing (ErrNotFound) or in another state (ErrConflict).
func casError(ctx context.Context, tx sqlTx, runID string, err error) error {
	return sqlcommon.CASError(ctx, tx, runExistsSQL, runID, err)
}

// KeepCanceled adds what a canceled run kept to its error (message note and
// details) and appends a "kept" event with the details, if the run is
// still canceled and its owner and attempt are p.Holder's. Errors:
// ErrNotFound, ErrConflict.
func (d *DB) KeepCanceled(ctx context.Context, p engine.KeepParams) error {
	return d.writeTx(ctx, func(tx *txn) error {
		var raw sql.NullString
		err := tx.QueryRowContext(ctx, `SELECT error FROM runs
			WHERE id = :id AND status = 'canceled' AND owner_id = :owner AND attempt = :attempt`,
			sql.Named("id", p.RunID), sql.Named("owner", p.Holder.OwnerID), sql.Named("attempt", p.Holder.Attempt)).Scan(&raw)
		if err != nil {
			return casError(ctx, tx, p.RunID, err)
		}
		e, err := sqlcommon.DecodeError(raw)
		if err != nil {
			return fmt.Errorf("db: keep run %s: %w", p.RunID, err)
		}
		if e == nil {
			e = &engine.Error{Code: engine.RunCanceled}
		}
		e.Message += p.Note
		if e.Details == nil {
			e.Details = map[string]any{}
		}
		for k, v := range p.Details {
			e.Details[k] = v
		}
		errJSON, err := sqlcommon.EncodeError(e)
		if err != nil {
			return err
		}
		if _, err := tx.ExecContext(ctx, `UPDATE runs SET error = ?, updated_at = ? WHERE id = ?`, errJSON, p.Now, p.RunID); err != nil {
			return fmt.Errorf("db: keep run %s: %w", p.RunID, err)
		}
		return appendJSONEvent(ctx, tx, p.RunID, "kept", p.Details, p.Now)
	})
}
