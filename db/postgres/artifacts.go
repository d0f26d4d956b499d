package postgres

import (
	"context"
	"database/sql"
	"errors"
	"fmt"

	"github.com/browsertask/browsertask/engine"
)

// chunkSize is the size of an artifact_chunks row: reads fetch only the
// chunks a window touches, and no single row grows large.
const chunkSize = 256 << 10

// artifactEvent is the data of an "artifact" event.
type artifactEvent struct {
	ArtifactID string `json:"artifactId"`
	Name       string `json:"name"`
	MimeType   string `json:"mimeType"`
	Size       int64  `json:"size"`
}

// PutArtifact stores the artifact row and all its bytes, in chunk rows of at
// most 256 KiB, and appends an "artifact" event, all in one transaction: a
// failure leaves neither row nor chunks. a.Size is set to len(data).
// Errors: ErrNotFound (unknown run), ErrConflict (duplicate artifact id).
func (d *DB) PutArtifact(ctx context.Context, a engine.Artifact, data []byte) error {
	a.Size = int64(len(data))
	return d.writeTx(ctx, func(tx *txn) error {
		if err := insertArtifact(ctx, tx, a, data); err != nil {
			return err
		}
		return appendJSONEvent(ctx, tx, a.RunID, eventArtifact,
			artifactEvent{ArtifactID: a.ID, Name: a.Name, MimeType: a.MimeType, Size: a.Size}, a.CreatedAt)
	})
}

// GetArtifact returns an artifact's metadata, tombstones included (Expired =
// true: the bytes are gone). Errors: ErrNotFound.
func (d *DB) GetArtifact(ctx context.Context, artifactID string) (*engine.Artifact, error) {
	return getArtifact(ctx, d.reader(), artifactID)
}

// getArtifact reads one artifact row.
func getArtifact(ctx context.Context, q queryer, artifactID string) (*engine.Artifact, error) {
	var (
		a    engine.Artifact
		tomb int
	)
	err := q.QueryRowContext(ctx, `SELECT id, run_id, name, mime_type, size, created_at, expires_at, tombstone
		FROM artifacts WHERE id = $1`, artifactID).
		Scan(&a.ID, &a.RunID, &a.Name, &a.MimeType, &a.Size, &a.CreatedAt, &a.ExpiresAt, &tomb)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, engine.ErrNotFound
	}
	if err != nil {
		return nil, fmt.Errorf("db: get artifact: %w", err)
	}
	a.Expired = tomb != 0
	return &a, nil
}

// ReadArtifact returns up to p.Length bytes starting at p.Offset (fewer at
// the end; none when the offset == size or p.Length <= 0). Only the chunk
// rows the window touches are read, in one snapshot. Errors: ErrNotFound; an
// ARTIFACT_EXPIRED *engine.Error for a tombstone; an INVALID_PARAMETER
// *engine.Error for an offset outside [0, size].
func (d *DB) ReadArtifact(ctx context.Context, p engine.ReadArtifactParams) ([]byte, error) {
	artifactID, offset, length := p.ArtifactID, p.Offset, p.Length
	var out []byte
	err := d.readTx(ctx, func(tx *txn) error {
		a, err := getArtifact(ctx, tx, artifactID)
		if err != nil {
			return err
		}
		if a.Expired {
			return engine.Errorf(engine.ArtifactExpired, "artifact %s expired at %d", a.ID, a.ExpiresAt)
		}
		if offset < 0 || offset > a.Size {
			return engine.Errorf(engine.InvalidParameter, "offset %d is outside artifact %s of %d bytes",
				offset, a.ID, a.Size).WithDetails(map[string]any{"field": "offset"})
		}
		// Compared as remaining bytes, so a huge length ("the rest") cannot
		// overflow offset+length.
		end := offset + min(max(length, 0), a.Size-offset)
		out = make([]byte, 0, end-offset)
		if end == offset {
			return nil
		}
		first, last := offset/chunkSize, (end-1)/chunkSize
		rows, err := tx.QueryContext(ctx, `SELECT seq, data FROM artifact_chunks
			WHERE artifact_id = $1 AND seq BETWEEN $2 AND $3 ORDER BY seq`, artifactID, first, last)
		if err != nil {
			return fmt.Errorf("db: read artifact: %w", err)
		}
		defer rows.Close()
		want := first
		for rows.Next() {
			var (
				seq  int64
				data sql.RawBytes
			)
			if err := rows.Scan(&seq, &data); err != nil {
				return fmt.Errorf("db: read artifact: %w", err)
			}
			if seq != want {
				return fmt.Errorf("db: artifact %s: chunk %d missing", artifactID, want)
			}
			base := seq * chunkSize
			lo := max(offset-base, 0)
			hi := min(end-base, int64(len(data)))
			if lo > hi {
				return fmt.Errorf("db: artifact %s: chunk %d too short", artifactID, seq)
			}
			out = append(out, data[lo:hi]...)
			want++
		}
		if err := rows.Err(); err != nil {
			return fmt.Errorf("db: read artifact: %w", err)
		}
		if int64(len(out)) != end-offset {
			return fmt.Errorf("db: artifact %s: %d bytes stored, want %d", artifactID, len(out), end-offset)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// insertArtifact inserts the artifact row and its chunk rows (at most
// chunkSize bytes each) in the caller's transaction. Errors: ErrConflict
// (duplicate artifact id) and what the inserts return.
func insertArtifact(ctx context.Context, tx sqlTx, a engine.Artifact, data []byte) error {
	_, err := tx.ExecContext(ctx, `INSERT INTO artifacts (id, run_id, name, mime_type, size,
		created_at, expires_at, tombstone) VALUES ($1, $2, $3, $4, $5, $6, $7, 0)`,
		a.ID, a.RunID, a.Name, a.MimeType, a.Size, a.CreatedAt, a.ExpiresAt)
	if err != nil {
		return mapConstraint(fmt.Errorf("db: put artifact: %w", err))
	}
	for seq, off := 0, 0; off < len(data); seq, off = seq+1, off+chunkSize {
		end := min(off+chunkSize, len(data))
		if _, err := tx.ExecContext(ctx, `INSERT INTO artifact_chunks (artifact_id, seq, data) VALUES ($1, $2, $3)`,
			a.ID, seq, data[off:end]); err != nil {
			return fmt.Errorf("db: put artifact chunk %d: %w", seq, err)
		}
	}
	return nil
}
