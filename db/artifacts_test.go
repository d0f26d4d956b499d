package db

import (
	"bytes"
	"context"
	"errors"
	"testing"

	"github.com/browsertask/browsertask/db/sqlcommon"
	"github.com/browsertask/browsertask/engine"
)

// count returns the number of rows in table.
func count(t *testing.T, d *DB, table string) int {
	t.Helper()
	var n int
	if err := d.r.QueryRowContext(context.Background(), `SELECT COUNT(*) FROM `+table).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

// TestArtifactChunkRows: the bytes are split in chunk rows of sqlcommon.ChunkSize, a
// read touches only the chunk rows its window needs, and a failed put
// leaves no chunk row behind. (The behaviour through engine.Store is in
// storetest.)
func TestArtifactChunkRows(t *testing.T) {
	ctx := context.Background()
	d := newDB(t)
	mustCreate(t, d, queuedRun("run_1", 1))
	data := bytes.Repeat([]byte("0123456789abcdef"), (4*sqlcommon.ChunkSize+16)/16)
	data = append(data, 'x')
	if err := d.PutArtifact(ctx, engine.Artifact{ID: "art_1", RunID: "run_1", CreatedAt: 10, ExpiresAt: 1000}, data); err != nil {
		t.Fatal(err)
	}
	var chunks int
	if err := d.r.QueryRowContext(ctx, `SELECT COUNT(*) FROM artifact_chunks WHERE artifact_id = 'art_1'`).Scan(&chunks); err != nil || chunks != 5 {
		t.Fatalf("chunk rows = %d, %v; want 5 (4 x 256 KiB + 17 bytes)", chunks, err)
	}
	var longest int
	if err := d.r.QueryRowContext(ctx, `SELECT MAX(LENGTH(data)) FROM artifact_chunks`).Scan(&longest); err != nil || longest != sqlcommon.ChunkSize {
		t.Fatalf("longest chunk = %d, %v; want %d", longest, err, sqlcommon.ChunkSize)
	}
	// Failed puts (a duplicate id; an unknown run, whose event append fails
	// after the chunks were written) roll back every chunk row.
	before := count(t, d, "artifact_chunks")
	err := d.PutArtifact(ctx, engine.Artifact{ID: "art_1", RunID: "run_1", CreatedAt: 10, ExpiresAt: 1000}, make([]byte, 2*sqlcommon.ChunkSize+1))
	if !errors.Is(err, engine.ErrConflict) {
		t.Fatalf("duplicate PutArtifact = %v, want ErrConflict", err)
	}
	err = d.PutArtifact(ctx, engine.Artifact{ID: "art_2", RunID: "run_nope", CreatedAt: 10, ExpiresAt: 1000}, make([]byte, 2*sqlcommon.ChunkSize+1))
	if !errors.Is(err, engine.ErrNotFound) {
		t.Fatalf("PutArtifact for an unknown run = %v, want ErrNotFound", err)
	}
	if after := count(t, d, "artifact_chunks"); after != before {
		t.Fatalf("chunk rows %d after failed puts, want %d", after, before)
	}
	// With chunk 0 gone, a window inside chunk 3 still reads, while one
	// touching chunk 0 reports the hole instead of returning short data.
	if _, err := d.w.ExecContext(ctx, `DELETE FROM artifact_chunks WHERE artifact_id = 'art_1' AND seq = 0`); err != nil {
		t.Fatal(err)
	}
	b, err := d.ReadArtifact(ctx, engine.ReadArtifactParams{ArtifactID: "art_1", Offset: 3*sqlcommon.ChunkSize + 5, Length: 100})
	if err != nil || !bytes.Equal(b, data[3*sqlcommon.ChunkSize+5:3*sqlcommon.ChunkSize+105]) {
		t.Fatalf("window in chunk 3 with chunk 0 missing = %v", err)
	}
	if _, err := d.ReadArtifact(ctx, engine.ReadArtifactParams{ArtifactID: "art_1", Offset: 10, Length: 10}); err == nil {
		t.Fatal("window in a missing chunk read without error")
	}
}
