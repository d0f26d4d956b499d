package postgres

import (
	"context"
	"database/sql"

	"github.com/browsertask/browsertask/db/sqlcommon"
	"github.com/browsertask/browsertask/engine"
)

// sessionEventSQL is the PostgreSQL store's session event statements: the
// session's row lock orders two processes appending to one session, so
// both do not take the same seq.
var sessionEventSQL = sqlcommon.SessionEventStatements{
	Lock:    `SELECT id FROM sessions WHERE id = $1 FOR UPDATE`,
	NextSeq: `SELECT COALESCE(MAX(seq), 0) + 1 FROM session_events WHERE session_id = $1`,
	Insert:  `INSERT INTO session_events (session_id, seq, at, data) VALUES ($1, $2, $3, $4)`,
	Trim:    `DELETE FROM session_events WHERE session_id = $1 AND seq <= $2`,
	List: `SELECT seq, at, data FROM session_events
		WHERE session_id = $1 AND seq > $2 ORDER BY seq LIMIT $3::bigint`,
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
	var lim any // NULL: no limit
	if p.Limit > 0 {
		lim = p.Limit
	}
	return sqlcommon.ListSessionEvents(ctx, d.reader(), sessionEventSQL, p, lim)
}
