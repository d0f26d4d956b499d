package db

import (
	"context"
	"database/sql"

	"github.com/browsertask/browsertask/db/sqlcommon"
	"github.com/browsertask/browsertask/engine"
)

// sessionEventSQL is the SQLite store's session event statements (one
// writer at a time: the session's row needs no lock).
var sessionEventSQL = sqlcommon.SessionEventStatements{
	Lock:    `SELECT id FROM sessions WHERE id = ?`,
	NextSeq: `SELECT COALESCE(MAX(seq), 0) + 1 FROM session_events WHERE session_id = ?`,
	Insert:  `INSERT INTO session_events (session_id, seq, at, data) VALUES (?, ?, ?, ?)`,
	Trim:    `DELETE FROM session_events WHERE session_id = ? AND seq <= ?`,
	List: `SELECT seq, at, data FROM session_events
		WHERE session_id = ? AND seq > ? ORDER BY seq LIMIT ?`,
}

// AppendSessionEvent stores ev under the session's next seq, dropping the
// session's events older than its latest engine.MaxSessionEvents in the
// same transaction. Errors: ErrNotFound for an unknown session.
func (d *DB) AppendSessionEvent(ctx context.Context, ev engine.SessionEvent) (int64, error) {
	var seq int64
	err := d.write(ctx, func(tx *sql.Tx) error {
		var err error
		seq, err = sqlcommon.AppendSessionEvent(ctx, tx, sessionEventSQL, ev)
		return err
	})
	if err != nil {
		return 0, err
	}
	return seq, nil
}

// ListSessionEvents returns a session's events after p.AfterSeq in seq
// order, at most p.Limit (all when <= 0).
func (d *DB) ListSessionEvents(ctx context.Context, p engine.ListSessionEventsParams) ([]engine.SessionEvent, error) {
	lim := int64(-1) // SQLite: no limit
	if p.Limit > 0 {
		lim = int64(p.Limit)
	}
	return sqlcommon.ListSessionEvents(ctx, d.reader(), sessionEventSQL, p, lim)
}
