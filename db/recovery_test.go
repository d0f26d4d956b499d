package db

import (
	"context"
	"errors"
	"reflect"
	"testing"

	"github.com/browsertask/browsertask/engine"
)

func TestRecovery(t *testing.T) {
	ctx := context.Background()
	d := newDB(t)
	for _, id := range []string{"run_1", "run_2", "run_3"} {
		mustCreate(t, d, queuedRun(id, 1))
	}
	// owner_a holds run_1 and run_2 until 100; owner_b holds run_3 until 1000.
	if _, err := d.ClaimRuns(ctx, engine.Claim{OwnerID: "owner_a", Now: 10, LeaseUntil: 100, MaxRunning: 5, Max: 2}); err != nil {
		t.Fatal(err)
	}
	if _, err := d.ClaimRuns(ctx, engine.Claim{OwnerID: "owner_b", Now: 10, LeaseUntil: 1000, MaxRunning: 5, Max: 1}); err != nil {
		t.Fatal(err)
	}
	expired, err := d.ExpiredLeases(ctx, 99)
	if err != nil || len(expired) != 0 {
		t.Fatalf("ExpiredLeases(99) = %v, %v; want none", expired, err)
	}
	expired, err = d.ExpiredLeases(ctx, 100)
	if err != nil || len(expired) != 2 || expired[0].RunID != "run_1" || expired[1].RunID != "run_2" {
		t.Fatalf("ExpiredLeases(100) = %v, %v; want run_1, run_2", expired, err)
	}
	// A live lease cannot be recovered.
	err = d.RecoverRun(ctx, engine.Recovery{RunID: "run_3", OwnerID: "owner_b", To: engine.StatusQueued, Now: 100})
	if !errors.Is(err, engine.ErrConflict) {
		t.Fatalf("RecoverRun of a live lease = %v, want ErrConflict", err)
	}
	// Wrong owner (someone else already recovered and re-claimed) conflicts.
	err = d.RecoverRun(ctx, engine.Recovery{RunID: "run_1", OwnerID: "owner_x", To: engine.StatusQueued, Now: 100})
	if !errors.Is(err, engine.ErrConflict) {
		t.Fatalf("RecoverRun by wrong owner = %v, want ErrConflict", err)
	}
	// Resumable: back to queued, attempt kept for the next claim to increment.
	if err := d.RecoverRun(ctx, engine.Recovery{RunID: "run_1", OwnerID: "owner_a", To: engine.StatusQueued, Now: 100}); err != nil {
		t.Fatal(err)
	}
	r1, _ := d.GetRun(ctx, "run_1")
	if r1.Status != engine.StatusQueued || r1.Attempt != 1 || r1.OwnerID != "" || r1.LeaseExpiresAt != 0 || r1.FinishedAt != nil {
		t.Fatalf("recovered to queued = %+v", r1)
	}
	// The second recovery of the same run loses the CAS.
	err = d.RecoverRun(ctx, engine.Recovery{RunID: "run_1", OwnerID: "owner_a", To: engine.StatusQueued, Now: 101})
	if !errors.Is(err, engine.ErrConflict) {
		t.Fatalf("double recovery = %v, want ErrConflict", err)
	}
	again := mustClaimOne(t, d, "owner_b", 200)
	if again.RunID != "run_1" || again.Attempt != 2 {
		t.Fatalf("reclaim = %+v; want run_1 attempt 2", again)
	}
	// Not resumable: failed with the error.
	ferr := engine.Errorf(engine.ExecutionError, "interrupted: the process running it stopped")
	if err := d.RecoverRun(ctx, engine.Recovery{RunID: "run_2", OwnerID: "owner_a", To: engine.StatusFailed,
		Error: ferr, Now: 150, RunTTLMs: 500}); err != nil {
		t.Fatal(err)
	}
	r2, _ := d.GetRun(ctx, "run_2")
	if r2.Status != engine.StatusFailed || !reflect.DeepEqual(r2.Error, ferr) || r2.FinishedAt == nil ||
		*r2.FinishedAt != 150 || r2.ExpiresAt != 1001 {
		t.Fatalf("recovered to failed = %+v (error %+v)", r2, r2.Error)
	}
	if err := d.RecoverRun(ctx, engine.Recovery{RunID: "run_2", OwnerID: "owner_a", To: engine.StatusSucceeded, Now: 150}); err == nil {
		t.Fatal("RecoverRun to succeeded accepted; want an error")
	}
	evs, _ := d.ListEvents(ctx, "run_2", 0, 0)
	if last := evs[len(evs)-1]; last.Type != "status" || string(last.Data) != `{"status":"failed","attempt":1}` {
		t.Fatalf("last event of run_2 = %+v", last)
	}

	// ReleaseOwner expires owner_b's leases at once and removes its row.
	if err := d.RegisterOwner(ctx, engine.Owner{ID: "owner_b", PID: 7, Host: "h", StartedAt: 5, HeartbeatAt: 5}); err != nil {
		t.Fatal(err)
	}
	if err := d.ReleaseOwner(ctx, "owner_b", 300); err != nil {
		t.Fatal(err)
	}
	expired, err = d.ExpiredLeases(ctx, 300)
	if err != nil || len(expired) != 2 {
		t.Fatalf("ExpiredLeases after release = %v, %v; want run_1 and run_3", expired, err)
	}
	for _, r := range expired {
		if r.LeaseExpiresAt != 300 || r.OwnerID != "owner_b" {
			t.Errorf("released run %+v", r)
		}
	}
	if owners, _ := d.ListOwners(ctx); len(owners) != 0 {
		t.Errorf("owners after release = %+v", owners)
	}
	cerr := engine.Errorf(engine.RunCanceled, "canceled")
	if err := d.RecoverRun(ctx, engine.Recovery{RunID: "run_3", OwnerID: "owner_b", To: engine.StatusCanceled,
		Error: cerr, Now: 300}); err != nil {
		t.Fatal(err)
	}
	if r3, _ := d.GetRun(ctx, "run_3"); r3.Status != engine.StatusCanceled || r3.Error.Code != engine.RunCanceled {
		t.Fatalf("recovered to canceled = %+v", r3)
	}
}
