package postgres

import (
	"context"
	"database/sql"
	"fmt"

	"github.com/browsertask/browsertask/db/sqlcommon"
	"github.com/browsertask/browsertask/engine"
)

// defaultPurgeBatch is used when Purge gets batch <= 0 (at most 500
// rows per transaction, so the janitor never holds the write lock long).
const defaultPurgeBatch = 500

// purgeStep is one batched statement of Purge. Each statement touches at
// most $batch rows and is repeated, one transaction each, until it touches
// fewer. params names the values of $1, $2, … in order (purgeArgs).
type purgeStep struct {
	name   string
	sql    string
	params []string
}

// expiredRunsSQL selects terminal runs past their expiry ($1 = now); a
// non-terminal run is never purged, whatever its expires_at. With $2 true
// only runs that have their history row go: a run whose final write lands
// between ArchiveRuns and Purge (its expiry already passed, with a tiny
// runTtlMs) waits for the next round instead of going unrecorded.
const expiredRunsSQL = `SELECT id FROM runs WHERE status IN ` + sqlcommon.TerminalSQL + ` AND expires_at <= $1
	AND (NOT $2::boolean OR id IN (SELECT id FROM run_history))`

// purgeSteps run in order. Artifacts become tombstones before their chunks
// go, so a reader never sees a half-deleted artifact as live. A run's
// children go before the run itself; artifacts are not among them (they keep
// their own TTL).
func purgeSteps() []purgeStep {
	runs := []string{"now", "archived", "batch"}
	return []purgeStep{
		{"tombstone artifacts", `UPDATE artifacts SET tombstone = 1 WHERE id IN (
		SELECT id FROM artifacts WHERE tombstone = 0 AND expires_at <= $1 LIMIT $2)`, []string{"now", "batch"}},
		{"artifact chunks", `DELETE FROM artifact_chunks WHERE (artifact_id, seq) IN (
		SELECT c.artifact_id, c.seq FROM artifacts a JOIN artifact_chunks c ON c.artifact_id = a.id
		WHERE a.tombstone = 1 LIMIT $1)`, []string{"batch"}},
		{"old tombstones", `DELETE FROM artifacts WHERE id IN (
		SELECT id FROM artifacts WHERE tombstone = 1 AND expires_at < $1 LIMIT $2)`, []string{"tomb", "batch"}},
		{"run events", `DELETE FROM run_events WHERE (run_id, seq) IN (
		SELECT e.run_id, e.seq FROM run_events e WHERE e.run_id IN (` + expiredRunsSQL + `) LIMIT $3)`, runs},
		{"run items", `DELETE FROM run_items WHERE (run_id, idx) IN (
		SELECT i.run_id, i.idx FROM run_items i WHERE i.run_id IN (` + expiredRunsSQL + `) LIMIT $3)`, runs},
		{"idempotency keys", `DELETE FROM idempotency_keys WHERE (template_id, key) IN (
		SELECT k.template_id, k.key FROM idempotency_keys k WHERE k.run_id IN (` + expiredRunsSQL + `) LIMIT $3)`, runs},
		{"runs", `DELETE FROM runs WHERE id IN (` + expiredRunsSQL + ` LIMIT $3)`, runs},
		{"history", `DELETE FROM run_history WHERE id IN (
		SELECT id FROM run_history WHERE expires_at < $1 LIMIT $2)`, []string{"hist", "batch"}},
	}
}

// purgeArgs returns the values step.params names.
func purgeArgs(step purgeStep, values map[string]any) []any {
	args := make([]any, len(step.params))
	for i, name := range step.params {
		args[i] = values[name]
	}
	return args
}

// Purge removes expired data in transactions of at most p.Batch rows
// (p.Batch <= 0 means 500): artifacts past expires_at become tombstones
// (Expired = true) and lose their chunks; tombstones whose expires_at <
// p.TombstoneBefore are deleted; terminal runs with expires_at <= p.Now are
// deleted with their items, events and idempotency keys. It returns the
// number of rows deleted or turned into tombstones, and stops early (with
// ctx's error) when ctx ends.
func (d *DB) Purge(ctx context.Context, p engine.PurgeParams) (int, error) {
	now, tombstoneBefore, batch := p.Now, p.TombstoneBefore, p.Batch
	if batch <= 0 {
		batch = defaultPurgeBatch
	}
	values := map[string]any{"now": now, "tomb": tombstoneBefore, "batch": batch,
		"hist": p.HistoryBefore, "archived": p.ArchivedOnly}
	total := 0
	for _, step := range purgeSteps() {
		for {
			if err := ctx.Err(); err != nil {
				return total, err
			}
			var n int64
			err := d.write(ctx, func(tx *sql.Tx) error {
				res, err := tx.ExecContext(ctx, step.sql, purgeArgs(step, values)...)
				if err != nil {
					return err
				}
				n, err = res.RowsAffected()
				return err
			})
			if err != nil {
				return total, fmt.Errorf("db: purge %s: %w", step.name, err)
			}
			total += int(n)
			if n < int64(batch) {
				break
			}
		}
	}
	return total, nil
}

// Compact does nothing on PostgreSQL: autovacuum returns the space Purge
// frees, and VACUUM cannot run inside the store's transactions. It exists
// so the janitor drives both stores alike.
func (d *DB) Compact(ctx context.Context) error { return ctx.Err() }
