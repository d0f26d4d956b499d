package db

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/browsertask/browsertask/engine"
)

// AppendSessionEvent stores ev under the session's next seq, dropping the
// session's events older than its latest engine.MaxSessionEvents in the
// same transaction. Errors: ErrNotFound for an unknown session.
func (d *DB) AppendSessionEvent(ctx context.Context, ev engine.SessionEvent) (int64, error) {
	var seq int64
	err := d.write(ctx, func(tx *sql.Tx) error {
		var n int
		if err := tx.QueryRowContext(ctx, `SELECT COUNT(*) FROM sessions WHERE id = ?`, ev.SessionID).Scan(&n); err != nil {
			return fmt.Errorf("db: append session event: %w", err)
		}
		if n == 0 {
			return engine.ErrNotFound
		}
		if err := tx.QueryRowContext(ctx, `SELECT COALESCE(MAX(seq), 0) + 1 FROM session_events WHERE session_id = ?`, ev.SessionID).Scan(&seq); err != nil {
			return fmt.Errorf("db: append session event: %w", err)
		}
		ev.Seq = seq
		data, err := json.Marshal(ev)
		if err != nil {
			return fmt.Errorf("db: append session event: %w", err)
		}
		if _, err := tx.ExecContext(ctx, `INSERT INTO session_events (session_id, seq, at, data) VALUES (?, ?, ?, ?)`,
			ev.SessionID, seq, ev.At, string(data)); err != nil {
			return fmt.Errorf("db: append session event: %w", err)
		}
		if _, err := tx.ExecContext(ctx, `DELETE FROM session_events WHERE session_id = ? AND seq <= ?`,
			ev.SessionID, seq-engine.MaxSessionEvents); err != nil {
			return fmt.Errorf("db: append session event: %w", err)
		}
		return nil
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
	rows, err := d.r.QueryContext(ctx, `SELECT seq, at, data FROM session_events
		WHERE session_id = ? AND seq > ? ORDER BY seq LIMIT ?`, p.SessionID, p.AfterSeq, lim)
	if err != nil {
		return nil, fmt.Errorf("db: list session events: %w", err)
	}
	defer rows.Close()
	out := []engine.SessionEvent{}
	for rows.Next() {
		var (
			ev   engine.SessionEvent
			data string
		)
		var seq, at int64
		if err := rows.Scan(&seq, &at, &data); err != nil {
			return nil, fmt.Errorf("db: list session events: %w", err)
		}
		if err := json.Unmarshal([]byte(data), &ev); err != nil {
			return nil, errors.Join(fmt.Errorf("db: session event %s/%d is not JSON", p.SessionID, seq), err)
		}
		ev.SessionID, ev.Seq, ev.At = p.SessionID, seq, at
		out = append(out, ev)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("db: list session events: %w", err)
	}
	return out, nil
}
