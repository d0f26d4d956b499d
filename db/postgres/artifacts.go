package postgres

import (
	"context"

	"github.com/browsertask/browsertask/db/sqlcommon"
	"github.com/browsertask/browsertask/engine"
)

// The artifact statements sqlcommon's helpers run on PostgreSQL.
const (
	getArtifactSQL = `SELECT ` + sqlcommon.ArtifactColumns + ` FROM artifacts WHERE id = $1`
	readChunksSQL  = `SELECT seq, data FROM artifact_chunks
		WHERE artifact_id = $1 AND seq BETWEEN $2 AND $3 ORDER BY seq`
	insertArtifactSQL = `INSERT INTO artifacts (id, run_id, name, mime_type, size,
		created_at, expires_at, tombstone) VALUES ($1, $2, $3, $4, $5, $6, $7, 0)`
	insertChunkSQL = `INSERT INTO artifact_chunks (artifact_id, seq, data) VALUES ($1, $2, $3)`
)

// artifactWrites is this store's part in storing an artifact.
var artifactWrites = sqlcommon.ArtifactWrites{
	Events:        eventSQL(),
	Insert:        insertArtifactSQL,
	InsertChunk:   insertChunkSQL,
	MapConstraint: mapConstraint,
}

// PutArtifact stores the artifact row and all its bytes, in chunk rows of at
// most 256 KiB, and appends an "artifact" event, all in one transaction: a
// failure leaves neither row nor chunks. a.Size is set to len(data).
// Errors: ErrNotFound (unknown run), ErrConflict (duplicate artifact id).
func (d *DB) PutArtifact(ctx context.Context, a engine.Artifact, data []byte) error {
	return d.writeTx(ctx, func(tx *txn) error { return sqlcommon.PutArtifact(ctx, tx, artifactWrites, a, data) })
}

// GetArtifact returns an artifact's metadata, tombstones included (Expired =
// true: the bytes are gone). Errors: ErrNotFound.
func (d *DB) GetArtifact(ctx context.Context, artifactID string) (*engine.Artifact, error) {
	return sqlcommon.GetArtifact(ctx, d.reader(), getArtifactSQL, artifactID)
}

// ReadArtifact returns up to p.Length bytes starting at p.Offset (fewer at
// the end; none when the offset == size or p.Length <= 0). Only the chunk
// rows the window touches are read, in one snapshot. Errors: ErrNotFound; an
// ARTIFACT_EXPIRED *engine.Error for a tombstone; an INVALID_PARAMETER
// *engine.Error for an offset outside [0, size].
func (d *DB) ReadArtifact(ctx context.Context, p engine.ReadArtifactParams) ([]byte, error) {
	var out []byte
	err := d.readTx(ctx, func(tx *txn) (err error) {
		out, err = sqlcommon.ReadArtifact(ctx, tx, getArtifactSQL, readChunksSQL, p)
		return err
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}
