package db

import (
	"bytes"
	"context"
	"os"
	"testing"

	"github.com/browsertask/browsertask/db/sqlcommon"
	"github.com/browsertask/browsertask/engine"
)

// TestPurgeThenCompactShrinksFile: Purge removes an expired artifact's
// chunk rows (the row stays as a tombstone) and the expired run's rows in
// every table, and Compact gives the freed pages back to the file system.
// (What Purge does through engine.Store is in storetest.)
func TestPurgeThenCompactShrinksFile(t *testing.T) {
	ctx := context.Background()
	d := newDB(t)
	mustCreate(t, d, queuedRun("run_1", 1))
	claim := &engine.IdempotencyClaim{TemplateID: "tpl", Key: "k", Now: 1, ExpiresAt: 1_000_000}
	if _, _, err := d.CreateRun(ctx, queuedRun("run_old", 1), claim); err != nil {
		t.Fatal(err)
	}
	if _, _, err := d.CancelRun(ctx, engine.CancelRunParams{RunID: "run_old", Error: engine.Errorf(engine.RunCanceled, "c"), Now: 2}); err != nil {
		t.Fatal(err)
	}
	big := bytes.Repeat([]byte{7}, 6*sqlcommon.ChunkSize)
	if err := d.PutArtifact(ctx, engine.Artifact{ID: "art_old", RunID: "run_1", CreatedAt: 1, ExpiresAt: 100}, big); err != nil {
		t.Fatal(err)
	}
	if err := d.PutArtifact(ctx, engine.Artifact{ID: "art_new", RunID: "run_1", CreatedAt: 1, ExpiresAt: 10_000}, []byte("x")); err != nil {
		t.Fatal(err)
	}
	if err := d.Compact(ctx); err != nil {
		t.Fatal(err)
	}
	sizeBefore := fileSize(t, d.Path())
	if _, err := d.Purge(ctx, engine.PurgeParams{Now: 1001, Batch: 2}); err != nil {
		t.Fatal(err)
	}
	for table, want := range map[string]int{"artifact_chunks": 1, "artifacts": 2, "runs": 1, "run_events": 3,
		"idempotency_keys": 0, "run_items": 0} {
		if n := count(t, d, table); n != want {
			t.Errorf("%s rows after Purge = %d, want %d", table, n, want)
		}
	}
	if err := d.Compact(ctx); err != nil {
		t.Fatal(err)
	}
	if after := fileSize(t, d.Path()); after >= sizeBefore-int64(len(big))/2 {
		t.Errorf("file %d bytes after Compact, was %d; want it to shrink by the artifact", after, sizeBefore)
	}
	var walPages int
	if err := d.w.QueryRowContext(ctx, `PRAGMA wal_checkpoint(PASSIVE)`).Scan(new(int), &walPages, new(int)); err != nil || walPages != 0 {
		t.Errorf("WAL holds %d frames after Compact, %v; want 0 (truncated)", walPages, err)
	}
}

func fileSize(t *testing.T, path string) int64 {
	t.Helper()
	st, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	return st.Size()
}
