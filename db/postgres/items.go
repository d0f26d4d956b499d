package postgres

import (
	"context"
	"fmt"

	"github.com/browsertask/browsertask/db/sqlcommon"
	"github.com/browsertask/browsertask/engine"
)

// SaveProgress updates the progress of a run held by h (compare-and-set on
// status running, owner and attempt) and its updated_at. It appends no event; the
// engine appends throttled "progress" events itself. Errors: ErrNotFound,
// ErrConflict.
func (d *DB) SaveProgress(ctx context.Context, runID string, h engine.Holder, p engine.Progress, now int64) error {
	return d.writeTx(ctx, func(tx *txn) error {
		return saveProgress(ctx, tx, runID, h, p, now)
	})
}

// saveProgressSQL is the compare-and-set progress update.
const saveProgressSQL = `UPDATE runs SET progress_done = $1, progress_total = $2,
		progress_failed = $3, progress_message = $4, updated_at = $5
	WHERE id = $6 AND status = 'running' AND owner_id = $7 AND attempt = $8 RETURNING id`

// saveProgress is SaveProgress inside the caller's transaction.
func saveProgress(ctx context.Context, tx sqlTx, runID string, h engine.Holder, p engine.Progress, now int64) error {
	return sqlcommon.CAS(ctx, tx, runExistsSQL, runID, saveProgressSQL,
		p.DoneSteps, p.TotalSteps, p.FailedSteps, p.Message, now, runID, h.OwnerID, h.Attempt)
}

// SaveItem upserts an item checkpoint (by index) and the run's progress in
// one transaction, with the same compare-and-set as SaveProgress, and appends
// an "item" event: either the checkpoint and its progress are both stored or
// neither is. Errors: ErrNotFound, ErrConflict (the run is no longer ours).
func (d *DB) SaveItem(ctx context.Context, runID string, h engine.Holder, it engine.Item, p engine.Progress, now int64) error {
	errJSON, err := sqlcommon.EncodeError(it.Error)
	if err != nil {
		return err
	}
	return d.writeTx(ctx, func(tx *txn) error {
		if err := saveProgress(ctx, tx, runID, h, p, now); err != nil {
			return err
		}
		_, err := tx.ExecContext(ctx, `INSERT INTO run_items (run_id, idx, key, status, output, error)
			VALUES ($1, $2, $3, $4, $5, $6)
			ON CONFLICT (run_id, idx) DO UPDATE SET key = excluded.key, status = excluded.status,
				output = excluded.output, error = excluded.error`,
			runID, it.Index, it.Key, it.Status, sqlcommon.NullJSON(it.Output), errJSON)
		if err != nil {
			return fmt.Errorf("db: save item: %w", err)
		}
		return appendJSONEvent(ctx, tx, runID, sqlcommon.EventItem,
			sqlcommon.ItemEvent{Index: it.Index, Key: it.Key, Status: it.Status}, now)
	})
}

// ListItems returns a run's item checkpoints ordered by index (empty for an
// unknown run).
func (d *DB) ListItems(ctx context.Context, runID string) ([]engine.Item, error) {
	return listItems(ctx, d.reader(), runID)
}

// listItems is ListItems on q.
func listItems(ctx context.Context, q queryer, runID string) ([]engine.Item, error) {
	return sqlcommon.ListItems(ctx, q, runID, `SELECT `+sqlcommon.ItemColumns+` FROM run_items
		WHERE run_id = $1 ORDER BY idx`, runID)
}

// StoppedRuns returns the newest (at most 20) unexpired runs of a template
// version that ended failed or canceled before q.Before, with the count of
// their succeeded items (the ones AdoptItems copies).
func (d *DB) StoppedRuns(ctx context.Context, q engine.StoppedRunsQuery) ([]engine.StoppedRun, error) {
	rows, err := d.reader().QueryContext(ctx, `SELECT `+sqlcommon.StoppedRunColumns+`
		FROM runs r
		WHERE r.template_id = $1 AND r.template_version = $2 AND r.status IN ('failed', 'canceled')
			AND r.expires_at > $3 AND r.created_at < $4
		ORDER BY r.created_at DESC, r.id DESC LIMIT 20`, q.TemplateID, q.Version, q.Now, q.Before)
	if err != nil {
		return nil, fmt.Errorf("db: stopped runs: %w", err)
	}
	return sqlcommon.Collect(rows, "stopped runs", sqlcommon.ScanStoppedRun)
}

// AdoptItems copies run from's succeeded items into run to, which must be
// running and held by h, appends an "adopted" event and returns to's
// items. Failed items stay behind, so the new run does them again: a
// resubmission is how a client retries. Errors: ErrNotFound, ErrConflict.
func (d *DB) AdoptItems(ctx context.Context, from, to string, h engine.Holder, now int64) ([]engine.Item, error) {
	var items []engine.Item
	err := d.writeTx(ctx, func(tx *txn) error {
		if err := sqlcommon.CAS(ctx, tx, runExistsSQL, to, `SELECT id FROM runs WHERE id = $1 AND status = 'running' AND owner_id = $2 AND attempt = $3`,
			to, h.OwnerID, h.Attempt); err != nil {
			return err
		}
		if _, err := tx.ExecContext(ctx, `INSERT INTO run_items (run_id, idx, key, status, output, error)
			SELECT $1, idx, key, status, output, error FROM run_items WHERE run_id = $2 AND status = 'succeeded'
			ON CONFLICT (run_id, idx) DO NOTHING`, to, from); err != nil {
			return fmt.Errorf("db: adopt items: %w", err)
		}
		var err error
		if items, err = listItems(ctx, tx, to); err != nil {
			return err
		}
		return appendJSONEvent(ctx, tx, to, "adopted", sqlcommon.AdoptedEvent{FromRunID: from, Items: len(items)}, now)
	})
	return items, err
}

// AddModelUsage adds u to the model usage of a run held by h (the same
// compare-and-set as SaveProgress). Errors: ErrNotFound, ErrConflict.
func (d *DB) AddModelUsage(ctx context.Context, runID string, h engine.Holder, u engine.ModelUsage, now int64) error {
	return d.writeTx(ctx, func(tx *txn) error {
		return sqlcommon.CAS(ctx, tx, runExistsSQL, runID, `UPDATE runs SET model_calls = model_calls + $1,
				prompt_tokens = prompt_tokens + $2, completion_tokens = completion_tokens + $3, updated_at = $4
			WHERE id = $5 AND status = 'running' AND owner_id = $6 AND attempt = $7 RETURNING id`,
			u.Calls, u.PromptTokens, u.CompletionTokens, now, runID, h.OwnerID, h.Attempt)
	})
}
