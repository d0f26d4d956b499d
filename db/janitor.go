package db

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

// purgeStep is one batched statement of Purge. Each SQL statement touches at
// most :batch rows and is repeated, one transaction each, until it touches
// fewer.
type purgeStep struct {
	name string
	sql  string
}

// expiredRunsSQL selects terminal runs past their expiry; a non-terminal run
// is never purged, whatever its expires_at.
// With :archived = 1 only runs that have their history row go: a run whose
// final write lands between ArchiveRuns and Purge (its expiry already
// passed, with a tiny runTtlMs) waits for the next round instead of going
// unrecorded.
const expiredRunsSQL = `SELECT id FROM runs WHERE status IN ` + sqlcommon.TerminalSQL + ` AND expires_at <= :now
	AND (:archived = 0 OR id IN (SELECT id FROM run_history))`

// purgeSteps run in order. Artifacts become tombstones before their chunks
// go, so a reader never sees a half-deleted artifact as live. A run's
// children go before the run itself; artifacts are not among them (they keep
// their own TTL).
func purgeSteps() []purgeStep {
	return []purgeStep{
		{"tombstone artifacts", `UPDATE artifacts SET tombstone = 1 WHERE id IN (
		SELECT id FROM artifacts WHERE tombstone = 0 AND expires_at <= :now LIMIT :batch)`},
		{"artifact chunks", `DELETE FROM artifact_chunks WHERE rowid IN (
		SELECT c.rowid FROM artifacts a JOIN artifact_chunks c ON c.artifact_id = a.id
		WHERE a.tombstone = 1 LIMIT :batch)`},
		{"old tombstones", `DELETE FROM artifacts WHERE id IN (
		SELECT id FROM artifacts WHERE tombstone = 1 AND expires_at < :tomb LIMIT :batch)`},
		{"run events", `DELETE FROM run_events WHERE rowid IN (
		SELECT e.rowid FROM run_events e WHERE e.run_id IN (` + expiredRunsSQL + `) LIMIT :batch)`},
		{"run items", `DELETE FROM run_items WHERE rowid IN (
		SELECT i.rowid FROM run_items i WHERE i.run_id IN (` + expiredRunsSQL + `) LIMIT :batch)`},
		{"idempotency keys", `DELETE FROM idempotency_keys WHERE rowid IN (
		SELECT k.rowid FROM idempotency_keys k WHERE k.run_id IN (` + expiredRunsSQL + `) LIMIT :batch)`},
		{"runs", `DELETE FROM runs WHERE id IN (` + expiredRunsSQL + ` LIMIT :batch)`},
		{"history", `DELETE FROM run_history WHERE id IN (
		SELECT id FROM run_history WHERE expires_at < :hist LIMIT :batch)`},
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
	now, tombstoneBefore, batch := p.Now, p.TombstoneBefore, p.Batch
	if batch <= 0 {
		batch = defaultPurgeBatch
	}
	total := 0
	for _, step := range purgeSteps() {
		for {
			if err := ctx.Err(); err != nil {
				return total, err
			}
			var n int64
			err := d.write(ctx, func(tx *sql.Tx) error {
				res, err := tx.ExecContext(ctx, step.sql, sql.Named("now", now),
					sql.Named("tomb", tombstoneBefore), sql.Named("batch", batch), sql.Named("hist", p.HistoryBefore),
					sql.Named("archived", sqlcommon.BoolInt(p.ArchivedOnly)))
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

// Compact returns the pages freed by Purge to the file system
// (incremental_vacuum; the file was created with auto_vacuum=INCREMENTAL) and
// truncates the WAL. It runs on the writer connection, between write
// transactions.
func (d *DB) Compact(ctx context.Context) error {
	// In a write transaction, so it takes the write lock like every other
	// write instead of upgrading a read snapshot.
	err := d.write(ctx, func(tx *sql.Tx) error {
		rows, err := tx.QueryContext(ctx, `PRAGMA incremental_vacuum`)
		if err != nil {
			return err
		}
		for rows.Next() {
		}
		rows.Close()
		return rows.Err()
	})
	if err != nil {
		return fmt.Errorf("db: incremental_vacuum: %w", err)
	}
	var busy, logPages, checkpointed int
	if err := d.w.QueryRowContext(ctx, `PRAGMA wal_checkpoint(TRUNCATE)`).Scan(&busy, &logPages, &checkpointed); err != nil {
		return fmt.Errorf("db: wal_checkpoint: %w", err)
	}
	return nil
}
