package db

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"reflect"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/browsertask/browsertask/engine"
)

func TestClaimGlobalLimitAcrossHandles(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "bt.db")
	handles := []*DB{openTest(t, path), openTest(t, path)}
	const total, maxRunning, now = 20, 2, 1000
	for i := range total {
		mustCreate(t, handles[0], queuedRun(fmt.Sprintf("run_%02d", i), int64(i)))
	}
	var (
		inFlight, peak, finished atomic.Int64
		wg                       sync.WaitGroup
		errs                     = make(chan error, 8)
		claimedBy                sync.Map
	)
	for w := range 4 { // two workers per handle
		wg.Add(1)
		go func() {
			defer wg.Done()
			d := handles[w%2]
			owner := fmt.Sprintf("owner_%d", w)
			for finished.Load() < total {
				runs, err := d.ClaimRuns(ctx, engine.Claim{OwnerID: owner, Now: now,
					LeaseUntil: now + 1_000_000, MaxRunning: maxRunning, Max: 1})
				if err != nil {
					errs <- err
					return
				}
				for _, r := range runs {
					if _, dup := claimedBy.LoadOrStore(r.RunID, owner); dup {
						errs <- fmt.Errorf("run %s claimed twice", r.RunID)
						return
					}
					n := inFlight.Add(1)
					for p := peak.Load(); n > p && !peak.CompareAndSwap(p, n); p = peak.Load() {
					}
					var running int
					if err := d.r.QueryRowContext(ctx, `SELECT COUNT(*) FROM runs WHERE status = 'running'`).
						Scan(&running); err != nil {
						errs <- err
						return
					}
					if running > maxRunning {
						errs <- fmt.Errorf("%d runs running, limit %d", running, maxRunning)
						return
					}
					// Leave the in-flight count before the finish commits, so
					// the counter never exceeds what the database holds.
					inFlight.Add(-1)
					if err := d.FinishRun(ctx, engine.Finish{RunID: r.RunID, OwnerID: owner, Attempt: 1,
						Status: engine.StatusSucceeded, Result: json.RawMessage(`{}`), Now: now, RunTTLMs: 1000}); err != nil {
						errs <- err
						return
					}
					finished.Add(1)
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	if peak.Load() > maxRunning || peak.Load() < 1 {
		t.Errorf("peak in-flight = %d, want 1..%d", peak.Load(), maxRunning)
	}
	_, n, err := handles[1].ListRuns(ctx, engine.RunFilter{Status: engine.StatusSucceeded, Now: now})
	if err != nil || n != total {
		t.Errorf("succeeded runs = %d, %v; want %d (none lost)", n, err, total)
	}
}

func TestClaimFIFOLimitsLeasesAndSessions(t *testing.T) {
	ctx := context.Background()
	d := newDB(t)
	for _, r := range []*engine.Run{queuedRun("run_c", 10), queuedRun("run_b", 10), queuedRun("run_a", 20)} {
		mustCreate(t, d, r)
	}
	bound := queuedRun("run_0bound", 1)
	bound.SessionOwnerID = "owner_b"
	mustCreate(t, d, bound)

	// FIFO by created_at then id; owner_a skips owner_b's session-bound run.
	runs, err := d.ClaimRuns(ctx, engine.Claim{OwnerID: "owner_a", Now: 100, LeaseUntil: 500, MaxRunning: 2, Max: 5})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, r := range runs {
		got = append(got, r.RunID)
		if r.Status != engine.StatusRunning || r.Attempt != 1 || r.OwnerID != "owner_a" || r.LeaseExpiresAt != 500 {
			t.Errorf("claimed %+v", r)
		}
	}
	if want := []string{"run_b", "run_c"}; !reflect.DeepEqual(got, want) {
		t.Fatalf("claimed %v, want %v (FIFO, limit 2)", got, want)
	}
	// The limit is reached while the leases are live.
	if runs, err := d.ClaimRuns(ctx, engine.Claim{OwnerID: "owner_b", Now: 499, LeaseUntil: 900, MaxRunning: 2, Max: 5}); err != nil || len(runs) != 0 {
		t.Fatalf("claim at the limit = %d runs, %v; want 0", len(runs), err)
	}
	// Expired leases do not count: at 500 both slots are free again, and
	// owner_b gets its bound run first (oldest).
	runs, err = d.ClaimRuns(ctx, engine.Claim{OwnerID: "owner_b", Now: 500, LeaseUntil: 900, MaxRunning: 2, Max: 5})
	if err != nil || len(runs) != 2 || runs[0].RunID != "run_0bound" || runs[1].RunID != "run_a" {
		t.Fatalf("claim after lease expiry = %v, %v; want run_0bound, run_a", runs, err)
	}
	// Max bounds a single call.
	mustCreate(t, d, queuedRun("run_d", 30))
	mustCreate(t, d, queuedRun("run_e", 31))
	runs, err = d.ClaimRuns(ctx, engine.Claim{OwnerID: "owner_a", Now: 1000, LeaseUntil: 2000, MaxRunning: 10, Max: 1})
	if err != nil || len(runs) != 1 || runs[0].RunID != "run_d" {
		t.Fatalf("claim with Max 1 = %v, %v; want run_d", runs, err)
	}
	// A status event with the attempt was appended for the claim.
	evs, err := d.ListEvents(ctx, engine.ListEventsParams{RunID: "run_d"})
	if err != nil || len(evs) != 2 || evs[1].Type != "status" || string(evs[1].Data) != `{"status":"running","attempt":1}` {
		t.Fatalf("events of run_d = %+v, %v", evs, err)
	}
}

func TestHeartbeatAndRequeue(t *testing.T) {
	ctx := context.Background()
	d := newDB(t)
	if err := d.RegisterOwner(ctx, engine.Owner{ID: "owner_a", PID: 42, Host: "h", StartedAt: 1, HeartbeatAt: 1}); err != nil {
		t.Fatal(err)
	}
	mustCreate(t, d, queuedRun("run_1", 1))
	mustCreate(t, d, queuedRun("run_2", 2))
	mustClaimOne(t, d, "owner_a", 10)
	mustClaimOne(t, d, "owner_a", 10)
	if _, _, err := d.CancelRun(ctx, engine.CancelRunParams{RunID: "run_2", Reason: "stop", Error: engine.Errorf(engine.RunCanceled, "stop"), Now: 20}); err != nil {
		t.Fatal(err)
	}
	held := []engine.HeldRun{{RunID: "run_1", Attempt: 1}, {RunID: "run_2", Attempt: 1}, {RunID: "run_3", Attempt: 1}}
	ids, err := d.Heartbeat(ctx, engine.HeartbeatParams{OwnerID: "owner_a", Now: 30, LeaseUntil: 9999, Held: held})
	if err != nil || !reflect.DeepEqual(ids, []string{"run_1"}) {
		t.Fatalf("Heartbeat = %v, %v; want [run_1] (run_2 was cancelled, run_3 is not ours)", ids, err)
	}
	owners, err := d.ListOwners(ctx)
	if err != nil || len(owners) != 1 || owners[0].HeartbeatAt != 30 || owners[0].PID != 42 {
		t.Fatalf("owners = %+v, %v", owners, err)
	}
	r, _ := d.GetRun(ctx, "run_1")
	if r.LeaseExpiresAt != 9999 {
		t.Errorf("lease = %d, want 9999", r.LeaseExpiresAt)
	}
	if err := d.RequeueRun(ctx, "run_1", engine.Holder{OwnerID: "owner_b", Attempt: 1}, 40); !errors.Is(err, engine.ErrConflict) {
		t.Errorf("RequeueRun by non-owner = %v, want ErrConflict", err)
	}
	if err := d.RequeueRun(ctx, "run_1", engine.Holder{OwnerID: "owner_a", Attempt: 1}, 40); err != nil {
		t.Fatal(err)
	}
	r, _ = d.GetRun(ctx, "run_1")
	if r.Status != engine.StatusQueued || r.OwnerID != "" || r.LeaseExpiresAt != 0 || r.Attempt != 1 || r.UpdatedAt != 40 {
		t.Fatalf("requeued run = %+v", r)
	}
	again := mustClaimOne(t, d, "owner_b", 50)
	if again.RunID != "run_1" || again.Attempt != 2 || *again.StartedAt != 10 {
		t.Fatalf("reclaimed run = %+v; want attempt 2, started_at kept at 10", again)
	}
	if err := d.RequeueRun(ctx, "run_nope", engine.Holder{OwnerID: "owner_a", Attempt: 1}, 40); !errors.Is(err, engine.ErrNotFound) {
		t.Errorf("RequeueRun(missing) = %v, want ErrNotFound", err)
	}
}
