package storetest

import (
	"fmt"
	"reflect"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/browsertask/browsertask/engine"
)

// testClaim: ClaimRuns hands out queued runs oldest first, never more than
// the global limit of live-leased running runs across every process, and
// never the same run twice; each claim is a new attempt.
func testClaim(t *testing.T, nh func(t *testing.T) Harness) {
	t.Run("GlobalLimitAcrossHandles", func(t *testing.T) {
		h := nh(t)
		handles := []engine.Store{h.Store, peer(t, h)}
		const total, maxRunning, workers = 20, 2, 4
		now := base + 1000
		for i := range total {
			mustCreate(t, handles[0], queuedRun(fmt.Sprintf("run_%02d", i), base+int64(i)))
		}
		var (
			inFlight, peak, finished atomic.Int64
			stop                     atomic.Bool
			claimedBy                sync.Map
			wg                       sync.WaitGroup
			errs                     = make(chan error, workers)
		)
		fail := func(err error) {
			stop.Store(true)
			errs <- err
		}
		for w := range workers { // two owners per handle, as two processes with two claim loops each
			wg.Add(1)
			go func() {
				defer wg.Done()
				s := handles[w%2]
				owner := fmt.Sprintf("owner_%d", w)
				last := int64(-1)
				for finished.Load() < total && !stop.Load() {
					runs, err := s.ClaimRuns(t.Context(), engine.Claim{OwnerID: owner, Now: now,
						LeaseUntil: now + 1_000_000, MaxRunning: maxRunning, Max: 1})
					if err != nil {
						fail(err)
						return
					}
					if len(runs) > 1 {
						fail(fmt.Errorf("claim with Max 1 returned %d runs", len(runs)))
						return
					}
					for _, r := range runs {
						if prev, dup := claimedBy.LoadOrStore(r.RunID, owner); dup {
							fail(fmt.Errorf("run %s claimed by %s and %s", r.RunID, prev, owner))
							return
						}
						// Oldest first: whatever this worker claims later
						// was created later than what it claimed before.
						if r.CreatedAt <= last {
							fail(fmt.Errorf("%s claimed %s (created %d) after one created %d", owner, r.RunID, r.CreatedAt, last))
							return
						}
						last = r.CreatedAt
						if r.Status != engine.StatusRunning || r.OwnerID != owner || r.Attempt != 1 ||
							r.StartedAt == nil || *r.StartedAt != now || r.LeaseExpiresAt != now+1_000_000 {
							fail(fmt.Errorf("claimed run %+v", r))
							return
						}
						n := inFlight.Add(1)
						for p := peak.Load(); n > p && !peak.CompareAndSwap(p, n); p = peak.Load() {
						}
						_, running, err := s.ListRuns(t.Context(), engine.RunFilter{Status: engine.StatusRunning, Now: now, Limit: 1})
						if err != nil {
							fail(err)
							return
						}
						if running > maxRunning {
							fail(fmt.Errorf("%d runs running, limit %d", running, maxRunning))
							return
						}
						// Leave the in-flight count before the finish commits,
						// so the counter never exceeds what the store holds.
						inFlight.Add(-1)
						if err := s.FinishRun(t.Context(), engine.Finish{RunID: r.RunID, OwnerID: owner, Attempt: 1,
							Status: engine.StatusSucceeded, Now: now, RunTTLMs: 1000}); err != nil {
							fail(err)
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
		if p := peak.Load(); p < 1 || p > maxRunning {
			t.Errorf("peak in-flight = %d, want 1..%d", p, maxRunning)
		}
		_, n, err := handles[1].ListRuns(t.Context(), engine.RunFilter{Status: engine.StatusSucceeded, Now: now})
		if err != nil || n != total {
			t.Errorf("succeeded runs = %d, %v; want %d (none lost)", n, err, total)
		}
	})

	t.Run("OldestFirstLimitsLeasesAndSessions", func(t *testing.T) {
		s := nh(t).Store
		ctx := t.Context()
		for _, r := range []*engine.Run{queuedRun("run_c", base+10), queuedRun("run_b", base+10), queuedRun("run_a", base+20)} {
			mustCreate(t, s, r)
		}
		bound := queuedRun("run_0bound", base+1)
		bound.SessionOwnerID = "owner_b"
		mustCreate(t, s, bound)

		// Oldest first by created_at then id; owner_a skips the run bound
		// to owner_b's session; the limit of 2 stops the third.
		runs, err := s.ClaimRuns(ctx, engine.Claim{OwnerID: "owner_a", Now: base + 100, LeaseUntil: base + 500, MaxRunning: 2, Max: 5})
		if err != nil {
			t.Fatal(err)
		}
		if want := []string{"run_b", "run_c"}; !reflect.DeepEqual(runIDs(runs), want) {
			t.Fatalf("claimed %v, want %v (oldest first, limit 2)", runIDs(runs), want)
		}
		for _, r := range runs {
			if r.Status != engine.StatusRunning || r.Attempt != 1 || r.OwnerID != "owner_a" || r.LeaseExpiresAt != base+500 ||
				r.StartedAt == nil || *r.StartedAt != base+100 || r.UpdatedAt != base+100 {
				t.Errorf("claimed %+v", r)
			}
		}
		// The limit counts every owner's live leases.
		runs, err = s.ClaimRuns(ctx, engine.Claim{OwnerID: "owner_b", Now: base + 499, LeaseUntil: base + 900, MaxRunning: 2, Max: 5})
		if err != nil || len(runs) != 0 {
			t.Fatalf("claim at the limit = %v, %v; want none", runIDs(runs), err)
		}
		// Expired leases (lease_expires_at <= now) do not count: at 500 both
		// slots are free, and owner_b gets its bound run first (oldest).
		runs, err = s.ClaimRuns(ctx, engine.Claim{OwnerID: "owner_b", Now: base + 500, LeaseUntil: base + 900, MaxRunning: 2, Max: 5})
		if err != nil || !reflect.DeepEqual(runIDs(runs), []string{"run_0bound", "run_a"}) {
			t.Fatalf("claim after lease expiry = %v, %v; want [run_0bound run_a]", runIDs(runs), err)
		}
		// Max bounds one call below the free slots.
		mustCreate(t, s, queuedRun("run_d", base+30))
		mustCreate(t, s, queuedRun("run_e", base+31))
		runs, err = s.ClaimRuns(ctx, engine.Claim{OwnerID: "owner_a", Now: base + 1000, LeaseUntil: base + 2000, MaxRunning: 10, Max: 1})
		if err != nil || !reflect.DeepEqual(runIDs(runs), []string{"run_d"}) {
			t.Fatalf("claim with Max 1 = %v, %v; want [run_d]", runIDs(runs), err)
		}
		// The claim appended a status event with the attempt.
		evs := events(t, s, "run_d")
		if !reflect.DeepEqual(eventTypes(evs), []string{"created", "status"}) {
			t.Fatalf("events of run_d = %v", eventTypes(evs))
		}
		checkJSON(t, "claim event", evs[1].Data, `{"status":"running","attempt":1}`)
		if evs[1].At != base+1000 {
			t.Errorf("claim event at %d, want %d", evs[1].At, base+1000)
		}
	})

	t.Run("EmptyQueueClaimsNothing", func(t *testing.T) {
		s := nh(t).Store
		runs, err := s.ClaimRuns(t.Context(), engine.Claim{OwnerID: "o", Now: base, LeaseUntil: base + 10, MaxRunning: 5, Max: 5})
		if err != nil || len(runs) != 0 {
			t.Fatalf("ClaimRuns on an empty store = %v, %v", runIDs(runs), err)
		}
	})

	t.Run("AttemptGrowsStartedAtSetOnce", func(t *testing.T) {
		s := nh(t).Store
		ctx := t.Context()
		mustCreate(t, s, queuedRun("run_1", base))
		first := mustClaim(t, s, "owner_a", base+10)
		if first.Attempt != 1 || *first.StartedAt != base+10 {
			t.Fatalf("first claim: attempt %d, started %d", first.Attempt, *first.StartedAt)
		}
		if err := s.RequeueRun(ctx, "run_1", holder(first), base+20); err != nil {
			t.Fatal(err)
		}
		second := mustClaim(t, s, "owner_b", base+50)
		if second.Attempt != 2 || *second.StartedAt != base+10 || second.OwnerID != "owner_b" {
			t.Fatalf("second claim: attempt %d, started %d, owner %s; want 2, %d (kept), owner_b",
				second.Attempt, *second.StartedAt, second.OwnerID, base+10)
		}
		// Its process died: the lease ran out and it was recovered.
		if err := s.RecoverRun(ctx, engine.Recovery{RunID: "run_1", OwnerID: "owner_b", To: engine.StatusQueued,
			Now: second.LeaseExpiresAt}); err != nil {
			t.Fatal(err)
		}
		third := mustClaim(t, s, "owner_a", base+100_000)
		if third.Attempt != 3 || *third.StartedAt != base+10 || third.Crashes != 1 {
			t.Fatalf("third claim: attempt %d, started %d, crashes %d; want 3, %d, 1",
				third.Attempt, *third.StartedAt, third.Crashes, base+10)
		}
		evs := events(t, s, "run_1")
		want := []string{`{"status":"queued"}`, `{"status":"running","attempt":1}`, `{"status":"queued","attempt":1}`,
			`{"status":"running","attempt":2}`, `{"status":"queued","attempt":2}`, `{"status":"running","attempt":3}`}
		if len(evs) != len(want) {
			t.Fatalf("events = %v, want %d", eventTypes(evs), len(want))
		}
		for i, e := range evs {
			if typ := map[bool]string{true: "created", false: "status"}[i == 0]; e.Type != typ {
				t.Errorf("event %d is %q, want %q", e.Seq, e.Type, typ)
			}
			checkJSON(t, fmt.Sprintf("event %d", e.Seq), e.Data, want[i])
		}
	})
}
