package db

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/browsertask/browsertask/engine"
)

// BenchmarkCreateRun measures one CreateRun with an idempotency claim (one
// IMMEDIATE transaction: key upsert, run insert, event, read-back).
func BenchmarkCreateRun(b *testing.B) {
	ctx := context.Background()
	d := newDB(b)
	b.ResetTimer()
	for i := range b.N {
		id := fmt.Sprintf("run_%d", i)
		claim := &engine.IdempotencyClaim{TemplateID: "tpl", Key: id, Now: 1, ExpiresAt: 100}
		if _, _, err := d.CreateRun(ctx, queuedRun(id, int64(i)), claim); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkSaveItem measures one item checkpoint (CAS progress update, item
// upsert, event append) on a running run.
func BenchmarkSaveItem(b *testing.B) {
	ctx := context.Background()
	d := newDB(b)
	mustCreate(b, d, queuedRun("run_1", 1))
	mustClaimOne(b, d, "owner", 2)
	b.ResetTimer()
	for i := range b.N {
		it := engine.Item{Index: i, Key: fmt.Sprintf("http://x/%d", i), Status: engine.ItemSucceeded}
		if err := d.SaveItem(ctx, "run_1", engine.Holder{OwnerID: "owner", Attempt: 1}, it, engine.Progress{DoneSteps: i + 1}, int64(i)); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkGetRun measures get_task_run's read (one snapshot: the run row
// and its artifact ids).
func BenchmarkGetRun(b *testing.B) {
	ctx := context.Background()
	d := newDB(b)
	mustCreate(b, d, queuedRun("run_1", 1))
	b.ResetTimer()
	for range b.N {
		if _, err := d.GetRun(ctx, "run_1"); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkRunLifecycle measures the store work of one short run, as the
// scheduler benchmark's dev_echo does it: create, claim, one item
// checkpoint, final write.
func BenchmarkRunLifecycle(b *testing.B) {
	ctx := context.Background()
	d := newDB(b)
	b.ResetTimer()
	for i := range b.N {
		id := fmt.Sprintf("run_%d", i)
		now := int64(i + 1)
		mustCreate(b, d, queuedRun(id, now))
		runs, err := d.ClaimRuns(ctx, engine.Claim{OwnerID: "owner", Now: now, LeaseUntil: now + 1000, MaxRunning: 5, Max: 5})
		if err != nil || len(runs) != 1 {
			b.Fatalf("claim: %v, %d runs", err, len(runs))
		}
		it := engine.Item{Index: 0, Key: "item-0", Status: engine.ItemSucceeded}
		if err := d.SaveItem(ctx, id, engine.Holder{OwnerID: "owner", Attempt: 1}, it, engine.Progress{DoneSteps: 1, TotalSteps: 1}, now); err != nil {
			b.Fatal(err)
		}
		if err := d.FinishRun(ctx, engine.Finish{RunID: id, OwnerID: "owner", Attempt: 1, Status: engine.StatusSucceeded,
			Result: []byte(`{"items":1}`), Now: now, RunTTLMs: 1000}); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkSaveItemLargeInputs is BenchmarkSaveItem on a run whose inputs
// hold 1000 URLs (about 50 KB), as a large batch_extract_pages run has.
func BenchmarkSaveItemLargeInputs(b *testing.B) {
	ctx := context.Background()
	d := newDB(b)
	r := queuedRun("run_1", 1)
	urls := make([]string, 1000)
	for i := range urls {
		urls[i] = fmt.Sprintf(`"http://127.0.0.1:40000/page/%d"`, 100000+i)
	}
	r.Inputs = []byte(`{"urls":[` + strings.Join(urls, ",") + `]}`)
	mustCreate(b, d, r)
	mustClaimOne(b, d, "owner", 2)
	b.ResetTimer()
	for i := range b.N {
		it := engine.Item{Index: i, Key: fmt.Sprintf("http://x/%d", i), Status: engine.ItemSucceeded,
			Output: []byte(`{"url":"http://x","title":"Page","fields":{"name":"Item"}}`)}
		if err := d.SaveItem(ctx, "run_1", engine.Holder{OwnerID: "owner", Attempt: 1}, it, engine.Progress{DoneSteps: i + 1}, int64(i)); err != nil {
			b.Fatal(err)
		}
	}
}
