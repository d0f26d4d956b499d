package db

import (
	"context"
	"errors"
	"reflect"
	"testing"

	"github.com/browsertask/browsertask/engine"
)

// TestStaleExecutionWritesNothing: a process paused past its lease (SIGSTOP,
// a suspended laptop) had its run recovered and claimed again — by itself,
// so the owner id is the same. The old execution's checkpoint, progress,
// heartbeat, requeue and final write must all fail; the new one's succeed.
// The recovery counts one crash.
func TestStaleExecutionWritesNothing(t *testing.T) {
	ctx := context.Background()
	d := newDB(t)
	mustCreate(t, d, queuedRun("run_1", 1))
	first := mustClaimOne(t, d, "owner_a", 10) // lease until 15010
	if first.Attempt != 1 || first.Crashes != 0 {
		t.Fatalf("first claim: attempt %d crashes %d", first.Attempt, first.Crashes)
	}
	if err := d.RecoverRun(ctx, engine.Recovery{RunID: "run_1", OwnerID: "owner_a", To: engine.StatusQueued, Now: 20000}); err != nil {
		t.Fatal(err)
	}
	second := mustClaimOne(t, d, "owner_a", 20001)
	if second.Attempt != 2 || second.Crashes != 1 {
		t.Fatalf("second claim: attempt %d crashes %d, want 2 and 1", second.Attempt, second.Crashes)
	}
	stale := engine.Holder{OwnerID: "owner_a", Attempt: 1}
	item := engine.Item{Index: 0, Key: "k", Status: engine.ItemSucceeded}
	if err := d.SaveItem(ctx, "run_1", stale, item, engine.Progress{DoneSteps: 1}, 20002); !errors.Is(err, engine.ErrConflict) {
		t.Errorf("stale SaveItem = %v, want ErrConflict", err)
	}
	if err := d.SaveProgress(ctx, "run_1", stale, engine.Progress{DoneSteps: 1}, 20002); !errors.Is(err, engine.ErrConflict) {
		t.Errorf("stale SaveProgress = %v, want ErrConflict", err)
	}
	if err := d.RequeueRun(ctx, "run_1", stale, 20002); !errors.Is(err, engine.ErrConflict) {
		t.Errorf("stale RequeueRun = %v, want ErrConflict", err)
	}
	if err := d.FinishRun(ctx, engine.Finish{RunID: "run_1", OwnerID: "owner_a", Attempt: 1, Status: engine.StatusSucceeded, Now: 20002}); !errors.Is(err, engine.ErrConflict) {
		t.Errorf("stale FinishRun = %v, want ErrConflict", err)
	}
	ids, err := d.Heartbeat(ctx, engine.HeartbeatParams{OwnerID: "owner_a", Now: 20003, LeaseUntil: 40000, Held: []engine.HeldRun{{RunID: "run_1", Attempt: 1}}})
	if err != nil || len(ids) != 0 {
		t.Errorf("stale Heartbeat = %v, %v; want no run extended", ids, err)
	}
	items, _ := d.ListItems(ctx, "run_1")
	if len(items) != 0 {
		t.Fatalf("the stale execution stored %d checkpoints", len(items))
	}
	cur := engine.Holder{OwnerID: "owner_a", Attempt: 2}
	if err := d.SaveItem(ctx, "run_1", cur, item, engine.Progress{DoneSteps: 1}, 20004); err != nil {
		t.Fatalf("current SaveItem: %v", err)
	}
	ids, err = d.Heartbeat(ctx, engine.HeartbeatParams{OwnerID: "owner_a", Now: 20005, LeaseUntil: 40000, Held: []engine.HeldRun{{RunID: "run_1", Attempt: 2}}})
	if err != nil || !reflect.DeepEqual(ids, []string{"run_1"}) {
		t.Fatalf("current Heartbeat = %v, %v", ids, err)
	}
	if err := d.FinishRun(ctx, engine.Finish{RunID: "run_1", OwnerID: "owner_a", Attempt: 2, Status: engine.StatusSucceeded, Now: 20006}); err != nil {
		t.Fatalf("current FinishRun: %v", err)
	}
}

// TestHeartbeatLeavesUnexecutedRunsToExpire: a running row of this owner
// that the process no longer executes (its final write failed) is not
// extended, so its lease runs out and it can be recovered.
func TestHeartbeatLeavesUnexecutedRunsToExpire(t *testing.T) {
	ctx := context.Background()
	d := newDB(t)
	mustCreate(t, d, queuedRun("run_1", 1))
	mustClaimOne(t, d, "owner_a", 10)
	if ids, err := d.Heartbeat(ctx, engine.HeartbeatParams{OwnerID: "owner_a", Now: 20, LeaseUntil: 99999}); err != nil || len(ids) != 0 {
		t.Fatalf("Heartbeat = %v, %v", ids, err)
	}
	r, _ := d.GetRun(ctx, "run_1")
	if r.LeaseExpiresAt != 15010 {
		t.Fatalf("lease = %d, want the claim's 15010 (not extended)", r.LeaseExpiresAt)
	}
	exp, err := d.ExpiredLeases(ctx, 15010)
	if err != nil || len(exp) != 1 {
		t.Fatalf("ExpiredLeases = %d runs, %v", len(exp), err)
	}
}
