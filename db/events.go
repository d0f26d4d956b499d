package db

import (
	"context"
	"encoding/json"

	"github.com/browsertask/browsertask/db/sqlcommon"
	"github.com/browsertask/browsertask/engine"
)

// eventSQL is the SQLite text of the statements that append an event.
func eventSQL() sqlcommon.EventStatements {
	return sqlcommon.EventStatements{
		NextSeq: `UPDATE runs SET event_seq = event_seq + 1
		WHERE id = ? AND (event_seq < ? OR ?)
		RETURNING event_seq`,
		RunExists: runExistsSQL,
		Insert:    `INSERT INTO run_events (run_id, seq, at, type, data) VALUES (?, ?, ?, ?, ?)`,
	}
}

// runExistsSQL counts the runs with an id.
const runExistsSQL = `SELECT COUNT(*) FROM runs WHERE id = ?`

// AppendEvent appends an event with the next seq of the run. Past the
// per-run cap, events other than status/artifact ones are silently dropped.
// Errors: ErrNotFound when the run does not exist.
func (d *DB) AppendEvent(ctx context.Context, runID, typ string, data json.RawMessage, now int64) error {
	return d.writeTx(ctx, func(tx *txn) error {
		return sqlcommon.AppendEvent(ctx, tx, eventSQL(), runID, typ, data, now)
	})
}

// ListEvents returns the run's events with seq > p.AfterSeq in seq order, at
// most p.Limit (p.Limit <= 0 means all). An unknown run yields an empty list; the
// engine checks the run first.
func (d *DB) ListEvents(ctx context.Context, p engine.ListEventsParams) ([]engine.Event, error) {
	limit := p.Limit
	if limit <= 0 {
		limit = -1
	}
	return sqlcommon.ListEvents(ctx, d.reader(), p.RunID, `SELECT `+sqlcommon.EventColumns+` FROM run_events
		WHERE run_id = ? AND seq > ? ORDER BY seq LIMIT ?`, p.RunID, p.AfterSeq, limit)
}
