package storetest

import (
	"cmp"
	"errors"
	"reflect"
	"slices"
	"sync"
	"testing"

	"github.com/browsertask/browsertask/engine"
)

// testLeases: owners heartbeat the leases of the runs they execute; a run
// whose lease ran out is recovered by exactly one process, and a run bound
// to a vanished process's session fails.
func testLeases(t *testing.T, nh func(t *testing.T) Harness) {
	t.Run("OwnersRegisterAndList", func(t *testing.T) {
		s := nh(t).Store
		ctx := t.Context()
		a := engine.Owner{ID: "owner_a", PID: 42, Host: "h1", StartedAt: base + 1, HeartbeatAt: base + 1, LiveURL: "http://127.0.0.1:7788"}
		b := engine.Owner{ID: "owner_b", PID: 7, Host: "h2", StartedAt: base + 2, HeartbeatAt: base + 2}
		for _, o := range []engine.Owner{a, b} {
			if err := s.RegisterOwner(ctx, o); err != nil {
				t.Fatal(err)
			}
		}
		// Registering again replaces the row (a restarted process reusing its id).
		a.PID, a.HeartbeatAt, a.LiveURL = 43, base+5, "http://127.0.0.1:41234"
		if err := s.RegisterOwner(ctx, a); err != nil {
			t.Fatal(err)
		}
		owners, err := s.ListOwners(ctx)
		if err != nil {
			t.Fatal(err)
		}
		slices.SortFunc(owners, func(x, y engine.Owner) int { return cmp.Compare(x.ID, y.ID) })
		if !reflect.DeepEqual(owners, []engine.Owner{a, b}) {
			t.Fatalf("ListOwners = %+v, want %+v", owners, []engine.Owner{a, b})
		}
	})

	t.Run("HeartbeatExtendsOnlyHeldRuns", func(t *testing.T) {
		s := nh(t).Store
		ctx := t.Context()
		if err := s.RegisterOwner(ctx, engine.Owner{ID: "owner_a", PID: 42, Host: "h", StartedAt: base, HeartbeatAt: base}); err != nil {
			t.Fatal(err)
		}
		for i, id := range []string{"run_1", "run_2", "run_4", "run_5", "run_6"} {
			mustCreate(t, s, queuedRun(id, base+int64(i)))
		}
		for _, owner := range []string{"owner_a", "owner_a", "owner_b", "owner_a", "owner_a"} {
			mustClaim(t, s, owner, base+10) // leases until base+15010
		}
		mustCreate(t, s, queuedRun("run_7", base+7)) // stays queued
		if _, _, err := s.CancelRun(ctx, engine.CancelRunParams{RunID: "run_2", Reason: "stop",
			Error: engine.Errorf(engine.RunCanceled, "stop"), Now: base + 20}); err != nil {
			t.Fatal(err)
		}
		// Held: run_1 (extended); run_2 canceled; run_3 unknown; run_4 is
		// owner_b's; run_6 in another attempt. run_5 is owner_a's but not
		// executed any more (its final write failed): not listed, not extended.
		held := []engine.HeldRun{{RunID: "run_1", Attempt: 1}, {RunID: "run_2", Attempt: 1}, {RunID: "run_3", Attempt: 1},
			{RunID: "run_4", Attempt: 1}, {RunID: "run_6", Attempt: 2}}
		ids, err := s.Heartbeat(ctx, engine.HeartbeatParams{OwnerID: "owner_a", Now: base + 30, LeaseUntil: base + 99_999, Held: held})
		if err != nil || !reflect.DeepEqual(ids, []string{"run_1"}) {
			t.Fatalf("Heartbeat = %v, %v; want [run_1]", ids, err)
		}
		owners, err := s.ListOwners(ctx)
		if err != nil || len(owners) != 1 || owners[0].HeartbeatAt != base+30 || owners[0].PID != 42 || owners[0].StartedAt != base {
			t.Fatalf("owners after heartbeat = %+v, %v", owners, err)
		}
		leases := map[string]int64{"run_1": base + 99_999, "run_4": base + 15_010, "run_5": base + 15_010, "run_6": base + 15_010}
		for id, want := range leases {
			if r := mustGet(t, s, id); r.LeaseExpiresAt != want || r.Status != engine.StatusRunning {
				t.Errorf("%s: %s, lease %d; want running, lease %d", id, r.Status, r.LeaseExpiresAt, want)
			}
		}
		// Only running runs whose lease_expires_at <= now are expired.
		checkExpired(t, s, base+15_009, nil)
		checkExpired(t, s, base+15_010, []string{"run_4", "run_5", "run_6"})
		checkExpired(t, s, base+99_999, []string{"run_1", "run_4", "run_5", "run_6"})
		ids, err = s.Heartbeat(ctx, engine.HeartbeatParams{OwnerID: "owner_a", Now: base + 40, LeaseUntil: base + 50, Held: nil})
		if err != nil || len(ids) != 0 {
			t.Fatalf("Heartbeat with nothing held = %v, %v; want none", ids, err)
		}
	})

	t.Run("RecoverToQueuedIsCompareAndSet", func(t *testing.T) {
		s := nh(t).Store
		ctx := t.Context()
		for _, id := range []string{"run_1", "run_2"} {
			mustCreate(t, s, queuedRun(id, base))
		}
		if _, err := s.ClaimRuns(ctx, engine.Claim{OwnerID: "owner_a", Now: base + 10, LeaseUntil: base + 100, MaxRunning: 5, Max: 1}); err != nil {
			t.Fatal(err)
		}
		if _, err := s.ClaimRuns(ctx, engine.Claim{OwnerID: "owner_b", Now: base + 10, LeaseUntil: base + 1000, MaxRunning: 5, Max: 1}); err != nil {
			t.Fatal(err)
		}
		// A live lease cannot be recovered, not even by its owner id.
		err := s.RecoverRun(ctx, engine.Recovery{RunID: "run_2", OwnerID: "owner_b", To: engine.StatusQueued, Now: base + 999})
		checkErr(t, "RecoverRun of a live lease", err, engine.ErrConflict)
		err = s.RecoverRun(ctx, engine.Recovery{RunID: "run_1", OwnerID: "owner_a", To: engine.StatusQueued, Now: base + 99})
		checkErr(t, "RecoverRun 1 ms before the lease ends", err, engine.ErrConflict)
		// Another owner id (the run was recovered and claimed again meanwhile) conflicts.
		err = s.RecoverRun(ctx, engine.Recovery{RunID: "run_1", OwnerID: "owner_x", To: engine.StatusQueued, Now: base + 100})
		checkErr(t, "RecoverRun naming another owner", err, engine.ErrConflict)
		if r := mustGet(t, s, "run_1"); r.Status != engine.StatusRunning || r.Crashes != 0 {
			t.Fatalf("run_1 after refused recoveries = %+v", r)
		}
		// Resumable: back to queued, owner and lease cleared, attempt kept
		// for the next claim to increment, one crash counted.
		if err := s.RecoverRun(ctx, engine.Recovery{RunID: "run_1", OwnerID: "owner_a", To: engine.StatusQueued, Now: base + 100}); err != nil {
			t.Fatal(err)
		}
		r := mustGet(t, s, "run_1")
		if r.Status != engine.StatusQueued || r.Attempt != 1 || r.Crashes != 1 || r.OwnerID != "" || r.LeaseExpiresAt != 0 ||
			r.FinishedAt != nil || r.Error != nil {
			t.Fatalf("recovered to queued = %+v", r)
		}
		evs := events(t, s, "run_1")
		checkJSON(t, "recovery event", evs[len(evs)-1].Data, `{"status":"queued","attempt":1}`)
		err = s.RecoverRun(ctx, engine.Recovery{RunID: "run_1", OwnerID: "owner_a", To: engine.StatusQueued, Now: base + 101})
		checkErr(t, "second recovery", err, engine.ErrConflict)
		if r := mustGet(t, s, "run_1"); r.Crashes != 1 {
			t.Fatalf("crashes after a refused second recovery = %d, want 1", r.Crashes)
		}
		again := mustClaim(t, s, "owner_b", base+200)
		if again.RunID != "run_1" || again.Attempt != 2 || again.Crashes != 1 {
			t.Fatalf("reclaim = %+v; want run_1, attempt 2, crashes 1", again)
		}
	})

	t.Run("RecoverToFailedOrCanceled", func(t *testing.T) {
		s := nh(t).Store
		ctx := t.Context()
		for _, id := range []string{"run_1", "run_2"} {
			mustCreate(t, s, queuedRun(id, base+1))
		}
		if _, err := s.ClaimRuns(ctx, engine.Claim{OwnerID: "owner_a", Now: base + 10, LeaseUntil: base + 100, MaxRunning: 5, Max: 2}); err != nil {
			t.Fatal(err)
		}
		ferr := engine.Errorf(engine.ExecutionError, "interrupted: the process running it stopped")
		if err := s.RecoverRun(ctx, engine.Recovery{RunID: "run_1", OwnerID: "owner_a", To: engine.StatusFailed,
			Error: ferr, Now: base + 150, RunTTLMs: 5000}); err != nil {
			t.Fatal(err)
		}
		r := mustGet(t, s, "run_1")
		if r.Status != engine.StatusFailed || !reflect.DeepEqual(r.Error, ferr) || r.FinishedAt == nil ||
			*r.FinishedAt != base+150 || r.ExpiresAt != base+5150 || r.Crashes != 1 || r.Attempt != 1 {
			t.Fatalf("recovered to failed = %+v (error %+v)", r, r.Error)
		}
		evs := events(t, s, "run_1")
		checkJSON(t, "failed recovery event", evs[len(evs)-1].Data, `{"status":"failed","attempt":1}`)
		// A terminal run is not recovered again.
		err := s.RecoverRun(ctx, engine.Recovery{RunID: "run_1", OwnerID: "owner_a", To: engine.StatusQueued, Now: base + 160})
		checkErr(t, "RecoverRun of a failed run", err, engine.ErrConflict)

		cerr := engine.Errorf(engine.RunCanceled, "canceled")
		if err := s.RecoverRun(ctx, engine.Recovery{RunID: "run_2", OwnerID: "owner_a", To: engine.StatusSucceeded, Now: base + 150}); err == nil {
			t.Fatal("RecoverRun to succeeded accepted; want an error")
		}
		if err := s.RecoverRun(ctx, engine.Recovery{RunID: "run_2", OwnerID: "owner_a", To: engine.StatusCanceled,
			Error: cerr, Now: base + 150, RunTTLMs: 10}); err != nil {
			t.Fatal(err)
		}
		r = mustGet(t, s, "run_2")
		if r.Status != engine.StatusCanceled || !reflect.DeepEqual(r.Error, cerr) || *r.FinishedAt != base+150 ||
			r.ExpiresAt != base+1001 || r.Crashes != 1 {
			t.Fatalf("recovered to canceled = %+v", r)
		}
	})

	t.Run("ConcurrentRecoveryOneWinner", func(t *testing.T) {
		h := nh(t)
		handles := []engine.Store{h.Store, peer(t, h)}
		ctx := t.Context()
		mustCreate(t, handles[0], queuedRun("run_1", base))
		claimed := mustClaim(t, handles[0], "owner_dead", base+10)
		const n = 8
		errs := make([]error, n)
		to := func(i int) engine.RunStatus {
			return []engine.RunStatus{engine.StatusQueued, engine.StatusFailed}[i%2]
		}
		start := make(chan struct{})
		var wg sync.WaitGroup
		for i := range n {
			wg.Add(1)
			go func() {
				defer wg.Done()
				<-start
				errs[i] = handles[i/2%2].RecoverRun(ctx, engine.Recovery{RunID: "run_1", OwnerID: "owner_dead", To: to(i),
					Error: engine.Errorf(engine.ExecutionError, "interrupted"), Now: claimed.LeaseExpiresAt, RunTTLMs: 1000})
			}()
		}
		close(start)
		wg.Wait()
		winner := -1
		for i, err := range errs {
			switch {
			case err == nil && winner >= 0:
				t.Fatalf("recoveries %d and %d both succeeded", winner, i)
			case err == nil:
				winner = i
			case !errors.Is(err, engine.ErrConflict):
				t.Errorf("losing recovery %d = %v, want ErrConflict", i, err)
			}
		}
		if winner < 0 {
			t.Fatal("no recovery succeeded")
		}
		r := mustGet(t, handles[1], "run_1")
		if r.Status != to(winner) || r.Crashes != 1 || r.Attempt != 1 {
			t.Fatalf("recovered run = %s, crashes %d, attempt %d; want %s, 1, 1", r.Status, r.Crashes, r.Attempt, to(winner))
		}
		if types := eventTypes(events(t, handles[1], "run_1")); len(types) != 3 {
			t.Fatalf("events %v; want created, running and one recovery", types)
		}
	})

	t.Run("ReleaseOwnerExpiresItsLeases", func(t *testing.T) {
		s := nh(t).Store
		ctx := t.Context()
		for _, o := range []string{"owner_a", "owner_b"} {
			if err := s.RegisterOwner(ctx, engine.Owner{ID: o, PID: 1, Host: "h", StartedAt: base, HeartbeatAt: base}); err != nil {
				t.Fatal(err)
			}
		}
		for i, id := range []string{"run_a1", "run_a2", "run_b"} {
			mustCreate(t, s, queuedRun(id, base+int64(i)))
		}
		mustClaim(t, s, "owner_a", base+10)
		mustClaim(t, s, "owner_a", base+10)
		mustClaim(t, s, "owner_b", base+10)
		if err := s.ReleaseOwner(ctx, "owner_a", base+300); err != nil {
			t.Fatal(err)
		}
		owners, err := s.ListOwners(ctx)
		if err != nil || len(owners) != 1 || owners[0].ID != "owner_b" {
			t.Fatalf("owners after release = %+v, %v; want owner_b only", owners, err)
		}
		checkExpired(t, s, base+300, []string{"run_a1", "run_a2"})
		for _, id := range []string{"run_a1", "run_a2"} {
			if r := mustGet(t, s, id); r.LeaseExpiresAt != base+300 || r.OwnerID != "owner_a" || r.Status != engine.StatusRunning {
				t.Errorf("released run %+v", r)
			}
		}
		if r := mustGet(t, s, "run_b"); r.LeaseExpiresAt != base+15_010 {
			t.Errorf("owner_b's lease = %d, want %d (untouched)", r.LeaseExpiresAt, base+15_010)
		}
		// The released runs are recoverable at once.
		if err := s.RecoverRun(ctx, engine.Recovery{RunID: "run_a1", OwnerID: "owner_a", To: engine.StatusQueued, Now: base + 300}); err != nil {
			t.Fatalf("RecoverRun of a released run: %v", err)
		}
	})

	t.Run("FailOrphanedSessionRuns", func(t *testing.T) {
		// Queued runs bound to a session whose owner row is gone fail (with
		// terminal timestamps and a status event) and such sessions close;
		// live owners' runs and sessions, unbound runs and anything younger
		// than the bound stay.
		s := nh(t).Store
		ctx := t.Context()
		if err := s.RegisterOwner(ctx, engine.Owner{ID: "owner_live", PID: 1, Host: "h", StartedAt: base, HeartbeatAt: base}); err != nil {
			t.Fatal(err)
		}
		for _, ss := range []engine.Session{
			{ID: "sess_live", OwnerID: "owner_live", CreatedAt: base + 10, LastUsedAt: base + 10, ExpiresAt: base + 10000},
			{ID: "sess_dead", OwnerID: "owner_gone", CreatedAt: base + 10, LastUsedAt: base + 10, ExpiresAt: base + 10000},
			{ID: "sess_young", OwnerID: "owner_gone", CreatedAt: base + 95, LastUsedAt: base + 95, ExpiresAt: base + 10000},
		} {
			if err := s.PutSession(ctx, ss); err != nil {
				t.Fatal(err)
			}
		}
		for _, r := range []struct {
			id, owner string
			created   int64
		}{{"run_dead", "owner_gone", 10}, {"run_live", "owner_live", 10}, {"run_free", "", 10}, {"run_young", "owner_gone", 95}} {
			q := queuedRun(r.id, base+r.created)
			q.SessionOwnerID = r.owner
			mustCreate(t, s, q)
		}
		lost := engine.Errorf(engine.SessionNotFound, "the session was lost")
		ids, err := s.FailOrphanedSessionRuns(ctx, engine.FailOrphansParams{Error: lost, Now: base + 100, OlderThan: base + 90, RunTTLMs: 5000})
		if err != nil || !reflect.DeepEqual(ids, []string{"run_dead"}) {
			t.Fatalf("FailOrphanedSessionRuns = %v, %v; want [run_dead]", ids, err)
		}
		r := mustGet(t, s, "run_dead")
		if r.Status != engine.StatusFailed || !reflect.DeepEqual(r.Error, lost) || r.FinishedAt == nil ||
			*r.FinishedAt != base+100 || r.ExpiresAt != base+5100 {
			t.Fatalf("orphaned run = %+v (error %+v)", r, r.Error)
		}
		evs := events(t, s, "run_dead")
		if last := evs[len(evs)-1]; last.Type != "status" || last.At != base+100 {
			t.Fatalf("last event of run_dead = %+v", last)
		}
		checkJSON(t, "orphan event", evs[len(evs)-1].Data, `{"status":"failed"}`)
		for _, id := range []string{"run_live", "run_free", "run_young"} {
			if r := mustGet(t, s, id); r.Status != engine.StatusQueued {
				t.Errorf("%s = %s, want queued", id, r.Status)
			}
		}
		for id, closed := range map[string]bool{"sess_dead": true, "sess_live": false, "sess_young": false} {
			ss, err := s.GetSession(ctx, id)
			if closed != errors.Is(err, engine.ErrNotFound) || (!closed && (err != nil || ss.ClosedAt != nil)) {
				t.Errorf("session %s = %+v, %v; want closed %v", id, ss, err, closed)
			}
		}
		ids, err = s.FailOrphanedSessionRuns(ctx, engine.FailOrphansParams{Error: lost, Now: base + 200, OlderThan: base + 190, RunTTLMs: 5000})
		if err != nil || !reflect.DeepEqual(ids, []string{"run_young"}) {
			t.Fatalf("second pass = %v, %v; want [run_young] (now old enough)", ids, err)
		}
		if _, err := s.GetSession(ctx, "sess_young"); !errors.Is(err, engine.ErrNotFound) {
			t.Errorf("sess_young after the second pass = %v, want closed", err)
		}
	})
}

// checkExpired fails unless ExpiredLeases(now) names exactly want (in any
// order).
func checkExpired(t *testing.T, s engine.Store, now int64, want []string) {
	t.Helper()
	runs, err := s.ExpiredLeases(t.Context(), now)
	if err != nil {
		t.Fatalf("ExpiredLeases(%d): %v", now, err)
	}
	got := runIDs(runs)
	slices.Sort(got)
	if want == nil {
		want = []string{}
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("ExpiredLeases(base+%d) = %v, want %v", now-base, got, want)
	}
	for _, r := range runs {
		if r.Status != engine.StatusRunning || r.LeaseExpiresAt > now {
			t.Errorf("ExpiredLeases(base+%d) returned %s: %s, lease %d", now-base, r.RunID, r.Status, r.LeaseExpiresAt)
		}
	}
}
