package sqlcommon

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io"

	"github.com/browsertask/browsertask/engine"
)

// ChunkSize is the size of an artifact_chunks row: reads fetch only the
// chunks a window touches, and no single row grows large.
const ChunkSize = 256 << 10

// ArtifactColumns is the SELECT list ScanArtifact reads, in order.
const ArtifactColumns = `id, run_id, name, mime_type, size, created_at, expires_at, tombstone`

// ArtifactEvent is the data of an "artifact" event.
type ArtifactEvent struct {
	ArtifactID string `json:"artifactId"`
	Name       string `json:"name"`
	MimeType   string `json:"mimeType"`
	Size       int64  `json:"size"`
}

// EventOf is the "artifact" event data announcing a.
func EventOf(a engine.Artifact) ArtifactEvent {
	return ArtifactEvent{ArtifactID: a.ID, Name: a.Name, MimeType: a.MimeType, Size: a.Size}
}

// ScanArtifact reads one row of ArtifactColumns.
func ScanArtifact(s Scanner) (*engine.Artifact, error) {
	var (
		a    engine.Artifact
		tomb int
	)
	if err := s.Scan(&a.ID, &a.RunID, &a.Name, &a.MimeType, &a.Size, &a.CreatedAt, &a.ExpiresAt, &tomb); err != nil {
		return nil, err
	}
	a.Expired = tomb != 0
	return &a, nil
}

// GetArtifact reads one artifact row with query (selecting ArtifactColumns,
// one argument: the artifact id). Errors: engine.ErrNotFound.
func GetArtifact(ctx context.Context, q Querier, query, artifactID string) (*engine.Artifact, error) {
	a, err := ScanArtifact(q.QueryRowContext(ctx, query, artifactID))
	if errors.Is(err, sql.ErrNoRows) {
		return nil, engine.ErrNotFound
	}
	if err != nil {
		return nil, fmt.Errorf("db: get artifact: %w", err)
	}
	return a, nil
}

// ReadArtifact reads the artifact p names with getQuery (as GetArtifact)
// and then its window with ReadWindow, both on q: run it in one read
// transaction so the row and its chunks are one snapshot. Errors: those of
// GetArtifact and ReadWindow.
func ReadArtifact(ctx context.Context, q Querier, getQuery, chunksQuery string, p engine.ReadArtifactParams) ([]byte, error) {
	a, err := GetArtifact(ctx, q, getQuery, p.ArtifactID)
	if err != nil {
		return nil, err
	}
	return ReadWindow(ctx, q, chunksQuery, a, p.Offset, p.Length)
}

// ReadWindow returns up to length bytes of a starting at offset (fewer at
// the end; none when offset == size or length <= 0), reading only the
// chunk rows the window touches with chunksQuery (selecting seq, data in
// seq order; arguments: artifact id, first seq, last seq). Run it in the
// read transaction a was read in. Errors: an ARTIFACT_EXPIRED
// *engine.Error for a tombstone; an INVALID_PARAMETER *engine.Error (field
// offset) for an offset outside [0, size]; a missing or short chunk.
func ReadWindow(ctx context.Context, q Querier, chunksQuery string, a *engine.Artifact, offset, length int64) ([]byte, error) {
	if a.Expired {
		return nil, engine.Errorf(engine.ArtifactExpired, "artifact %s expired at %d", a.ID, a.ExpiresAt)
	}
	if offset < 0 || offset > a.Size {
		return nil, engine.Errorf(engine.InvalidParameter, "offset %d is outside artifact %s of %d bytes",
			offset, a.ID, a.Size).WithDetails(map[string]any{"field": "offset"})
	}
	// Compared as remaining bytes, so a huge length ("the rest") cannot
	// overflow offset+length.
	end := offset + min(max(length, 0), a.Size-offset)
	out := make([]byte, 0, end-offset)
	if end == offset {
		return out, nil
	}
	first, last := offset/ChunkSize, (end-1)/ChunkSize
	rows, err := q.QueryContext(ctx, chunksQuery, a.ID, first, last)
	if err != nil {
		return nil, fmt.Errorf("db: read artifact: %w", err)
	}
	defer rows.Close()
	want := first
	for rows.Next() {
		var (
			seq  int64
			data sql.RawBytes
		)
		if err := rows.Scan(&seq, &data); err != nil {
			return nil, fmt.Errorf("db: read artifact: %w", err)
		}
		if seq != want {
			return nil, fmt.Errorf("db: artifact %s: chunk %d missing", a.ID, want)
		}
		base := seq * ChunkSize
		lo := max(offset-base, 0)
		hi := min(end-base, int64(len(data)))
		if lo > hi {
			return nil, fmt.Errorf("db: artifact %s: chunk %d too short", a.ID, seq)
		}
		out = append(out, data[lo:hi]...)
		want++
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("db: read artifact: %w", err)
	}
	if int64(len(out)) != end-offset {
		return nil, fmt.Errorf("db: artifact %s: %d bytes stored, want %d", a.ID, len(out), end-offset)
	}
	return out, nil
}

// InsertChunks writes data as chunk rows of at most ChunkSize bytes with
// insertChunk (arguments: artifact id, seq, data), in the caller's
// transaction.
func InsertChunks(ctx context.Context, tx Execer, insertChunk, artifactID string, data []byte) error {
	for seq, off := 0, 0; off < len(data); seq, off = seq+1, off+ChunkSize {
		end := min(off+ChunkSize, len(data))
		if _, err := tx.ExecContext(ctx, insertChunk, artifactID, seq, data[off:end]); err != nil {
			return fmt.Errorf("db: put artifact chunk %d: %w", seq, err)
		}
	}
	return nil
}

// CopyChunks writes what r gives as chunk rows with insertChunk, one chunk
// in memory at a time, in the caller's transaction. Errors: r's error, or
// r giving other than size bytes (the caller rolls back: nothing is kept).
func CopyChunks(ctx context.Context, tx Execer, insertChunk, artifactID string, r io.Reader, size int64) error {
	buf := make([]byte, ChunkSize)
	var total int64
	for seq := 0; ; seq++ {
		n, err := io.ReadFull(r, buf)
		if n > 0 {
			if _, xerr := tx.ExecContext(ctx, insertChunk, artifactID, seq, buf[:n]); xerr != nil {
				return fmt.Errorf("db: put artifact chunk %d: %w", seq, xerr)
			}
			total += int64(n)
		}
		if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
			break
		}
		if err != nil {
			return fmt.Errorf("db: put artifact: read: %w", err)
		}
	}
	if total != size {
		return fmt.Errorf("db: put artifact %s: %d bytes read, %d announced", artifactID, total, size)
	}
	return nil
}
