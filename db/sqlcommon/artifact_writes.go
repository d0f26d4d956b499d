package sqlcommon

import (
	"context"
	"fmt"

	"github.com/browsertask/browsertask/engine"
)

// ArtifactWrites is a store's part in storing an artifact.
type ArtifactWrites struct {
	// Events appends the "artifact" event.
	Events EventStatements
	// Insert inserts an artifact row: id, run id, name, mime type, size,
	// created_at, expires_at.
	Insert string
	// InsertChunk inserts a chunk row (as InsertChunks takes it).
	InsertChunk string
	// MapConstraint turns the store's unique violation into
	// engine.ErrConflict and leaves other errors as they are.
	MapConstraint func(error) error
}

// InsertArtifact inserts the artifact row and its chunk rows (at most
// ChunkSize bytes each) in the caller's transaction. Errors: ErrConflict
// (duplicate artifact id) and what the inserts return.
func InsertArtifact(ctx context.Context, tx Tx, st ArtifactWrites, a engine.Artifact, data []byte) error {
	_, err := tx.ExecContext(ctx, st.Insert, a.ID, a.RunID, a.Name, a.MimeType, a.Size, a.CreatedAt, a.ExpiresAt)
	if err != nil {
		return st.MapConstraint(fmt.Errorf("db: put artifact: %w", err))
	}
	return InsertChunks(ctx, tx, st.InsertChunk, a.ID, data)
}

// PutArtifact is engine.Store.PutArtifact in the caller's transaction:
// the row, its bytes (a.Size becomes len(data)) and an "artifact" event.
func PutArtifact(ctx context.Context, tx Tx, st ArtifactWrites, a engine.Artifact, data []byte) error {
	a.Size = int64(len(data))
	if err := InsertArtifact(ctx, tx, st, a, data); err != nil {
		return err
	}
	return AppendJSONEvent(ctx, tx, st.Events, a.RunID, EventArtifact, EventOf(a), a.CreatedAt)
}
