package db

import (
	"bytes"
	"context"
	"errors"
	"strconv"
	"strings"
	"testing"

	"github.com/browsertask/browsertask/engine"
)

// TestDiskFullIsNamed (issue 9, defect 13): when SQLite cannot grow the file
// (here: a page-count limit, which SQLite reports exactly like a full disk,
// SQLITE_FULL), the write fails whole with a StorageFullError naming the
// file, and the domain error built from it says what is full and where
// instead of "retry".
func TestDiskFullIsNamed(t *testing.T) {
	ctx := context.Background()
	d := newDB(t)
	mustCreate(t, d, queuedRun("run_1", 1))
	var pages int64
	if err := d.w.QueryRowContext(ctx, `PRAGMA page_count`).Scan(&pages); err != nil {
		t.Fatal(err)
	}
	if _, err := d.w.ExecContext(ctx, `PRAGMA max_page_count = `+strconv.FormatInt(pages+2, 10)); err != nil {
		t.Fatal(err)
	}
	a := engine.Artifact{ID: "art_big", RunID: "run_1", Name: "big", MimeType: "application/octet-stream", Size: 4 << 20, CreatedAt: 2, ExpiresAt: 99}
	err := d.PutArtifact(ctx, a, bytes.Repeat([]byte{7}, 4<<20))
	var full *engine.StorageFullError
	if !errors.As(err, &full) || full.Path != d.path {
		t.Fatalf("PutArtifact on a full disk = %v, want StorageFullError for %s", err, d.path)
	}
	if _, err := d.GetArtifact(ctx, "art_big"); !errors.Is(err, engine.ErrNotFound) {
		t.Fatalf("half-written artifact: %v", err)
	}
	e := engine.Wrap(engine.ExecutionError, err, "store artifact: %v", err)
	if !strings.Contains(e.Message, "is full") || !strings.Contains(e.Message, d.path) ||
		!strings.Contains(e.Recovery, "Free space") || e.Details["reason"] != "disk full" {
		t.Fatalf("domain error: %+v", e)
	}
}
