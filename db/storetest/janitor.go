package storetest

import (
	"context"
	"fmt"
	"reflect"
	"slices"
	"testing"

	"github.com/browsertask/browsertask/engine"
)

// testJanitor: Purge deletes terminal runs past their expiry with
// everything hanging off them, in batches, and never a live run; Compact
// leaves the data intact.
func testJanitor(t *testing.T, nh func(t *testing.T) Harness) {
	t.Run("PurgeExpiredRunsInBatches", func(t *testing.T) {
		s := nh(t).Store
		ctx := t.Context()
		// 7 runs that end at base+4 and expire at base+1001 (created + 1000),
		// each with 3 items, 6 events and an idempotency key that would
		// outlive it.
		var old []string
		for i := range 7 {
			id := fmt.Sprintf("run_old%d", i)
			old = append(old, id)
			claim := &engine.IdempotencyClaim{TemplateID: "tpl", Key: id, Now: base + 1, ExpiresAt: base + 1_000_000}
			if _, _, err := s.CreateRun(ctx, queuedRun(id, base+1), claim); err != nil {
				t.Fatal(err)
			}
			h := holder(mustClaim(t, s, "o", base+2))
			for j := range 3 {
				if err := s.SaveItem(ctx, id, h, engine.Item{Index: j, Key: "k", Status: engine.ItemSucceeded},
					engine.Progress{DoneSteps: j + 1}, base+3); err != nil {
					t.Fatal(err)
				}
			}
			mustFinish(t, s, id, h, base+4, 10)
		}
		// The artifact of an expiring run keeps its own TTL.
		if err := s.PutArtifact(ctx, engine.Artifact{ID: "art_keep", RunID: "run_old0", CreatedAt: base + 4,
			ExpiresAt: base + 1_000_000}, []byte("kept")); err != nil {
			t.Fatal(err)
		}
		// Survivors: a running run and a queued one past their expires_at
		// (never purged while non-terminal), and a terminal one not yet
		// expired.
		running := queuedRun("run_running", base+1)
		running.ExpiresAt = base + 2
		mustCreate(t, s, running)
		mustClaim(t, s, "o", base+5)
		queued := queuedRun("run_queued", base+1)
		queued.ExpiresAt = base + 2
		mustCreate(t, s, queued)
		mustCreate(t, s, queuedRun("run_fresh", base+1))
		if _, _, err := s.CancelRun(ctx, engine.CancelRunParams{RunID: "run_fresh", Error: engine.Errorf(engine.RunCanceled, "c"),
			Now: base + 5, RunTTLMs: 1_000_000}); err != nil {
			t.Fatal(err)
		}

		// Not yet: the runs expire at base+1001.
		if n, err := s.Purge(ctx, engine.PurgeParams{Now: base + 1000, Batch: 4}); err != nil || n != 0 {
			t.Fatalf("Purge before expiry = %d, %v; want 0", n, err)
		}
		n, err := s.Purge(ctx, engine.PurgeParams{Now: base + 1001, Batch: 4})
		if err != nil {
			t.Fatal(err)
		}
		// 7 runs + 21 items + 7×6 events (created, running, 3 items,
		// succeeded) + 1 artifact event + 7 idempotency keys.
		if want := 7 + 21 + 7*6 + 1 + 7; n != want {
			t.Errorf("Purge removed %d rows, want %d", n, want)
		}
		for _, id := range old {
			_, err := s.GetRun(ctx, id)
			checkErr(t, "GetRun(purged "+id+")", err, engine.ErrNotFound)
			if items, err := s.ListItems(ctx, id); err != nil || len(items) != 0 {
				t.Errorf("items of purged %s = %+v, %v", id, items, err)
			}
			if evs, err := s.ListEvents(ctx, engine.ListEventsParams{RunID: id}); err != nil || len(evs) != 0 {
				t.Errorf("events of purged %s = %+v, %v", id, evs, err)
			}
		}
		runs, total, err := s.ListRuns(ctx, engine.RunFilter{Now: base})
		left := runIDs(runs)
		slices.Sort(left)
		if err != nil || total != 3 || !reflect.DeepEqual(left, []string{"run_fresh", "run_queued", "run_running"}) {
			t.Fatalf("runs left = %v (total %d), %v", left, total, err)
		}
		for id, want := range map[string]int{"run_running": 2, "run_queued": 1, "run_fresh": 2} {
			if n := len(events(t, s, id)); n != want {
				t.Errorf("%s has %d events after the purge, want %d", id, n, want)
			}
		}
		if b := mustRead(t, s, "art_keep", 0, 10); string(b) != "kept" {
			t.Errorf("artifact of a purged run = %q, want kept", b)
		}
		// The purged runs' keys are free: a new submission creates a run.
		got, dedup, err := s.CreateRun(ctx, queuedRun("run_again", base+1002),
			&engine.IdempotencyClaim{TemplateID: "tpl", Key: "run_old0", Now: base + 1002, ExpiresAt: base + 9000})
		if err != nil || dedup || got.RunID != "run_again" {
			t.Errorf("CreateRun with a purged run's key = %+v, %v, %v; want a new run", got, dedup, err)
		}
		if n, err := s.Purge(ctx, engine.PurgeParams{Now: base + 1001, Batch: 4}); err != nil || n != 0 {
			t.Errorf("second Purge = %d, %v; want 0", n, err)
		}
	})

	t.Run("PurgeDefaultBatch", func(t *testing.T) {
		s := nh(t).Store
		ctx := t.Context()
		for i := range 3 {
			id := fmt.Sprintf("run_%d", i)
			mustCreate(t, s, queuedRun(id, base))
			if _, _, err := s.CancelRun(ctx, engine.CancelRunParams{RunID: id, Error: engine.Errorf(engine.RunCanceled, "c"),
				Now: base + 10}); err != nil {
				t.Fatal(err)
			}
		}
		// Batch <= 0 is the store's default, not "nothing".
		n, err := s.Purge(ctx, engine.PurgeParams{Now: base + 1000})
		if err != nil || n != 3+3*2 {
			t.Fatalf("Purge(Batch 0) = %d, %v; want 9 (3 runs, 6 events)", n, err)
		}
	})

	t.Run("PurgeStopsWithItsContext", func(t *testing.T) {
		s := nh(t).Store
		mustCreate(t, s, queuedRun("run_1", base))
		if _, _, err := s.CancelRun(t.Context(), engine.CancelRunParams{RunID: "run_1", Error: engine.Errorf(engine.RunCanceled, "c"),
			Now: base + 10}); err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithCancel(t.Context())
		cancel()
		if _, err := s.Purge(ctx, engine.PurgeParams{Now: base + 1000}); err == nil {
			t.Error("Purge with a canceled context succeeded; want an error")
		}
		if r := mustGet(t, s, "run_1"); r.Status != engine.StatusCanceled {
			t.Errorf("run after an aborted purge = %s", r.Status)
		}
	})

	t.Run("CompactKeepsData", func(t *testing.T) {
		s := nh(t).Store
		ctx := t.Context()
		if err := s.Compact(ctx); err != nil {
			t.Fatalf("Compact of an empty store: %v", err)
		}
		mustCreate(t, s, queuedRun("run_old", base))
		mustCreate(t, s, queuedRun("run_keep", base))
		if _, _, err := s.CancelRun(ctx, engine.CancelRunParams{RunID: "run_old", Error: engine.Errorf(engine.RunCanceled, "c"),
			Now: base + 10}); err != nil {
			t.Fatal(err)
		}
		data := patternBytes(3 * chunkSize)
		if err := s.PutArtifact(ctx, engine.Artifact{ID: "art_1", RunID: "run_keep", CreatedAt: base, ExpiresAt: base + 1_000_000}, data); err != nil {
			t.Fatal(err)
		}
		if _, err := s.Purge(ctx, engine.PurgeParams{Now: base + 1000}); err != nil {
			t.Fatal(err)
		}
		for range 2 {
			if err := s.Compact(ctx); err != nil {
				t.Fatalf("Compact: %v", err)
			}
		}
		if r := mustGet(t, s, "run_keep"); r.Status != engine.StatusQueued || !reflect.DeepEqual(r.ArtifactIDs, []string{"art_1"}) {
			t.Fatalf("run after Compact = %+v", r)
		}
		if b := mustRead(t, s, "art_1", 0, int64(len(data))); !reflect.DeepEqual(b, data) {
			t.Fatal("artifact changed by Compact")
		}
		_, err := s.GetRun(ctx, "run_old")
		checkErr(t, "GetRun(purged)", err, engine.ErrNotFound)
	})
}

// patternBytes returns n bytes of a repeating, position-dependent pattern.
func patternBytes(n int) []byte {
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(i * 31 >> 3)
	}
	return b
}
