package storetest

import (
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/browsertask/browsertask/engine"
)

// testIdempotency: CreateRun with an idempotency claim creates at most one
// run per live (template, key), however many submissions race, and frees
// the key when it expires or its run does.
func testIdempotency(t *testing.T, nh func(t *testing.T) Harness) {
	t.Run("ConcurrentCreateSameKeyOneRun", func(t *testing.T) {
		h := nh(t)
		handles := []engine.Store{h.Store, peer(t, h)} // two processes
		winner := createRace(t, handles, 100, "same", base+1000, base+5000, "run")
		if n := len(events(t, handles[0], winner)); n != 1 {
			t.Errorf("winner has %d events, want 1 (only its created event)", n)
		}
		if stored := mustGet(t, handles[1], winner); stored.IdempotencyKey != "same" || stored.Status != engine.StatusQueued {
			t.Errorf("winner = %+v; want queued with the idempotency key stored", stored)
		}
	})

	t.Run("KeyLiveUntilExpiry", func(t *testing.T) {
		s := nh(t).Store
		ctx := t.Context()
		claim := func(now int64) *engine.IdempotencyClaim {
			return &engine.IdempotencyClaim{TemplateID: "tpl", Key: "k", Now: now, ExpiresAt: now + 4000}
		}
		if _, dedup, err := s.CreateRun(ctx, queuedRun("run_first", base+1000), claim(base+1000)); err != nil || dedup {
			t.Fatalf("first CreateRun = dedup %v, %v", dedup, err)
		}
		// Still live 1 ms before expires_at: deduplicated, nothing inserted.
		got, dedup, err := s.CreateRun(ctx, queuedRun("run_late", base+4999), claim(base+4999))
		if err != nil || !dedup || got.RunID != "run_first" {
			t.Fatalf("CreateRun before expiry = %+v, %v, %v; want dedup to run_first", got, dedup, err)
		}
		checkErr(t, "GetRun(deduplicated id)", func() error { _, err := s.GetRun(ctx, "run_late"); return err }(), engine.ErrNotFound)
		// Once expires_at <= now the key is free.
		got, dedup, err = s.CreateRun(ctx, queuedRun("run_new", base+5000), claim(base+5000))
		if err != nil || dedup || got.RunID != "run_new" || got.IdempotencyKey != "k" {
			t.Fatalf("CreateRun at expiry = %+v, %v, %v; want a new run", got, dedup, err)
		}
		// The key now points at run_new until base+9000.
		got, dedup, err = s.CreateRun(ctx, queuedRun("run_after", base+6000), claim(base+6000))
		if err != nil || !dedup || got.RunID != "run_new" {
			t.Fatalf("CreateRun after takeover = %+v, %v, %v; want dedup to run_new", got, dedup, err)
		}
		_, total, err := s.ListRuns(ctx, engine.RunFilter{Now: base + 6000})
		if err != nil || total != 2 {
			t.Fatalf("runs = %d, %v; want 2 (run_first, run_new)", total, err)
		}
	})

	t.Run("ConcurrentReuseOfExpiredKeyOneRun", func(t *testing.T) {
		h := nh(t)
		handles := []engine.Store{h.Store, peer(t, h)}
		first := createRace(t, handles, 2, "k", base, base+100, "old")
		second := createRace(t, handles, 20, "k", base+100, base+200, "new")
		if first == second {
			t.Fatalf("the expired key still deduplicated to %s", first)
		}
		_, total, err := handles[0].ListRuns(t.Context(), engine.RunFilter{Now: base + 100})
		if err != nil || total != 2 {
			t.Fatalf("runs = %d, %v; want 2 (one per key lifetime)", total, err)
		}
	})

	t.Run("KeyScopedByTemplate", func(t *testing.T) {
		s := nh(t).Store
		ctx := t.Context()
		for _, tpl := range []string{"tpl", "tpl2"} {
			r := queuedRun("run_"+tpl, base)
			r.TemplateID = tpl
			got, dedup, err := s.CreateRun(ctx, r, &engine.IdempotencyClaim{TemplateID: tpl, Key: "same", Now: base, ExpiresAt: base + 9000})
			if err != nil || dedup || got.RunID != r.RunID {
				t.Fatalf("CreateRun(%s) = %+v, %v, %v; want a new run", tpl, got, dedup, err)
			}
		}
	})

	t.Run("ExpiredRunFreesKey", func(t *testing.T) {
		s := nh(t).Store
		ctx := t.Context()
		claim := func(now int64) *engine.IdempotencyClaim {
			return &engine.IdempotencyClaim{TemplateID: "tpl", Key: "k", Now: now, ExpiresAt: base + 1_000_000}
		}
		if _, _, err := s.CreateRun(ctx, queuedRun("run_a", base+100), claim(base+100)); err != nil {
			t.Fatal(err)
		}
		if _, _, err := s.CancelRun(ctx, engine.CancelRunParams{RunID: "run_a", Error: engine.Errorf(engine.RunCanceled, "c"),
			Now: base + 200, RunTTLMs: 100}); err != nil {
			t.Fatal(err)
		}
		// Before the run expires (created + 1000) the key still holds.
		got, dedup, err := s.CreateRun(ctx, queuedRun("run_x", base+1099), claim(base+1099))
		if err != nil || !dedup || got.RunID != "run_a" {
			t.Fatalf("CreateRun while the holder lives = %+v, %v, %v; want dedup to run_a", got, dedup, err)
		}
		// The run expired though the key's own expiry is far away: a new
		// submission must not be deduplicated to a run that reads as gone.
		got, dedup, err = s.CreateRun(ctx, queuedRun("run_b", base+2000), claim(base+2000))
		if err != nil || dedup || got.RunID != "run_b" {
			t.Fatalf("CreateRun after the holder expired = %+v, %v, %v; want run_b", got, dedup, err)
		}
		// Purging run_a leaves run_b's hold on the key alone.
		if _, err := s.Purge(ctx, engine.PurgeParams{Now: base + 2000, Batch: 10}); err != nil {
			t.Fatal(err)
		}
		got, dedup, err = s.CreateRun(ctx, queuedRun("run_c", base+2100), claim(base+2100))
		if err != nil || !dedup || got.RunID != "run_b" {
			t.Fatalf("CreateRun after purge = %+v, %v, %v; want dedup to run_b", got, dedup, err)
		}
	})
}

// createRace submits n runs (ids prefix_000...) with the same key across
// handles at once, checks that exactly one was created and every answer
// names it, and returns its id.
func createRace(t *testing.T, handles []engine.Store, n int, key string, now, expires int64, prefix string) string {
	t.Helper()
	type answer struct {
		id    string
		dedup bool
		err   error
	}
	answers := make([]answer, n)
	start := make(chan struct{})
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			claim := &engine.IdempotencyClaim{TemplateID: "tpl", Key: key, Now: now, ExpiresAt: expires}
			got, dedup, err := handles[i%len(handles)].CreateRun(t.Context(), queuedRun(fmt.Sprintf("%s_%03d", prefix, i), now), claim)
			answers[i] = answer{dedup: dedup, err: err}
			if got != nil {
				answers[i].id = got.RunID
			}
		}()
	}
	close(start)
	wg.Wait()
	created, winner := 0, ""
	for i, a := range answers {
		if a.err != nil {
			t.Fatalf("CreateRun %d: %v", i, a.err)
		}
		if !a.dedup {
			created++
			winner = a.id
		}
	}
	if created != 1 {
		t.Fatalf("%d of %d concurrent submissions created a run; want exactly 1", created, n)
	}
	for i, a := range answers {
		if a.id != winner {
			t.Errorf("answer %d names run %q, want %q", i, a.id, winner)
		}
	}
	runs, _, err := handles[0].ListRuns(t.Context(), engine.RunFilter{Now: now})
	if err != nil {
		t.Fatal(err)
	}
	stored := 0
	for _, r := range runs {
		if strings.HasPrefix(r.RunID, prefix+"_") {
			stored++
		}
	}
	if stored != 1 {
		t.Fatalf("%d runs stored by the race, want 1", stored)
	}
	return winner
}
