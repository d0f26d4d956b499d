package db

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"testing"

	"github.com/browsertask/browsertask/engine"
)

func count(t *testing.T, d *DB, table string) int {
	t.Helper()
	var n int
	if err := d.r.QueryRowContext(context.Background(), `SELECT COUNT(*) FROM `+table).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

func TestPurgeRunsInBatches(t *testing.T) {
	ctx := context.Background()
	d := newDB(t)
	// 7 expired terminal runs with items, events and idempotency keys.
	for i := range 7 {
		id := fmt.Sprintf("run_old%d", i)
		claim := &engine.IdempotencyClaim{TemplateID: "tpl", Key: id, Now: 1, ExpiresAt: 50}
		if _, _, err := d.CreateRun(ctx, queuedRun(id, 1), claim); err != nil {
			t.Fatal(err)
		}
		mustClaimOne(t, d, "o", 2)
		for j := range 3 {
			if err := d.SaveItem(ctx, id, engine.Holder{OwnerID: "o", Attempt: 1}, engine.Item{Index: j, Key: "k", Status: "succeeded"}, engine.Progress{}, 3); err != nil {
				t.Fatal(err)
			}
		}
		if err := d.FinishRun(ctx, engine.Finish{RunID: id, OwnerID: "o", Attempt: 1, Status: engine.StatusSucceeded,
			Result: json.RawMessage(`{}`), Now: 4, RunTTLMs: 10}); err != nil {
			t.Fatal(err)
		}
	}
	// The expired runs' artifact keeps its own TTL.
	if err := d.PutArtifact(ctx, engine.Artifact{ID: "art_keep", RunID: "run_old0", CreatedAt: 4, ExpiresAt: 1_000_000},
		[]byte("kept")); err != nil {
		t.Fatal(err)
	}
	// Survivors: a queued run past its expires_at (never purged while
	// non-terminal), a running one, and a terminal one not yet expired.
	stale := queuedRun("run_queued", 1)
	stale.ExpiresAt = 2
	mustCreate(t, d, stale)
	mustCreate(t, d, queuedRun("run_running", 1))
	mustClaimOne(t, d, "o", 5)
	mustCreate(t, d, queuedRun("run_fresh", 1))
	if _, _, err := d.CancelRun(ctx, engine.CancelRunParams{RunID: "run_fresh", Error: engine.Errorf(engine.RunCanceled, "c"), Now: 5, RunTTLMs: 1_000_000}); err != nil {
		t.Fatal(err)
	}

	n, err := d.Purge(ctx, engine.PurgeParams{Now: 2000, Batch: 4})
	if err != nil {
		t.Fatal(err)
	}
	// 7 runs + 7*3 items + 7*(created, running, 3 items, done, +1 artifact on run_old0) events + 7 keys.
	if want := 7 + 21 + 7*6 + 1 + 7; n != want {
		t.Errorf("Purge removed %d rows, want %d", n, want)
	}
	runs, total, err := d.ListRuns(ctx, engine.RunFilter{Now: 0})
	if err != nil || total != 3 {
		t.Fatalf("runs left = %d, %v; want 3", total, err)
	}
	for _, r := range runs {
		if r.RunID != "run_queued" && r.RunID != "run_running" && r.RunID != "run_fresh" {
			t.Errorf("unexpected survivor %s", r.RunID)
		}
	}
	if items, events, keys := count(t, d, "run_items"), count(t, d, "run_events"), count(t, d, "idempotency_keys"); items != 0 || keys != 0 || events != 5 {
		t.Errorf("left items %d, events %d, keys %d; want 0, 5 (survivors'), 0", items, events, keys)
	}
	if b, err := d.ReadArtifact(ctx, engine.ReadArtifactParams{ArtifactID: "art_keep", Length: 10}); err != nil || string(b) != "kept" {
		t.Errorf("artifact of a purged run = %q, %v; want kept", b, err)
	}
	if n, err := d.Purge(ctx, engine.PurgeParams{Now: 2000, Batch: 4}); err != nil || n != 0 {
		t.Errorf("second Purge = %d, %v; want 0", n, err)
	}
}

func TestPurgeArtifactsTombstoneThenDelete(t *testing.T) {
	ctx := context.Background()
	d := newDB(t)
	mustCreate(t, d, queuedRun("run_1", 1))
	big := bytes.Repeat([]byte{7}, 6*chunkSize)
	if err := d.PutArtifact(ctx, engine.Artifact{ID: "art_old", RunID: "run_1", MimeType: "application/octet-stream",
		CreatedAt: 1, ExpiresAt: 100}, big); err != nil {
		t.Fatal(err)
	}
	if err := d.PutArtifact(ctx, engine.Artifact{ID: "art_new", RunID: "run_1", CreatedAt: 1, ExpiresAt: 10_000},
		[]byte("x")); err != nil {
		t.Fatal(err)
	}
	if err := d.Compact(ctx); err != nil {
		t.Fatal(err)
	}
	sizeBefore := fileSize(t, d.Path())

	// At 100 the artifact expires: tombstone, no chunks (batch 2 < 6 chunks).
	n, err := d.Purge(ctx, engine.PurgeParams{Now: 100, Batch: 2})
	if err != nil || n != 1+6 {
		t.Fatalf("Purge = %d, %v; want 7 (1 tombstone + 6 chunks)", n, err)
	}
	a, err := d.GetArtifact(ctx, "art_old")
	if err != nil || !a.Expired || a.Size != int64(len(big)) {
		t.Fatalf("GetArtifact after expiry = %+v, %v; want a tombstone", a, err)
	}
	if _, err := d.ReadArtifact(ctx, engine.ReadArtifactParams{ArtifactID: "art_old", Length: 1}); engine.CodeOf(err) != engine.ArtifactExpired {
		t.Fatalf("ReadArtifact of a tombstone = %v, want ARTIFACT_EXPIRED", err)
	}
	if c := count(t, d, "artifact_chunks"); c != 1 {
		t.Fatalf("chunks left = %d, want 1 (art_new)", c)
	}
	run, _ := d.GetRun(ctx, "run_1")
	if len(run.ArtifactIDs) != 2 {
		t.Errorf("run's artifact ids = %v; the tombstone stays listed", run.ArtifactIDs)
	}
	// Compact gives the freed pages back.
	if err := d.Compact(ctx); err != nil {
		t.Fatal(err)
	}
	if after := fileSize(t, d.Path()); after >= sizeBefore-int64(len(big))/2 {
		t.Errorf("file %d bytes after Compact, was %d; want it to shrink by the artifact", after, sizeBefore)
	}
	// The tombstone stays while expires_at >= tombstoneBefore, then goes.
	if n, err := d.Purge(ctx, engine.PurgeParams{Now: 200, TombstoneBefore: 100, Batch: 10}); err != nil || n != 0 {
		t.Fatalf("Purge(tombstoneBefore=100) = %d, %v; want 0", n, err)
	}
	if n, err := d.Purge(ctx, engine.PurgeParams{Now: 200, TombstoneBefore: 101, Batch: 10}); err != nil || n != 1 {
		t.Fatalf("Purge(tombstoneBefore=101) = %d, %v; want 1", n, err)
	}
	if _, err := d.GetArtifact(ctx, "art_old"); !errors.Is(err, engine.ErrNotFound) {
		t.Fatalf("GetArtifact after tombstone purge = %v, want ErrNotFound", err)
	}
	if a, err := d.GetArtifact(ctx, "art_new"); err != nil || a.Expired {
		t.Fatalf("live artifact = %+v, %v", a, err)
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
