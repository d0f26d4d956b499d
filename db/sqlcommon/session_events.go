package sqlcommon

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/browsertask/browsertask/engine"
)

// SessionEventStatements is a store's SQL for a session's event log.
type SessionEventStatements struct {
	// Lock selects the session's id (argument: session id) and, where the
	// store needs it, locks the row so two processes appending to one
	// session do not take the same seq; no row for an unknown session.
	Lock string
	// NextSeq is the session's next seq (argument: session id).
	NextSeq string
	// Insert inserts a session_events row (session id, seq, at, data).
	Insert string
	// Trim deletes the session's events at or below a seq (session id,
	// seq).
	Trim string
	// List selects seq, at, data of a session's events after a seq in seq
	// order, at most a limit (session id, after seq, limit).
	List string
}

// AppendSessionEvent stores ev under the session's next seq in the
// caller's transaction and drops the session's events older than its
// latest engine.MaxSessionEvents. Errors: engine.ErrNotFound for an
// unknown session.
func AppendSessionEvent(ctx context.Context, tx Tx, st SessionEventStatements, ev engine.SessionEvent) (int64, error) {
	var id string
	err := tx.QueryRowContext(ctx, st.Lock, ev.SessionID).Scan(&id)
	if errors.Is(err, sql.ErrNoRows) {
		return 0, engine.ErrNotFound
	}
	if err != nil {
		return 0, fmt.Errorf("db: append session event: %w", err)
	}
	var seq int64
	if err := tx.QueryRowContext(ctx, st.NextSeq, ev.SessionID).Scan(&seq); err != nil {
		return 0, fmt.Errorf("db: append session event: %w", err)
	}
	ev.Seq = seq
	data, err := json.Marshal(ev)
	if err != nil {
		return 0, fmt.Errorf("db: append session event: %w", err)
	}
	if _, err := tx.ExecContext(ctx, st.Insert, ev.SessionID, seq, ev.At, string(data)); err != nil {
		return 0, fmt.Errorf("db: append session event: %w", err)
	}
	if _, err := tx.ExecContext(ctx, st.Trim, ev.SessionID, seq-engine.MaxSessionEvents); err != nil {
		return 0, fmt.Errorf("db: append session event: %w", err)
	}
	return seq, nil
}

// ListSessionEvents returns a session's events after p.AfterSeq in seq
// order; limit is the store's value for p.Limit (its own "no limit" when
// p.Limit <= 0).
func ListSessionEvents(ctx context.Context, q Querier, st SessionEventStatements, p engine.ListSessionEventsParams, limit any) ([]engine.SessionEvent, error) {
	rows, err := q.QueryContext(ctx, st.List, p.SessionID, p.AfterSeq, limit)
	if err != nil {
		return nil, fmt.Errorf("db: list session events: %w", err)
	}
	return Collect(rows, "list session events", func(s Scanner) (engine.SessionEvent, error) {
		var (
			ev      engine.SessionEvent
			data    string
			seq, at int64
		)
		if err := s.Scan(&seq, &at, &data); err != nil {
			return ev, err
		}
		if err := json.Unmarshal([]byte(data), &ev); err != nil {
			return ev, errors.Join(fmt.Errorf("session event %s/%d is not JSON", p.SessionID, seq), err)
		}
		ev.SessionID, ev.Seq, ev.At = p.SessionID, seq, at
		return ev, nil
	})
}
