package storetest

import (
	"encoding/json"
	"fmt"
	"reflect"
	"sync"
	"testing"

	"github.com/browsertask/browsertask/engine"
)

// testFinals: every write an execution makes (progress, items, requeue,
// the final state) is a compare-and-set on its holder, owner and attempt,
// so a write after a cancel, a recovery or another finish changes nothing.
func testFinals(t *testing.T, nh func(t *testing.T) Harness) {
	t.Run("OnlyTheHolderWrites", func(t *testing.T) {
		s := nh(t).Store
		ctx := t.Context()
		mustCreate(t, s, queuedRun("run_1", base+100))
		mustClaim(t, s, "owner_a", base+200)
		owner := engine.Holder{OwnerID: "owner_a", Attempt: 1}
		other := engine.Holder{OwnerID: "owner_b", Attempt: 1}

		item := engine.Item{Index: 0, Key: "http://a/", Status: engine.ItemSucceeded, Output: json.RawMessage(`{"t":"A"}`)}
		err := s.SaveItem(ctx, "run_1", other, item, engine.Progress{DoneSteps: 1, TotalSteps: 2}, base+250)
		checkErr(t, "SaveItem by another owner", err, engine.ErrConflict)
		err = s.SaveProgress(ctx, "run_1", other, engine.Progress{DoneSteps: 9}, base+250)
		checkErr(t, "SaveProgress by another owner", err, engine.ErrConflict)
		err = s.FinishRun(ctx, engine.Finish{RunID: "run_1", OwnerID: "owner_b", Attempt: 1, Status: engine.StatusSucceeded, Now: base + 250})
		checkErr(t, "FinishRun by another owner", err, engine.ErrConflict)
		err = s.RequeueRun(ctx, "run_1", other, base+250)
		checkErr(t, "RequeueRun by another owner", err, engine.ErrConflict)
		if items, _ := s.ListItems(ctx, "run_1"); len(items) != 0 {
			t.Fatalf("items after rejected SaveItem = %+v, want none", items)
		}
		if r := mustGet(t, s, "run_1"); r.Status != engine.StatusRunning || r.Progress != (engine.Progress{}) || r.UpdatedAt != base+200 {
			t.Fatalf("run after rejected writes = %+v", r)
		}
		if n := len(events(t, s, "run_1")); n != 2 {
			t.Fatalf("%d events after rejected writes, want 2 (created, running)", n)
		}

		// The holder's SaveItem stores item, progress and an item event together.
		if err := s.SaveItem(ctx, "run_1", owner, item, engine.Progress{DoneSteps: 1, TotalSteps: 2}, base+260); err != nil {
			t.Fatal(err)
		}
		failed := engine.Item{Index: 1, Key: "http://b/", Status: engine.ItemFailed,
			Error: &engine.Error{Code: engine.NavigationTimeout, Message: "slow", Recovery: engine.NavigationTimeout.Recovery()}}
		if err := s.SaveItem(ctx, "run_1", owner, failed, engine.Progress{DoneSteps: 2, TotalSteps: 2, FailedSteps: 1}, base+270); err != nil {
			t.Fatal(err)
		}
		// An item saved again under its index replaces the checkpoint.
		item.Output = json.RawMessage(`{"t":"A2"}`)
		if err := s.SaveItem(ctx, "run_1", owner, item, engine.Progress{DoneSteps: 2, TotalSteps: 2, FailedSteps: 1}, base+280); err != nil {
			t.Fatal(err)
		}
		items, err := s.ListItems(ctx, "run_1")
		if err != nil || len(items) != 2 {
			t.Fatalf("ListItems = %+v, %v; want 2", items, err)
		}
		checkJSON(t, "item 0 output", items[0].Output, `{"t":"A2"}`)
		items[0].Output = item.Output
		if !reflect.DeepEqual(items, []engine.Item{item, failed}) {
			t.Fatalf("ListItems = %+v, want %+v", items, []engine.Item{item, failed})
		}
		r := mustGet(t, s, "run_1")
		if r.Progress != (engine.Progress{DoneSteps: 2, TotalSteps: 2, FailedSteps: 1}) || r.UpdatedAt != base+280 {
			t.Fatalf("run after SaveItem = progress %+v, updated %d", r.Progress, r.UpdatedAt)
		}
		evs := events(t, s, "run_1")
		if !reflect.DeepEqual(eventTypes(evs), []string{"created", "status", "item", "item", "item"}) {
			t.Fatalf("events = %v", eventTypes(evs))
		}
		checkJSON(t, "item event", evs[2].Data, `{"index":0,"key":"http://a/","status":"succeeded"}`)
		checkJSON(t, "item event", evs[3].Data, `{"index":1,"key":"http://b/","status":"failed"}`)

		// SaveProgress alone appends no event.
		p := engine.Progress{DoneSteps: 2, TotalSteps: 3, FailedSteps: 1, Message: "more"}
		if err := s.SaveProgress(ctx, "run_1", owner, p, base+290); err != nil {
			t.Fatal(err)
		}
		if r := mustGet(t, s, "run_1"); r.Progress != p || r.UpdatedAt != base+290 {
			t.Fatalf("run after SaveProgress = progress %+v, updated %d", r.Progress, r.UpdatedAt)
		}
		if n := len(events(t, s, "run_1")); n != 5 {
			t.Fatalf("%d events after SaveProgress, want 5", n)
		}
	})

	t.Run("StaleAttemptWritesNothing", func(t *testing.T) {
		// A process paused past its lease (SIGSTOP, a suspended laptop) had
		// its run recovered and claimed again by itself: the owner id is
		// the same, only the attempt tells the executions apart.
		s := nh(t).Store
		ctx := t.Context()
		mustCreate(t, s, queuedRun("run_1", base))
		first := mustClaim(t, s, "owner_a", base+10)
		if err := s.RecoverRun(ctx, engine.Recovery{RunID: "run_1", OwnerID: "owner_a", To: engine.StatusQueued,
			Now: first.LeaseExpiresAt}); err != nil {
			t.Fatal(err)
		}
		second := mustClaim(t, s, "owner_a", first.LeaseExpiresAt+1)
		if second.Attempt != 2 || second.Crashes != 1 {
			t.Fatalf("second claim: attempt %d crashes %d, want 2 and 1", second.Attempt, second.Crashes)
		}
		now := first.LeaseExpiresAt + 2
		stale := holder(first)
		item := engine.Item{Index: 0, Key: "k", Status: engine.ItemSucceeded}
		checkErr(t, "stale SaveItem", s.SaveItem(ctx, "run_1", stale, item, engine.Progress{DoneSteps: 1}, now), engine.ErrConflict)
		checkErr(t, "stale SaveProgress", s.SaveProgress(ctx, "run_1", stale, engine.Progress{DoneSteps: 1}, now), engine.ErrConflict)
		checkErr(t, "stale RequeueRun", s.RequeueRun(ctx, "run_1", stale, now), engine.ErrConflict)
		checkErr(t, "stale FinishRun", s.FinishRun(ctx, engine.Finish{RunID: "run_1", OwnerID: "owner_a", Attempt: 1,
			Status: engine.StatusSucceeded, Now: now}), engine.ErrConflict)
		ids, err := s.Heartbeat(ctx, engine.HeartbeatParams{OwnerID: "owner_a", Now: now, LeaseUntil: now + 40000,
			Held: []engine.HeldRun{{RunID: "run_1", Attempt: 1}}})
		if err != nil || len(ids) != 0 {
			t.Errorf("stale Heartbeat = %v, %v; want no run extended", ids, err)
		}
		if items, _ := s.ListItems(ctx, "run_1"); len(items) != 0 {
			t.Fatalf("the stale execution stored %d checkpoints", len(items))
		}
		if r := mustGet(t, s, "run_1"); r.Status != engine.StatusRunning || r.Attempt != 2 || r.Progress != (engine.Progress{}) ||
			r.LeaseExpiresAt != second.LeaseExpiresAt {
			t.Fatalf("run after stale writes = %+v", r)
		}

		cur := holder(second)
		if err := s.SaveItem(ctx, "run_1", cur, item, engine.Progress{DoneSteps: 1}, now+1); err != nil {
			t.Fatalf("current SaveItem: %v", err)
		}
		ids, err = s.Heartbeat(ctx, engine.HeartbeatParams{OwnerID: "owner_a", Now: now + 2, LeaseUntil: now + 40000,
			Held: []engine.HeldRun{{RunID: "run_1", Attempt: 2}}})
		if err != nil || !reflect.DeepEqual(ids, []string{"run_1"}) {
			t.Fatalf("current Heartbeat = %v, %v; want [run_1]", ids, err)
		}
		mustFinish(t, s, "run_1", cur, now+3, 1000)
	})

	t.Run("CancelWinsOverLateFinish", func(t *testing.T) {
		s := nh(t).Store
		ctx := t.Context()
		mustCreate(t, s, queuedRun("run_1", base+100))
		claimed := mustClaim(t, s, "owner_a", base+200)
		if err := s.SaveProgress(ctx, "run_1", holder(claimed), engine.Progress{DoneSteps: 1, TotalSteps: 2}, base+250); err != nil {
			t.Fatal(err)
		}
		cerr := engine.Errorf(engine.RunCanceled, "canceled by the user")
		run, changed, err := s.CancelRun(ctx, engine.CancelRunParams{RunID: "run_1", Reason: "user asked", Error: cerr,
			Now: base + 300, RunTTLMs: 5000})
		if err != nil || !changed {
			t.Fatalf("CancelRun = changed %v, %v", changed, err)
		}
		if run.Status != engine.StatusCanceled || run.CancelReason != "user asked" || run.FinishedAt == nil ||
			*run.FinishedAt != base+300 || run.UpdatedAt != base+300 || run.ExpiresAt != base+5300 ||
			!reflect.DeepEqual(run.Error, cerr) || run.Progress != (engine.Progress{DoneSteps: 1, TotalSteps: 2}) {
			t.Fatalf("canceled run = %+v (error %+v)", run, run.Error)
		}
		if stored := mustGet(t, s, "run_1"); !reflect.DeepEqual(stored, run) {
			t.Fatalf("CancelRun returned\n%+v\nbut the store holds\n%+v", run, stored)
		}
		err = s.FinishRun(ctx, engine.Finish{RunID: "run_1", OwnerID: "owner_a", Attempt: 1, Status: engine.StatusSucceeded,
			Result: json.RawMessage(`{"late":true}`), Now: base + 400, RunTTLMs: 5000})
		checkErr(t, "FinishRun after cancel", err, engine.ErrConflict)
		err = s.SaveItem(ctx, "run_1", holder(claimed), engine.Item{Index: 0, Key: "k", Status: engine.ItemSucceeded}, engine.Progress{}, base+410)
		checkErr(t, "SaveItem after cancel", err, engine.ErrConflict)
		err = s.RequeueRun(ctx, "run_1", holder(claimed), base+420)
		checkErr(t, "RequeueRun after cancel", err, engine.ErrConflict)
		if got := mustGet(t, s, "run_1"); !reflect.DeepEqual(got, run) {
			t.Fatalf("run after late writes =\n%+v\nwant unchanged\n%+v", got, run)
		}
		evs := events(t, s, "run_1")
		if !reflect.DeepEqual(eventTypes(evs), []string{"created", "status", "status"}) {
			t.Fatalf("events = %v", eventTypes(evs))
		}
		checkJSON(t, "cancel event", evs[2].Data, `{"status":"canceled"}`)
	})

	t.Run("FinishTwiceConflicts", func(t *testing.T) {
		s := nh(t).Store
		ctx := t.Context()
		mustCreate(t, s, queuedRun("run_1", base))
		h := holder(mustClaim(t, s, "owner_a", base+10))
		if err := s.FinishRun(ctx, engine.Finish{RunID: "run_1", OwnerID: h.OwnerID, Attempt: h.Attempt,
			Status: engine.StatusPartialSuccess, Result: json.RawMessage(`{"n":1}`), Now: base + 20, RunTTLMs: 5000}); err != nil {
			t.Fatal(err)
		}
		first := mustGet(t, s, "run_1")
		err := s.FinishRun(ctx, engine.Finish{RunID: "run_1", OwnerID: h.OwnerID, Attempt: h.Attempt,
			Status: engine.StatusFailed, Error: engine.Errorf(engine.ExecutionError, "again"), Now: base + 30, RunTTLMs: 9000})
		checkErr(t, "second FinishRun", err, engine.ErrConflict)
		if got := mustGet(t, s, "run_1"); !reflect.DeepEqual(got, first) || got.Status != engine.StatusPartialSuccess {
			t.Fatalf("run after second finish =\n%+v\nwant\n%+v", got, first)
		}
		if first.ExpiresAt != base+5020 || *first.FinishedAt != base+20 {
			t.Errorf("expires %d finished %d; want %d, %d", first.ExpiresAt, *first.FinishedAt, base+5020, base+20)
		}
		if n := len(events(t, s, "run_1")); n != 3 {
			t.Errorf("%d events, want 3 (created, running, one final status)", n)
		}
	})

	t.Run("CancelTerminalIsUnchanged", func(t *testing.T) {
		s := nh(t).Store
		ctx := t.Context()
		mustCreate(t, s, queuedRun("run_done", base))
		mustFinish(t, s, "run_done", holder(mustClaim(t, s, "owner_a", base+10)), base+20, 5000)
		mustCreate(t, s, queuedRun("run_gone", base))
		cerr := engine.Errorf(engine.RunCanceled, "stop")
		if _, _, err := s.CancelRun(ctx, engine.CancelRunParams{RunID: "run_gone", Reason: "first", Error: cerr, Now: base + 30, RunTTLMs: 5000}); err != nil {
			t.Fatal(err)
		}
		for _, id := range []string{"run_done", "run_gone"} {
			before := mustGet(t, s, id)
			nEvents := len(events(t, s, id))
			got, changed, err := s.CancelRun(ctx, engine.CancelRunParams{RunID: id, Reason: "again",
				Error: engine.Errorf(engine.RunCanceled, "again"), Now: base + 40, RunTTLMs: 9000})
			if err != nil || changed {
				t.Fatalf("CancelRun(%s terminal) = changed %v, %v; want unchanged", id, changed, err)
			}
			if !reflect.DeepEqual(got, before) {
				t.Errorf("CancelRun(%s terminal) returned\n%+v\nwant\n%+v", id, got, before)
			}
			if after := mustGet(t, s, id); !reflect.DeepEqual(after, before) {
				t.Errorf("%s changed by a cancel of a terminal run:\n%+v", id, after)
			}
			if n := len(events(t, s, id)); n != nEvents {
				t.Errorf("%s: %d events after the no-op cancel, want %d", id, n, nEvents)
			}
		}
	})

	t.Run("CancelQueued", func(t *testing.T) {
		s := nh(t).Store
		ctx := t.Context()
		mustCreate(t, s, queuedRun("run_q", base+100))
		run, changed, err := s.CancelRun(ctx, engine.CancelRunParams{RunID: "run_q", Error: engine.Errorf(engine.RunCanceled, "x"),
			Now: base + 150, RunTTLMs: 10})
		if err != nil || !changed || run.Status != engine.StatusCanceled || run.StartedAt != nil || run.Attempt != 0 {
			t.Fatalf("cancel queued = %+v, %v, %v", run, changed, err)
		}
		if run.ExpiresAt != base+1100 { // max(created + ttl 1000, now + 10)
			t.Errorf("expires_at = %d, want %d", run.ExpiresAt, base+1100)
		}
		runs, err := s.ClaimRuns(ctx, engine.Claim{OwnerID: "o", Now: base + 200, LeaseUntil: base + 300, MaxRunning: 5, Max: 5})
		if err != nil || len(runs) != 0 {
			t.Fatalf("claim after cancel = %v, %v; want nothing", runIDs(runs), err)
		}
	})

	t.Run("CancelFinishRaceOneWinner", func(t *testing.T) {
		// The owner finishes on one handle while another process cancels:
		// for each run exactly one of the two writes takes effect.
		h := nh(t)
		a, b := h.Store, peer(t, h)
		ctx := t.Context()
		const n = 16
		for i := range n {
			mustCreate(t, a, queuedRun(fmt.Sprintf("run_%02d", i), base+int64(i)))
		}
		claimed, err := a.ClaimRuns(ctx, engine.Claim{OwnerID: "owner_a", Now: base + 100, LeaseUntil: base + 100_000, MaxRunning: n, Max: n})
		if err != nil || len(claimed) != n {
			t.Fatalf("ClaimRuns = %d, %v", len(claimed), err)
		}
		type outcome struct {
			finishErr, cancelErr error
			changed              bool
			canceled             *engine.Run
		}
		out := make([]outcome, n)
		start := make(chan struct{})
		var wg sync.WaitGroup
		for i, r := range claimed {
			wg.Add(2)
			go func() {
				defer wg.Done()
				<-start
				out[i].finishErr = a.FinishRun(ctx, engine.Finish{RunID: r.RunID, OwnerID: "owner_a", Attempt: 1,
					Status: engine.StatusSucceeded, Result: json.RawMessage(`{}`), Now: base + 200, RunTTLMs: 1000})
			}()
			go func() {
				defer wg.Done()
				<-start
				out[i].canceled, out[i].changed, out[i].cancelErr = b.CancelRun(ctx, engine.CancelRunParams{RunID: r.RunID,
					Reason: "race", Error: engine.Errorf(engine.RunCanceled, "race"), Now: base + 200, RunTTLMs: 1000})
			}()
		}
		close(start)
		wg.Wait()
		for i, r := range claimed {
			o := out[i]
			if o.cancelErr != nil {
				t.Fatalf("CancelRun(%s): %v", r.RunID, o.cancelErr)
			}
			final := mustGet(t, a, r.RunID)
			switch {
			case o.finishErr == nil && !o.changed:
				if final.Status != engine.StatusSucceeded || o.canceled.Status != engine.StatusSucceeded {
					t.Errorf("%s: finish won but status %s (cancel saw %s)", r.RunID, final.Status, o.canceled.Status)
				}
			case o.changed:
				checkErr(t, r.RunID+": FinishRun after the cancel won", o.finishErr, engine.ErrConflict)
				if final.Status != engine.StatusCanceled {
					t.Errorf("%s: cancel won but status %s", r.RunID, final.Status)
				}
			default:
				t.Errorf("%s: neither write won: finish %v, cancel changed %v", r.RunID, o.finishErr, o.changed)
			}
			if types := eventTypes(events(t, b, r.RunID)); !reflect.DeepEqual(types, []string{"created", "status", "status"}) {
				t.Errorf("%s: events %v, want exactly one final status", r.RunID, types)
			}
		}
	})

	t.Run("RequeueOnlyByHolder", func(t *testing.T) {
		s := nh(t).Store
		ctx := t.Context()
		mustCreate(t, s, queuedRun("run_1", base))
		claimed := mustClaim(t, s, "owner_a", base+10)
		err := s.RequeueRun(ctx, "run_1", engine.Holder{OwnerID: "owner_a", Attempt: 2}, base+40)
		checkErr(t, "RequeueRun with another attempt", err, engine.ErrConflict)
		if err := s.RequeueRun(ctx, "run_1", holder(claimed), base+40); err != nil {
			t.Fatal(err)
		}
		r := mustGet(t, s, "run_1")
		if r.Status != engine.StatusQueued || r.OwnerID != "" || r.LeaseExpiresAt != 0 || r.Attempt != 1 ||
			r.UpdatedAt != base+40 || r.FinishedAt != nil || r.Crashes != 0 {
			t.Fatalf("requeued run = %+v", r)
		}
		evs := events(t, s, "run_1")
		checkJSON(t, "requeue event", evs[len(evs)-1].Data, `{"status":"queued","attempt":1}`)
		// A queued run is no one's: requeueing it again conflicts.
		checkErr(t, "RequeueRun of a queued run", s.RequeueRun(ctx, "run_1", holder(claimed), base+50), engine.ErrConflict)
	})

	t.Run("MissingRunIsNotFound", func(t *testing.T) {
		s := nh(t).Store
		ctx := t.Context()
		h := engine.Holder{OwnerID: "o", Attempt: 1}
		checkErr(t, "FinishRun(missing)", s.FinishRun(ctx, engine.Finish{RunID: "run_nope", OwnerID: "o", Attempt: 1,
			Status: engine.StatusFailed, Now: base}), engine.ErrNotFound)
		_, _, err := s.CancelRun(ctx, engine.CancelRunParams{RunID: "run_nope", Error: engine.Errorf(engine.RunCanceled, "c"), Now: base})
		checkErr(t, "CancelRun(missing)", err, engine.ErrNotFound)
		checkErr(t, "RequeueRun(missing)", s.RequeueRun(ctx, "run_nope", h, base), engine.ErrNotFound)
		checkErr(t, "SaveProgress(missing)", s.SaveProgress(ctx, "run_nope", h, engine.Progress{}, base), engine.ErrNotFound)
		checkErr(t, "SaveItem(missing)", s.SaveItem(ctx, "run_nope", h, engine.Item{Key: "k", Status: engine.ItemSucceeded},
			engine.Progress{}, base), engine.ErrNotFound)
		checkErr(t, "RecoverRun(missing)", s.RecoverRun(ctx, engine.Recovery{RunID: "run_nope", OwnerID: "o",
			To: engine.StatusQueued, Now: base}), engine.ErrNotFound)
	})

	t.Run("FinishRejectsNonTerminalStatus", func(t *testing.T) {
		s := nh(t).Store
		mustCreate(t, s, queuedRun("run_1", base))
		h := holder(mustClaim(t, s, "owner_a", base+10))
		for _, st := range []engine.RunStatus{engine.StatusRunning, engine.StatusQueued} {
			if err := s.FinishRun(t.Context(), engine.Finish{RunID: "run_1", OwnerID: h.OwnerID, Attempt: h.Attempt,
				Status: st, Now: base + 20}); err == nil {
				t.Errorf("FinishRun to %s succeeded; want an error", st)
			}
		}
		if r := mustGet(t, s, "run_1"); r.Status != engine.StatusRunning || r.FinishedAt != nil {
			t.Fatalf("run after rejected finishes = %+v", r)
		}
	})
}
