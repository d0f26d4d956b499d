package postgres

import (
	"context"

	"github.com/browsertask/browsertask/db/sqlcommon"
	"github.com/browsertask/browsertask/engine"
)

// defaultPurgeBatch is used when Purge gets batch <= 0 (at most 500
// rows per transaction, so the janitor never holds the write lock long).
const defaultPurgeBatch = 500

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
func purgeSteps() []sqlcommon.PurgeStep {
	runs := []string{"now", "archived", "batch"}
	return []sqlcommon.PurgeStep{
		{Name: "tombstone artifacts", SQL: `UPDATE artifacts SET tombstone = 1 WHERE id IN (
		SELECT id FROM artifacts WHERE tombstone = 0 AND expires_at <= $1 LIMIT $2)`, Params: []string{"now", "batch"}},
		{Name: "artifact chunks", SQL: `DELETE FROM artifact_chunks WHERE (artifact_id, seq) IN (
		SELECT c.artifact_id, c.seq FROM artifacts a JOIN artifact_chunks c ON c.artifact_id = a.id
		WHERE a.tombstone = 1 LIMIT $1)`, Params: []string{"batch"}},
		{Name: "old tombstones", SQL: `DELETE FROM artifacts WHERE id IN (
		SELECT id FROM artifacts WHERE tombstone = 1 AND expires_at < $1 LIMIT $2)`, Params: []string{"tomb", "batch"}},
		{Name: "run events", SQL: `DELETE FROM run_events WHERE (run_id, seq) IN (
		SELECT e.run_id, e.seq FROM run_events e WHERE e.run_id IN (` + expiredRunsSQL + `) LIMIT $3)`, Params: runs},
		{Name: "run items", SQL: `DELETE FROM run_items WHERE (run_id, idx) IN (
		SELECT i.run_id, i.idx FROM run_items i WHERE i.run_id IN (` + expiredRunsSQL + `) LIMIT $3)`, Params: runs},
		{Name: "idempotency keys", SQL: `DELETE FROM idempotency_keys WHERE (template_id, key) IN (
		SELECT k.template_id, k.key FROM idempotency_keys k WHERE k.run_id IN (` + expiredRunsSQL + `) LIMIT $3)`, Params: runs},
		{Name: "runs", SQL: `DELETE FROM runs WHERE id IN (` + expiredRunsSQL + ` LIMIT $3)`, Params: runs},
		{Name: "history", SQL: `DELETE FROM run_history WHERE id IN (
		SELECT id FROM run_history WHERE expires_at < $1 LIMIT $2)`, Params: []string{"hist", "batch"}},
	}
}

// Purge removes expired data in transactions of at most p.Batch rows
// (p.Batch <= 0 means 500): artifacts past expires_at become tombstones
// (Expired = true) and lose their chunks; tombstones whose expires_at <
// p.TombstoneBefore are deleted; terminal runs with expires_at <= p.Now are
// deleted with their items, events and idempotency keys. It returns the
// number of rows deleted or turned into tombstones, and stops early (with
// ctx's error) when ctx ends.
func (d *DB) Purge(ctx context.Context, p engine.PurgeParams) (int, error) {
	batch := p.Batch
	if batch <= 0 {
		batch = defaultPurgeBatch
	}
	return sqlcommon.Purge(ctx, d.writeAny, purgeSteps(), p, batch)
}

// writeAny is write for sqlcommon's helpers.
func (d *DB) writeAny(ctx context.Context, fn func(tx sqlcommon.Tx) error) error {
	return d.writeTx(ctx, func(tx *txn) error { return fn(tx) })
}

// Compact does nothing on PostgreSQL: autovacuum returns the space Purge
// frees, and VACUUM cannot run inside the store's transactions. It exists
// so the janitor drives both stores alike.
func (d *DB) Compact(ctx context.Context) error { return ctx.Err() }
