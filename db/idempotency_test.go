package db

import (
	"context"
	"fmt"
	"path/filepath"
	"sync"
	"testing"

	"github.com/browsertask/browsertask/engine"
)

func TestIdempotentCreateRace(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "bt.db")
	handles := []*DB{openTest(t, path), openTest(t, path)} // two "processes"
	const n = 100
	type answer struct {
		id    string
		dedup bool
		err   error
	}
	answers := make([]answer, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r := queuedRun(fmt.Sprintf("run_%03d", i), 1000)
			claim := &engine.IdempotencyClaim{TemplateID: "tpl", Key: "same", Now: 1000, ExpiresAt: 5000}
			got, dedup, err := handles[i%2].CreateRun(ctx, r, claim)
			answers[i] = answer{dedup: dedup, err: err}
			if got != nil {
				answers[i].id = got.RunID
			}
		}()
	}
	wg.Wait()
	created, deduped := 0, 0
	winner := ""
	for i, a := range answers {
		if a.err != nil {
			t.Fatalf("CreateRun %d: %v", i, a.err)
		}
		if !a.dedup {
			created++
			winner = a.id
		} else {
			deduped++
		}
	}
	if created != 1 || deduped != n-1 {
		t.Fatalf("created %d, deduplicated %d; want 1 and %d", created, deduped, n-1)
	}
	for i, a := range answers {
		if a.id != winner {
			t.Errorf("answer %d names run %q, want %q", i, a.id, winner)
		}
	}
	var rows int
	if err := handles[0].r.QueryRowContext(ctx, `SELECT COUNT(*) FROM runs`).Scan(&rows); err != nil || rows != 1 {
		t.Fatalf("runs rows = %d, %v; want 1", rows, err)
	}
	var events int
	if err := handles[0].r.QueryRowContext(ctx, `SELECT COUNT(*) FROM run_events`).Scan(&events); err != nil || events != 1 {
		t.Fatalf("run_events rows = %d, %v; want 1 (only the winner's created event)", events, err)
	}
	stored, err := handles[0].GetRun(ctx, winner)
	if err != nil || stored.IdempotencyKey != "same" {
		t.Fatalf("winner = %+v, %v; want idempotency key stored", stored, err)
	}

	// Still live just before expiry; once expires_at <= now the key is free.
	got, dedup, err := handles[1].CreateRun(ctx, queuedRun("run_late", 4999),
		&engine.IdempotencyClaim{TemplateID: "tpl", Key: "same", Now: 4999, ExpiresAt: 9000})
	if err != nil || !dedup || got.RunID != winner {
		t.Fatalf("CreateRun before expiry = %v, %v, %v; want dedup to %s", got, dedup, err, winner)
	}
	got, dedup, err = handles[1].CreateRun(ctx, queuedRun("run_new", 5000),
		&engine.IdempotencyClaim{TemplateID: "tpl", Key: "same", Now: 5000, ExpiresAt: 9000})
	if err != nil || dedup || got.RunID != "run_new" {
		t.Fatalf("CreateRun after expiry = %v, %v, %v; want a new run", got, dedup, err)
	}
	// The same key under another template is independent.
	got, dedup, err = handles[0].CreateRun(ctx, queuedRun("run_other", 5000),
		&engine.IdempotencyClaim{TemplateID: "tpl2", Key: "same", Now: 5000, ExpiresAt: 9000})
	if err != nil || dedup || got.RunID != "run_other" {
		t.Fatalf("CreateRun other template = %v, %v, %v; want a new run", got, dedup, err)
	}
}

func TestIdempotencyKeyFreedWhenRunPurged(t *testing.T) {
	ctx := context.Background()
	d := newDB(t)
	claim := &engine.IdempotencyClaim{TemplateID: "tpl", Key: "k", Now: 100, ExpiresAt: 1_000_000}
	if _, _, err := d.CreateRun(ctx, queuedRun("run_a", 100), claim); err != nil {
		t.Fatal(err)
	}
	if _, _, err := d.CancelRun(ctx, engine.CancelRunParams{RunID: "run_a", Error: engine.Errorf(engine.RunCanceled, "c"), Now: 200, RunTTLMs: 100}); err != nil {
		t.Fatal(err)
	}
	// The run expired (terminal, expires_at 1100) though the key's own
	// expiry is far away: a new submission must not be deduplicated to a
	// run that get_task_run would call RUN_NOT_FOUND.
	claim = &engine.IdempotencyClaim{TemplateID: "tpl", Key: "k", Now: 2000, ExpiresAt: 1_000_000}
	got, dedup, err := d.CreateRun(ctx, queuedRun("run_b", 2000), claim)
	if err != nil || dedup || got.RunID != "run_b" {
		t.Fatalf("CreateRun after the holder expired = %v, %v, %v; want run_b", got, dedup, err)
	}
	if _, err := d.Purge(ctx, engine.PurgeParams{Now: 2000, Batch: 10}); err != nil {
		t.Fatal(err)
	}
	got, dedup, err = d.CreateRun(ctx, queuedRun("run_c", 2100),
		&engine.IdempotencyClaim{TemplateID: "tpl", Key: "k", Now: 2100, ExpiresAt: 1_000_000})
	if err != nil || !dedup || got.RunID != "run_b" {
		t.Fatalf("CreateRun after purge = %v, %v, %v; want dedup to run_b", got, dedup, err)
	}
}
