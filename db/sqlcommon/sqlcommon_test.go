package sqlcommon

import (
	"bytes"
	"context"
	"database/sql"
	"errors"
	"path/filepath"
	"strings"
	"testing"

	"github.com/browsertask/browsertask/engine"
	_ "modernc.org/sqlite" // the "sqlite" driver, for a real database under the helpers
)

// chunkDB opens a SQLite database with an artifact_chunks table holding
// the given chunks of artifact "art".
func chunkDB(t *testing.T, chunks map[int64][]byte) *sql.DB {
	t.Helper()
	db, err := sql.Open("sqlite", filepath.Join(t.TempDir(), "c.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = db.Close() })
	ctx := context.Background()
	if _, err := db.ExecContext(ctx, `CREATE TABLE artifact_chunks (artifact_id TEXT, seq INTEGER, data BLOB,
		PRIMARY KEY (artifact_id, seq))`); err != nil {
		t.Fatal(err)
	}
	for seq, data := range chunks {
		if _, err := db.ExecContext(ctx, insertChunkSQL, "art", seq, data); err != nil {
			t.Fatal(err)
		}
	}
	return db
}

const (
	insertChunkSQL = `INSERT INTO artifact_chunks (artifact_id, seq, data) VALUES (?, ?, ?)`
	chunksSQL      = `SELECT seq, data FROM artifact_chunks WHERE artifact_id = ? AND seq BETWEEN ? AND ? ORDER BY seq`
)

// TestReadWindowRefusesDamagedChunks: a window over a missing or short
// chunk row is an error naming the chunk, never bytes with a hole; a
// window within whole chunks reads exactly its bytes.
func TestReadWindowRefusesDamagedChunks(t *testing.T) {
	ctx := context.Background()
	full := bytes.Repeat([]byte{1}, ChunkSize)
	a := &engine.Artifact{ID: "art", Size: 3 * ChunkSize}
	cases := []struct {
		name   string
		chunks map[int64][]byte
		offset int64
		want   string
	}{
		{"missing", map[int64][]byte{0: full, 2: full}, ChunkSize - 5, "chunk 1 missing"},
		{"short", map[int64][]byte{0: full, 1: full[:10], 2: full}, ChunkSize + 20, "chunk 1 too short"},
		{"hole", map[int64][]byte{0: full, 1: full[:10], 2: full}, ChunkSize - 5, "bytes stored, want"},
		{"truncated", map[int64][]byte{0: full, 1: full}, ChunkSize - 5, "bytes stored, want"},
	}
	for _, c := range cases {
		_, err := ReadWindow(ctx, chunkDB(t, c.chunks), chunksSQL, a, c.offset, 2*ChunkSize)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: err = %v; want one saying %q", c.name, err, c.want)
		}
	}
	db := chunkDB(t, map[int64][]byte{0: full, 1: full, 2: full})
	b, err := ReadWindow(ctx, db, chunksSQL, a, ChunkSize-5, 10)
	if err != nil || len(b) != 10 {
		t.Fatalf("window across a chunk boundary = %d bytes, %v; want 10", len(b), err)
	}
	var ie *engine.Error
	if _, err := ReadWindow(ctx, db, chunksSQL, a, a.Size+1, 1); !errors.As(err, &ie) || ie.Code != engine.InvalidParameter {
		t.Fatalf("offset past the end: %v; want INVALID_PARAMETER", err)
	}
}

// TestInsertAndCopyChunks: bytes written by InsertChunks and by
// CopyChunks land in the same chunk rows, and CopyChunks refuses a reader
// that gives other than the announced size.
func TestInsertAndCopyChunks(t *testing.T) {
	ctx := context.Background()
	data := bytes.Repeat([]byte("0123456789abcdef"), (2*ChunkSize+32)/16)
	a := &engine.Artifact{ID: "art", Size: int64(len(data))}
	for name, write := range map[string]func(Execer) error{
		"insert": func(tx Execer) error { return InsertChunks(ctx, tx, insertChunkSQL, "art", data) },
		"copy": func(tx Execer) error {
			return CopyChunks(ctx, tx, insertChunkSQL, "art", bytes.NewReader(data), a.Size)
		},
	} {
		db := chunkDB(t, nil)
		if err := write(db); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		var n int
		if err := db.QueryRowContext(ctx, `SELECT COUNT(*) FROM artifact_chunks`).Scan(&n); err != nil || n != 3 {
			t.Fatalf("%s: %d chunk rows, %v; want 3", name, n, err)
		}
		got, err := ReadWindow(ctx, db, chunksSQL, a, 0, a.Size)
		if err != nil || !bytes.Equal(got, data) {
			t.Fatalf("%s: read back %d bytes, %v; want the %d written", name, len(got), err, len(data))
		}
	}
	err := CopyChunks(ctx, chunkDB(t, nil), insertChunkSQL, "art", bytes.NewReader(data[:100]), a.Size)
	if err == nil || !strings.Contains(err.Error(), "100 bytes read") {
		t.Fatalf("short reader: %v; want an error counting 100 bytes read", err)
	}
}

// TestEachReturnsFnErrorAndCloses: fn's error comes back unwrapped and the
// rows are closed (the next statement on a one-connection pool runs);
// Collect over no rows gives an empty, non-nil slice.
func TestEachReturnsFnErrorAndCloses(t *testing.T) {
	ctx := context.Background()
	db := chunkDB(t, map[int64][]byte{0: {1}, 1: {2}})
	db.SetMaxOpenConns(1)
	stop := errors.New("stop")
	rows, err := db.QueryContext(ctx, `SELECT seq FROM artifact_chunks ORDER BY seq`)
	if err != nil {
		t.Fatal(err)
	}
	seen := 0
	err = Each(rows, "seqs", func(s Scanner) (int64, error) {
		var v int64
		return v, s.Scan(&v)
	}, func(int64) error { seen++; return stop })
	if err != stop || seen != 1 {
		t.Fatalf("Each = %v after %d rows; want fn's error after 1", err, seen)
	}
	rows, err = db.QueryContext(ctx, `SELECT seq FROM artifact_chunks WHERE seq > 5`)
	if err != nil {
		t.Fatalf("next query after Each: %v", err)
	}
	got, err := Collect(rows, "none", func(s Scanner) (int64, error) {
		var v int64
		return v, s.Scan(&v)
	})
	if err != nil || got == nil || len(got) != 0 {
		t.Fatalf("Collect over no rows = %#v, %v; want an empty slice", got, err)
	}
}
