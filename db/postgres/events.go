package postgres

import (
	"context"
	"encoding/json"

	"github.com/browsertask/browsertask/db/sqlcommon"
	"github.com/browsertask/browsertask/engine"
)

// eventSQL is the PostgreSQL text of the statements that append an event.
func eventSQL() sqlcommon.EventStatements {
	return sqlcommon.EventStatements{
		NextSeq: `UPDATE runs SET event_seq = event_seq + 1
		WHERE id = $1 AND (event_seq < $2 OR $3::boolean)
		RETURNING event_seq`,
		RunExists: runExistsSQL,
		Insert:    `INSERT INTO run_events (run_id, seq, at, type, data) VALUES ($1, $2, $3, $4, $5)`,
	}
}

// runExistsSQL counts the runs with an id.
const runExistsSQL = `SELECT COUNT(*) FROM runs WHERE id = $1`

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
	var limit any // NULL: no limit
	if p.Limit > 0 {
		limit = p.Limit
	}
	return sqlcommon.ListEvents(ctx, d.reader(), p.RunID, `SELECT `+sqlcommon.EventColumns+` FROM run_events
		WHERE run_id = $1 AND seq > $2 ORDER BY seq LIMIT $3::bigint`, p.RunID, p.AfterSeq, limit)
}
