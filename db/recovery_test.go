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
	evs, _ := d.ListEvents(ctx, engine.ListEventsParams{RunID: "run_2"})
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

// TestFailOrphanedSessionRuns: queued runs bound to a session whose owner
// row is gone fail with the given error (terminal timestamps, a status
// event) and such sessions close; live owners' runs and sessions, unbound
// runs and anything younger than the bound stay as they are.
func TestFailOrphanedSessionRuns(t *testing.T) {
	ctx := context.Background()
	d := newDB(t)
	if err := d.RegisterOwner(ctx, engine.Owner{ID: "owner_live", PID: 1, Host: "h", StartedAt: 1, HeartbeatAt: 1}); err != nil {
		t.Fatal(err)
	}
	for _, s := range []engine.Session{
		{ID: "sess_live", OwnerID: "owner_live", CreatedAt: 10, LastUsedAt: 10, ExpiresAt: 10000},
		{ID: "sess_dead", OwnerID: "owner_gone", CreatedAt: 10, LastUsedAt: 10, ExpiresAt: 10000},
		{ID: "sess_young", OwnerID: "owner_gone", CreatedAt: 95, LastUsedAt: 95, ExpiresAt: 10000},
	} {
		if err := d.PutSession(ctx, s); err != nil {
			t.Fatal(err)
		}
	}
	for _, r := range []struct {
		id, owner string
		created   int64
	}{{"run_dead", "owner_gone", 10}, {"run_live", "owner_live", 10}, {"run_free", "", 10}, {"run_young", "owner_gone", 95}} {
		q := queuedRun(r.id, r.created)
		q.SessionOwnerID = r.owner
		mustCreate(t, d, q)
	}
	lost := engine.Errorf(engine.SessionNotFound, "the session was lost")
	ids, err := d.FailOrphanedSessionRuns(ctx, engine.FailOrphansParams{Error: lost, Now: 100, OlderThan: 90, RunTTLMs: 500})
	if err != nil || len(ids) != 1 || ids[0] != "run_dead" {
		t.Fatalf("FailOrphanedSessionRuns = %v, %v; want [run_dead]", ids, err)
	}
	r, _ := d.GetRun(ctx, "run_dead")
	if r.Status != engine.StatusFailed || !reflect.DeepEqual(r.Error, lost) || r.FinishedAt == nil || *r.FinishedAt != 100 || r.ExpiresAt != 1010 {
		t.Fatalf("orphaned run = %+v (error %+v)", r, r.Error)
	}
	evs, _ := d.ListEvents(ctx, engine.ListEventsParams{RunID: "run_dead"})
	if last := evs[len(evs)-1]; last.Type != "status" || string(last.Data) != `{"status":"failed"}` {
		t.Fatalf("last event of run_dead = %+v", last)
	}
	for _, id := range []string{"run_live", "run_free", "run_young"} {
		if r, _ := d.GetRun(ctx, id); r.Status != engine.StatusQueued {
			t.Errorf("%s = %s, want queued", id, r.Status)
		}
	}
	// GetSession answers ErrNotFound for a closed session.
	for id, closed := range map[string]bool{"sess_dead": true, "sess_live": false, "sess_young": false} {
		s, err := d.GetSession(ctx, id)
		if closed != errors.Is(err, engine.ErrNotFound) || (!closed && (err != nil || s.ClosedAt != nil)) {
			t.Errorf("session %s = %+v, %v; want closed %v", id, s, err, closed)
		}
	}
	if ids, err := d.FailOrphanedSessionRuns(ctx, engine.FailOrphansParams{Error: lost, Now: 200, OlderThan: 190, RunTTLMs: 500}); err != nil || len(ids) != 1 || ids[0] != "run_young" {
		t.Fatalf("second pass = %v, %v; want [run_young] (now old enough)", ids, err)
	}
}
