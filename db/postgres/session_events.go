package postgres

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
		// The session's row lock orders two processes appending to one
		// session, so both do not take the same seq.
		var id string
		err := tx.QueryRowContext(ctx, `SELECT id FROM sessions WHERE id = $1 FOR UPDATE`, ev.SessionID).Scan(&id)
		if errors.Is(err, sql.ErrNoRows) {
			return engine.ErrNotFound
		}
		if err != nil {
			return fmt.Errorf("db: append session event: %w", err)
		}
		if err := tx.QueryRowContext(ctx, `SELECT COALESCE(MAX(seq), 0) + 1 FROM session_events WHERE session_id = $1`, ev.SessionID).Scan(&seq); err != nil {
			return fmt.Errorf("db: append session event: %w", err)
		}
		ev.Seq = seq
		data, err := json.Marshal(ev)
		if err != nil {
			return fmt.Errorf("db: append session event: %w", err)
		}
		if _, err := tx.ExecContext(ctx, `INSERT INTO session_events (session_id, seq, at, data) VALUES ($1, $2, $3, $4)`,
			ev.SessionID, seq, ev.At, string(data)); err != nil {
			return fmt.Errorf("db: append session event: %w", err)
		}
		if _, err := tx.ExecContext(ctx, `DELETE FROM session_events WHERE session_id = $1 AND seq <= $2`,
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
	var lim any // NULL: no limit
	if p.Limit > 0 {
		lim = p.Limit
	}
	rows, err := d.reader().QueryContext(ctx, `SELECT seq, at, data FROM session_events
		WHERE session_id = $1 AND seq > $2 ORDER BY seq LIMIT $3::bigint`, p.SessionID, p.AfterSeq, lim)
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
