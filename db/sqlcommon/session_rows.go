package sqlcommon

import (
	"context"
	"fmt"

	"github.com/browsertask/browsertask/engine"
)

// SessionStatements is a store's SQL for the sessions table; arguments in
// the order each field names.
type SessionStatements struct {
	// Get selects SessionColumns of an open session: id.
	Get string
	// Put inserts or replaces a session row: SessionArgs.
	Put string
	// Close closes a session (its first closed_at stays), returning
	// SessionColumns: now, id.
	Close string
	// List selects SessionColumns of the open sessions newest first, of
	// one owner or of all when it is "": owner id, owner id.
	List string
	// Touch records a use of an open session: now, expires_at, id.
	Touch string
}

// GetOpenSession is engine.Store.GetSession on q.
func GetOpenSession(ctx context.Context, q Querier, st SessionStatements, sessionID string) (*engine.Session, error) {
	return GetSession(ctx, q, "get session", st.Get, sessionID)
}

// PutSession is engine.Store.PutSession in the caller's transaction.
func PutSession(ctx context.Context, tx Execer, st SessionStatements, s engine.Session) error {
	if _, err := tx.ExecContext(ctx, st.Put, SessionArgs(s)...); err != nil {
		return fmt.Errorf("db: put session: %w", err)
	}
	return nil
}

// CloseSession is engine.Store.CloseSession in the caller's transaction.
func CloseSession(ctx context.Context, tx Querier, st SessionStatements, sessionID string, now int64) (*engine.Session, error) {
	return GetSession(ctx, tx, "close session", st.Close, now, sessionID)
}

// OpenSessions is engine.Store.ListSessions on q.
func OpenSessions(ctx context.Context, q Querier, st SessionStatements, ownerID string) ([]*engine.Session, error) {
	return ListSessions(ctx, q, st.List, ownerID, ownerID)
}

// TouchSession is engine.Store.TouchSession in the caller's transaction.
// Errors: ErrNotFound for an unknown or closed session.
func TouchSession(ctx context.Context, tx Execer, st SessionStatements, p engine.TouchSessionParams) error {
	res, err := tx.ExecContext(ctx, st.Touch, p.Now, p.ExpiresAt, p.SessionID)
	if err != nil {
		return fmt.Errorf("db: touch session: %w", err)
	}
	return TouchedOne(res, "touch session")
}

// PutLooseArtifact is engine.Store.PutLooseArtifact in the caller's
// transaction: the row and its bytes, no event (a.Size becomes
// len(data)).
func PutLooseArtifact(ctx context.Context, tx Tx, st ArtifactWrites, a engine.Artifact, data []byte) error {
	a.Size = int64(len(data))
	return InsertArtifact(ctx, tx, st, a, data)
}
