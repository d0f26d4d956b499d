package db

import (
	"context"

	"github.com/browsertask/browsertask/db/sqlcommon"
	"github.com/browsertask/browsertask/engine"
)

// historySQL is the SQLite store's statements for run_history.
var historySQL = sqlcommon.HistoryStatements{
	ArtifactIDs: artifactIDs,
	Due: `SELECT ` + sqlcommon.RunColumns + ` FROM runs
		WHERE status IN ` + sqlcommon.TerminalSQL + ` AND expires_at <= ?
			AND id NOT IN (SELECT id FROM run_history)
		ORDER BY expires_at LIMIT ?`,
	Insert: `INSERT INTO run_history (` + sqlcommon.HistoryColumns + `)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
	Count: `SELECT COUNT(*) FROM run_history WHERE expires_at > ?`,
	Page: `SELECT ` + sqlcommon.HistoryColumns + `
		FROM run_history WHERE expires_at > ? ORDER BY created_at DESC, id DESC LIMIT ? OFFSET ?`,
}

// ArchiveRuns writes the history rows of the terminal runs that expired
// by p.Now and have none yet, at most p.Batch of them, in one transaction.
func (d *DB) ArchiveRuns(ctx context.Context, p engine.ArchiveParams) (n int, err error) {
	batch := p.Batch
	if batch <= 0 {
		batch = defaultPurgeBatch
	}
	err = d.writeTx(ctx, func(tx *txn) error {
		n, err = sqlcommon.ArchiveRuns(ctx, tx, historySQL, p, batch)
		return err
	})
	return n, err
}

// ListHistory returns unexpired history rows newest first and their count.
func (d *DB) ListHistory(ctx context.Context, q engine.HistoryQuery) ([]engine.HistoryRun, int, error) {
	return sqlcommon.ListHistory(ctx, d.reader(), historySQL, q)
}
