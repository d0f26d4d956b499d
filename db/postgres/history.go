package postgres

import (
	"context"
	"fmt"

	"github.com/browsertask/browsertask/db/sqlcommon"
	"github.com/browsertask/browsertask/engine"
)

// ArchiveRuns writes the history rows of the terminal runs that expired
// by p.Now and have none yet, at most p.Batch of them, in one transaction.
func (d *DB) ArchiveRuns(ctx context.Context, p engine.ArchiveParams) (int, error) {
	batch := p.Batch
	if batch <= 0 {
		batch = defaultPurgeBatch
	}
	n := 0
	err := d.writeTx(ctx, func(tx *txn) error {
		n = 0
		runs, err := queryRuns(ctx, tx, `SELECT `+sqlcommon.RunColumns+` FROM runs
			WHERE status IN `+sqlcommon.TerminalSQL+` AND expires_at <= $1
				AND id NOT IN (SELECT id FROM run_history)
			ORDER BY expires_at LIMIT $2`, p.Now, batch)
		if err != nil {
			return err
		}
		for _, r := range runs {
			summary := ""
			if p.Summarize != nil {
				summary = p.Summarize(r.TemplateID, r.Inputs)
			}
			args, err := sqlcommon.HistoryArgs(r, p.Now, p.Now+p.HistoryTTLMs, summary)
			if err != nil {
				return err
			}
			_, err = tx.ExecContext(ctx, `INSERT INTO run_history (`+sqlcommon.HistoryColumns+`)
				VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17)`, args...)
			if err != nil {
				return fmt.Errorf("db: archive run %s: %w", r.RunID, err)
			}
			n++
		}
		return nil
	})
	return n, err
}

// ListHistory returns unexpired history rows newest first and their count.
func (d *DB) ListHistory(ctx context.Context, q engine.HistoryQuery) ([]engine.HistoryRun, int, error) {
	var total int
	if err := d.reader().QueryRowContext(ctx, `SELECT COUNT(*) FROM run_history WHERE expires_at > $1`, q.Now).Scan(&total); err != nil {
		return nil, 0, fmt.Errorf("db: count history: %w", err)
	}
	limit := q.Limit
	if limit <= 0 {
		limit = 50
	}
	rows, err := d.reader().QueryContext(ctx, `SELECT `+sqlcommon.HistoryColumns+`
		FROM run_history WHERE expires_at > $1 ORDER BY created_at DESC, id DESC LIMIT $2 OFFSET $3`, q.Now, limit, max(q.Offset, 0))
	if err != nil {
		return nil, 0, fmt.Errorf("db: list history: %w", err)
	}
	out, err := sqlcommon.Collect(rows, "list history", sqlcommon.ScanHistory)
	if err != nil {
		return nil, 0, err
	}
	return out, total, nil
}
