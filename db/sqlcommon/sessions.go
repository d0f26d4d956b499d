package sqlcommon

import (
	"context"
	"database/sql"
	"errors"
	"fmt"

	"github.com/browsertask/browsertask/engine"
)

// SessionColumns is the SELECT (or RETURNING) list ScanSession reads, in
// order.
const SessionColumns = `id, owner_id, created_at, last_used_at, expires_at, closed_at`

// ScanSession reads one row of SessionColumns.
func ScanSession(s Scanner) (*engine.Session, error) {
	var (
		out    engine.Session
		closed sql.NullInt64
	)
	if err := s.Scan(&out.ID, &out.OwnerID, &out.CreatedAt, &out.LastUsedAt, &out.ExpiresAt, &closed); err != nil {
		return nil, err
	}
	out.ClosedAt = nullInt64Ptr(closed)
	return &out, nil
}

// GetSession reads one session row with query (selecting SessionColumns);
// what names the operation in errors. Errors: engine.ErrNotFound when
// query finds no row.
func GetSession(ctx context.Context, q Querier, what, query string, args ...any) (*engine.Session, error) {
	s, err := ScanSession(q.QueryRowContext(ctx, query, args...))
	if errors.Is(err, sql.ErrNoRows) {
		return nil, engine.ErrNotFound
	}
	if err != nil {
		return nil, fmt.Errorf("db: %s: %w", what, err)
	}
	return s, nil
}

// ListSessions returns the sessions query selects (SessionColumns), never
// nil.
func ListSessions(ctx context.Context, q Querier, query string, args ...any) ([]*engine.Session, error) {
	rows, err := q.QueryContext(ctx, query, args...)
	if err != nil {
		return nil, fmt.Errorf("db: list sessions: %w", err)
	}
	return Collect(rows, "list sessions", ScanSession)
}

// TouchedOne turns the result of an UPDATE of one row into
// engine.ErrNotFound when it changed none.
func TouchedOne(res sql.Result, what string) error {
	n, err := res.RowsAffected()
	if err != nil {
		return fmt.Errorf("db: %s: %w", what, err)
	}
	if n == 0 {
		return engine.ErrNotFound
	}
	return nil
}

// SessionUpsert is the tail of a session INSERT (after its VALUES) that
// replaces every column of an existing row with the new one's.
const SessionUpsert = `ON CONFLICT (id) DO UPDATE SET owner_id = excluded.owner_id, created_at = excluded.created_at,
				last_used_at = excluded.last_used_at, expires_at = excluded.expires_at,
				closed_at = excluded.closed_at`

// SessionArgs is s's values in SessionColumns order (closed_at NULL while
// the session is open).
func SessionArgs(s engine.Session) []any {
	var closed any
	if s.ClosedAt != nil {
		closed = *s.ClosedAt
	}
	return []any{s.ID, s.OwnerID, s.CreatedAt, s.LastUsedAt, s.ExpiresAt, closed}
}
