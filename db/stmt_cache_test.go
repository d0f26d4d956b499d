package db

import (
	"context"
	"fmt"
	"sync"
	"testing"

	"github.com/browsertask/browsertask/engine"
)

// cached reports whether query is prepared in c, once the background
// preparations under way have finished (the cache's own WaitGroup: the
// event itself, not a guessed wait). Call it when no other statement is
// being scheduled.
func cached(c *stmtCache, query string) bool {
	c.prepared.Wait()
	c.mu.RLock()
	defer c.mu.RUnlock()
	_, ok := c.m[query]
	return ok
}

// TestStatementCache proves the hot statements are prepared once and then
// reused, inside write transactions on the single writer connection too
// (preparing there must never wait for the connection the transaction
// holds), and that results stay right under concurrent use.
func TestStatementCache(t *testing.T) {
	ctx := context.Background()
	d := newDB(t)
	mustCreate(t, d, queuedRun("run_1", 1))
	run := mustClaimOne(t, d, "owner", 2)
	if run.RunID != "run_1" || run.Attempt != 1 {
		t.Fatalf("claimed %s attempt %d", run.RunID, run.Attempt)
	}
	if err := d.SaveProgress(ctx, "run_1", engine.Holder{OwnerID: "owner", Attempt: 1}, engine.Progress{DoneSteps: 1, TotalSteps: 9}, 3); err != nil {
		t.Fatal(err)
	}
	if !cached(d.ws, saveProgressSQL) {
		t.Fatal("the progress update was not prepared on the writer")
	}
	// Concurrent writers and readers, every statement now cached.
	var wg sync.WaitGroup
	errs := make(chan error, 100)
	for i := 0; i < 20; i++ {
		wg.Add(2)
		go func() {
			defer wg.Done()
			it := engine.Item{Index: i, Key: fmt.Sprintf("k%d", i), Status: engine.ItemSucceeded}
			errs <- d.SaveItem(ctx, "run_1", engine.Holder{OwnerID: "owner", Attempt: 1}, it, engine.Progress{DoneSteps: i + 1, TotalSteps: 20}, int64(10+i))
		}()
		go func() {
			defer wg.Done()
			r, err := d.GetRun(ctx, "run_1")
			if err == nil && r.Status != engine.StatusRunning {
				err = fmt.Errorf("status %s", r.Status)
			}
			errs <- err
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	items, err := d.ListItems(ctx, "run_1")
	if err != nil || len(items) != 20 {
		t.Fatalf("ListItems = %d items, %v; want 20", len(items), err)
	}
	evs, err := d.ListEvents(ctx, engine.ListEventsParams{RunID: "run_1"})
	if err != nil {
		t.Fatal(err)
	}
	// created, running, then one item event per checkpoint, seqs gapless.
	if len(evs) != 22 {
		t.Fatalf("%d events, want 22", len(evs))
	}
	for i, e := range evs {
		if e.Seq != int64(i+1) {
			t.Fatalf("event %d has seq %d", i, e.Seq)
		}
	}
}

// TestStatementCacheBounded proves queries past the cap still run (as text)
// and the cache does not grow past maxCachedStmts.
func TestStatementCacheBounded(t *testing.T) {
	ctx := context.Background()
	d := newDB(t)
	for i := 0; i < maxCachedStmts+20; i++ {
		var n int
		q := fmt.Sprintf(`SELECT %d FROM runs LIMIT 1`, i)
		rows, err := d.reader().QueryContext(ctx, q)
		if err != nil {
			t.Fatal(err)
		}
		for rows.Next() {
			_ = rows.Scan(&n)
		}
		rows.Close()
	}
	d.rs.prepared.Wait()
	d.rs.mu.RLock()
	n := len(d.rs.m)
	d.rs.mu.RUnlock()
	if n > maxCachedStmts {
		t.Fatalf("%d statements cached, cap %d", n, maxCachedStmts)
	}
	if _, err := d.GetRun(ctx, "missing"); err != engine.ErrNotFound {
		t.Fatalf("GetRun(missing) = %v, want ErrNotFound", err)
	}
}
