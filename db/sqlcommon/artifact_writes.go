package sqlcommon

import (
	"context"
	"fmt"
	"io"

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

// PutArtifactFrom is engine.Store.PutArtifactFrom in the caller's
// transaction: the row, a.Size bytes copied from r a chunk at a time, and
// an "artifact" event.
func PutArtifactFrom(ctx context.Context, tx Tx, st ArtifactWrites, a engine.Artifact, r io.Reader) error {
	if err := InsertArtifact(ctx, tx, st, a, nil); err != nil {
		return err
	}
	if err := CopyChunks(ctx, tx, st.InsertChunk, a.ID, r, a.Size); err != nil {
		return err
	}
	return AppendJSONEvent(ctx, tx, st.Events, a.RunID, EventArtifact, EventOf(a), a.CreatedAt)
}

// ItemReads is a store's SQL for reading a run's checkpoints one row at a
// time; each takes the column list (ItemColumnsFor) it selects.
type ItemReads struct {
	// At selects one checkpoint: run id, index.
	At func(cols string) string
	// After selects the checkpoints after an index in index order, at
	// most a limit: run id, after, limit (NoLimit for all).
	After func(cols string) string
	// NoLimit is the store's limit value that selects every row.
	NoLimit any
}

// EachItemOf is engine.Store.EachItem on q (one read snapshot).
func EachItemOf(ctx context.Context, q Querier, st ItemReads, iq engine.ItemsQuery, fn func(engine.Item) error) error {
	cols := ItemColumnsFor(iq.NoOutput)
	if iq.Indexes != nil {
		return EachItemAt(ctx, q, st.At(cols), iq.RunID, iq.Indexes, fn)
	}
	limit := st.NoLimit
	if iq.Limit > 0 {
		limit = int64(iq.Limit)
	}
	return EachItem(ctx, q, iq.RunID, fn, st.After(cols), iq.RunID, iq.After, limit)
}
