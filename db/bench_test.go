package db

import (
	"context"
	"fmt"
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
		if err := d.SaveItem(ctx, "run_1", "owner", it, engine.Progress{DoneSteps: i + 1}, int64(i)); err != nil {
			b.Fatal(err)
		}
	}
}
