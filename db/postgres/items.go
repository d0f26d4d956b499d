package postgres

import (
	"context"

	"github.com/browsertask/browsertask/db/sqlcommon"
	"github.com/browsertask/browsertask/engine"
)

// saveProgressSQL is the compare-and-set progress update.
const saveProgressSQL = `UPDATE runs SET progress_done = $1, progress_total = $2,
		progress_failed = $3, progress_message = $4, updated_at = GREATEST(updated_at, $5)
	WHERE id = $6 AND status = 'running' AND owner_id = $7 AND attempt = $8 RETURNING id`

// itemSQL is the PostgreSQL store's statements for progress, items and model
// usage.
var itemSQL = sqlcommon.ItemStatements{
	RunStatements: runSQL,
	Progress:      saveProgressSQL,
	Upsert: `INSERT INTO run_items (run_id, idx, key, status, output, error)
		VALUES ($1, $2, $3, $4, $5, $6)
		ON CONFLICT (run_id, idx) DO UPDATE SET key = excluded.key, status = excluded.status,
			output = excluded.output, error = excluded.error`,
	List: `SELECT ` + sqlcommon.ItemColumns + ` FROM run_items
		WHERE run_id = $1 ORDER BY idx`,
	Stopped: `SELECT ` + sqlcommon.StoppedRunColumns + `
		FROM runs r
		WHERE r.template_id = $1 AND r.template_version = $2 AND r.status IN ('failed', 'canceled')
			AND r.expires_at > $3 AND r.created_at < $4
		ORDER BY r.created_at DESC, r.id DESC LIMIT 20`,
	Held: `SELECT id FROM runs WHERE id = $1 AND status = 'running' AND owner_id = $2 AND attempt = $3`,
	Adopt: `INSERT INTO run_items (run_id, idx, key, status, output, error)
		SELECT $1, idx, key, status, output, error FROM run_items WHERE run_id = $2 AND status = 'succeeded'
		ON CONFLICT (run_id, idx) DO NOTHING`,
	Usage: `UPDATE runs SET model_calls = model_calls + $1,
			prompt_tokens = prompt_tokens + $2, completion_tokens = completion_tokens + $3, updated_at = GREATEST(updated_at, $4)
		WHERE id = $5 AND status = 'running' AND owner_id = $6 AND attempt = $7 RETURNING id`,
}

// SaveProgress updates the progress of a run held by h (compare-and-set on
// status running, owner and attempt) and its updated_at. It appends no event; the
// engine appends throttled "progress" events itself. Errors: ErrNotFound,
// ErrConflict.
func (d *DB) SaveProgress(ctx context.Context, runID string, h engine.Holder, p engine.Progress, now int64) error {
	return d.writeTx(ctx, func(tx *txn) error { return sqlcommon.SaveProgress(ctx, tx, itemSQL, runID, h, p, now) })
}

// SaveItem upserts an item checkpoint (by index) and the run's progress in
// one transaction, with the same compare-and-set as SaveProgress, and appends
// an "item" event: either the checkpoint and its progress are both stored or
// neither is. Errors: ErrNotFound, ErrConflict (the run is no longer ours).
func (d *DB) SaveItem(ctx context.Context, runID string, h engine.Holder, it engine.Item, p engine.Progress, now int64) error {
	return d.writeTx(ctx, func(tx *txn) error { return sqlcommon.SaveItem(ctx, tx, itemSQL, runID, h, it, p, now) })
}

// ListItems returns a run's item checkpoints ordered by index (empty for an
// unknown run).
func (d *DB) ListItems(ctx context.Context, runID string) ([]engine.Item, error) {
	return sqlcommon.RunItems(ctx, d.reader(), itemSQL, runID)
}

// StoppedRuns returns the newest (at most 20) unexpired runs of a template
// version that ended failed or canceled before q.Before, with the count of
// their succeeded items (the ones AdoptItems copies).
func (d *DB) StoppedRuns(ctx context.Context, q engine.StoppedRunsQuery) ([]engine.StoppedRun, error) {
	return sqlcommon.StoppedRuns(ctx, d.reader(), itemSQL, q)
}

// AdoptItems copies run from's succeeded items into run to, which must be
// running and held by h, appends an "adopted" event and returns to's
// items. Failed items stay behind, so the new run does them again: a
// resubmission is how a client retries. Errors: ErrNotFound, ErrConflict.
func (d *DB) AdoptItems(ctx context.Context, from, to string, h engine.Holder, now int64) (items []engine.Item, err error) {
	err = d.writeTx(ctx, func(tx *txn) error {
		items, err = sqlcommon.AdoptItems(ctx, tx, itemSQL, from, to, h, now)
		return err
	})
	return items, err
}

// AddModelUsage adds u to the model usage of a run held by h (the same
// compare-and-set as SaveProgress). Errors: ErrNotFound, ErrConflict.
func (d *DB) AddModelUsage(ctx context.Context, runID string, h engine.Holder, u engine.ModelUsage, now int64) error {
	return d.writeTx(ctx, func(tx *txn) error { return sqlcommon.AddModelUsage(ctx, tx, itemSQL, runID, h, u, now) })
}
