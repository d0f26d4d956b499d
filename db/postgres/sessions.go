package postgres

import (
	"context"
	"database/sql"

	"github.com/browsertask/browsertask/db/sqlcommon"
	"github.com/browsertask/browsertask/engine"
)

// sessionSQL is the PostgreSQL store's statements for the sessions table.
var sessionSQL = sqlcommon.SessionStatements{
	Get: `SELECT ` + sqlcommon.SessionColumns + `
		FROM sessions WHERE id = $1 AND closed_at IS NULL`,
	Put: `INSERT INTO sessions (` + sqlcommon.SessionColumns + `)
		VALUES ($1, $2, $3, $4, $5, $6) ` + sqlcommon.SessionUpsert,
	Close: `UPDATE sessions SET closed_at = COALESCE(closed_at, $1)
		WHERE id = $2 RETURNING ` + sqlcommon.SessionColumns,
	List: `SELECT ` + sqlcommon.SessionColumns + `
		FROM sessions WHERE closed_at IS NULL AND ($1 = '' OR owner_id = $2)
		ORDER BY created_at DESC, id DESC`,
	Touch: `UPDATE sessions SET last_used_at = $1, expires_at = $2
		WHERE id = $3 AND closed_at IS NULL`,
}

// GetSession returns a live (not closed) browser session row; the caller
// checks expires_at against its clock. Errors: ErrNotFound for an unknown or
// closed session.
func (d *DB) GetSession(ctx context.Context, sessionID string) (*engine.Session, error) {
	return sqlcommon.GetOpenSession(ctx, d.reader(), sessionSQL, sessionID)
}

// PutSession inserts or replaces a session row, so other processes can see
// the session and route session-bound runs to its owner.
func (d *DB) PutSession(ctx context.Context, s engine.Session) error {
	return d.write(ctx, func(tx *sql.Tx) error { return sqlcommon.PutSession(ctx, tx, sessionSQL, s) })
}

// CloseSession marks a session closed at now (idempotent for a closed one:
// its first closed_at stays) and returns the row as stored after the write.
// Errors: ErrNotFound.
func (d *DB) CloseSession(ctx context.Context, sessionID string, now int64) (s *engine.Session, err error) {
	err = d.write(ctx, func(tx *sql.Tx) error {
		s, err = sqlcommon.CloseSession(ctx, tx, sessionSQL, sessionID, now)
		return err
	})
	if err != nil {
		return nil, err
	}
	return s, nil
}

// ListSessions returns the open sessions, newest first; ownerID "" lists
// every owner's.
func (d *DB) ListSessions(ctx context.Context, ownerID string) ([]*engine.Session, error) {
	return sqlcommon.OpenSessions(ctx, d.reader(), sessionSQL, ownerID)
}

// TouchSession records a use of an open session and moves its expiry.
// Errors: ErrNotFound for an unknown or closed session.
func (d *DB) TouchSession(ctx context.Context, p engine.TouchSessionParams) error {
	return d.write(ctx, func(tx *sql.Tx) error { return sqlcommon.TouchSession(ctx, tx, sessionSQL, p) })
}

// PutLooseArtifact stores an artifact that belongs to no run (a session
// export), with its bytes in chunk rows, in one transaction and without a
// run event. Errors: ErrConflict (duplicate artifact id).
func (d *DB) PutLooseArtifact(ctx context.Context, a engine.Artifact, data []byte) error {
	return d.writeTx(ctx, func(tx *txn) error { return sqlcommon.PutLooseArtifact(ctx, tx, artifactWrites, a, data) })
}
