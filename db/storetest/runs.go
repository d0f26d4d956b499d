package storetest

import (
	"encoding/json"
	"reflect"
	"testing"

	"github.com/browsertask/browsertask/engine"
)

// testRuns: a run's fields survive the store unchanged through its life,
// and run ids are unique.
func testRuns(t *testing.T, nh func(t *testing.T) Harness) {
	t.Run("RoundTripEveryField", func(t *testing.T) {
		s := nh(t).Store
		ctx := t.Context()
		in := &engine.Run{
			RunID: "run_1", TemplateID: "batch_extract_pages", TemplateVersion: 3,
			SessionID: "sess_1", OwnsSession: true, Mode: engine.ModeSync,
			Progress:  engine.Progress{DoneSteps: 0, TotalSteps: 7, FailedSteps: 0, Message: "waiting"},
			CreatedAt: base + 1000, UpdatedAt: base + 1000, ExpiresAt: base + 61000,
			Inputs:    json.RawMessage(`{"urls":["http://a/"],"n":1}`),
			TimeoutMs: 30000, TTLMs: 60000, SessionOwnerID: "owner_a",
			IdempotencyKey: "k1",
		}
		got := mustCreate(t, s, in)
		want := *in
		want.Status = engine.StatusQueued
		want.ArtifactIDs = []string{}
		checkJSON(t, "stored inputs", got.Inputs, string(in.Inputs))
		got.Inputs = want.Inputs
		if !reflect.DeepEqual(got, &want) {
			t.Fatalf("CreateRun returned\n%+v\nwant\n%+v", got, &want)
		}

		claimed := mustClaim(t, s, "owner_a", base+2000)
		if claimed.Status != engine.StatusRunning || claimed.Attempt != 1 || claimed.OwnerID != "owner_a" ||
			claimed.LeaseExpiresAt != base+2000+defaultLease || claimed.StartedAt == nil || *claimed.StartedAt != base+2000 {
			t.Fatalf("claimed run = %+v", claimed)
		}
		p := engine.Progress{DoneSteps: 6, TotalSteps: 7, FailedSteps: 1, Message: "almost"}
		if err := s.SaveProgress(ctx, "run_1", holder(claimed), p, base+2500); err != nil {
			t.Fatal(err)
		}
		for _, a := range []engine.Artifact{
			{ID: "art_2", RunID: "run_1", Name: "b", MimeType: "text/plain", CreatedAt: base + 2600, ExpiresAt: base + 99999},
			{ID: "art_1", RunID: "run_1", Name: "a", MimeType: "text/plain", CreatedAt: base + 2700, ExpiresAt: base + 99999},
		} {
			if err := s.PutArtifact(ctx, a, []byte(a.Name)); err != nil {
				t.Fatal(err)
			}
		}
		result := json.RawMessage(`{"pages":[{"ok":true}],"failed":[1]}`)
		runErr := &engine.Error{Code: engine.StepExecutionFailed, Message: "step 3 failed",
			Recovery: engine.StepExecutionFailed.Recovery(), Details: map[string]any{"step": "three"}}
		if err := s.FinishRun(ctx, engine.Finish{RunID: "run_1", OwnerID: "owner_a", Attempt: 1, Status: engine.StatusFailed,
			Result: result, Error: runErr, Now: base + 3000, RunTTLMs: 100000}); err != nil {
			t.Fatal(err)
		}
		got = mustGet(t, s, "run_1")
		checkJSON(t, "stored result", got.Result, string(result))
		checkJSON(t, "stored inputs", got.Inputs, string(in.Inputs))
		got.Result, got.Inputs = result, want.Inputs
		want.Status = engine.StatusFailed
		want.Progress = p
		want.Result = result
		want.Error = runErr
		want.ArtifactIDs = []string{"art_2", "art_1"} // creation order
		want.UpdatedAt = base + 3000
		want.StartedAt = ptr(base + 2000)
		want.FinishedAt = ptr(base + 3000)
		want.ExpiresAt = base + 103000 // max(created+60000, finished+100000)
		want.OwnerID = "owner_a"
		want.LeaseExpiresAt = 0 // a terminal run holds no lease
		want.Attempt = 1
		if !reflect.DeepEqual(got, &want) {
			t.Fatalf("GetRun after finish\n%+v\nwant\n%+v", got, &want)
		}
		if got.Metrics != (engine.Metrics{}) {
			t.Errorf("Metrics = %+v, want zero (the engine computes them)", got.Metrics)
		}
	})

	// A writer's clock may read earlier than a run's creation: a claim's
	// "now" is taken before it waits for the write lock while a submit
	// inserts meanwhile, or another process's clock lags. A run's times
	// never go backwards for it: startedAt, updatedAt and finishedAt are at
	// least createdAt and updatedAt never decreases (CI saw a run read with
	// updatedAt 5 ms before its createdAt).
	t.Run("TimesNeverGoBackwards", func(t *testing.T) {
		s := nh(t).Store
		ctx := t.Context()
		mustCreate(t, s, queuedRun("run_1", base+1000))
		claimed := mustClaim(t, s, "owner_a", base+995)
		if claimed.StartedAt == nil || *claimed.StartedAt != base+1000 || claimed.UpdatedAt != base+1000 {
			t.Fatalf("claimed with a clock 5 ms behind: startedAt %v updatedAt %d, want both %d", claimed.StartedAt, claimed.UpdatedAt, base+1000)
		}
		if err := s.SaveProgress(ctx, "run_1", holder(claimed), engine.Progress{DoneSteps: 1}, base+1500); err != nil {
			t.Fatal(err)
		}
		if err := s.SaveProgress(ctx, "run_1", holder(claimed), engine.Progress{DoneSteps: 2}, base+1400); err != nil {
			t.Fatal(err)
		}
		if got := mustGet(t, s, "run_1"); got.UpdatedAt != base+1500 || got.Progress.DoneSteps != 2 {
			t.Fatalf("progress saved with an earlier clock: updatedAt %d doneSteps %d, want %d and 2", got.UpdatedAt, got.Progress.DoneSteps, base+1500)
		}
		if err := s.FinishRun(ctx, engine.Finish{RunID: "run_1", OwnerID: "owner_a", Attempt: 1, Status: engine.StatusSucceeded,
			Result: json.RawMessage(`{}`), Now: base + 1200, RunTTLMs: 1000}); err != nil {
			t.Fatal(err)
		}
		got := mustGet(t, s, "run_1")
		if got.UpdatedAt != base+1500 || got.FinishedAt == nil || *got.FinishedAt != base+1500 {
			t.Fatalf("finished with an earlier clock: updatedAt %d finishedAt %v, want both %d", got.UpdatedAt, got.FinishedAt, base+1500)
		}

		mustCreate(t, s, queuedRun("run_2", base+2000))
		cerr := engine.Errorf(engine.RunCanceled, "canceled by the user")
		if _, _, err := s.CancelRun(ctx, engine.CancelRunParams{RunID: "run_2", Reason: "test", Error: cerr, Now: base + 1990, RunTTLMs: 1000}); err != nil {
			t.Fatal(err)
		}
		if got := mustGet(t, s, "run_2"); got.UpdatedAt != base+2000 || got.FinishedAt == nil || *got.FinishedAt != base+2000 {
			t.Fatalf("cancelled with an earlier clock: updatedAt %d finishedAt %v, want both %d", got.UpdatedAt, got.FinishedAt, base+2000)
		}
	})

	t.Run("DuplicateIDConflicts", func(t *testing.T) {
		s := nh(t).Store
		mustCreate(t, s, queuedRun("run_1", base))
		_, _, err := s.CreateRun(t.Context(), queuedRun("run_1", base+5), nil)
		checkErr(t, "CreateRun(duplicate id)", err, engine.ErrConflict)
		if r := mustGet(t, s, "run_1"); r.CreatedAt != base {
			t.Errorf("the duplicate replaced the run: created_at %d", r.CreatedAt)
		}
	})

	t.Run("GetMissingIsNotFound", func(t *testing.T) {
		s := nh(t).Store
		_, err := s.GetRun(t.Context(), "run_missing")
		checkErr(t, "GetRun(missing)", err, engine.ErrNotFound)
	})
}
