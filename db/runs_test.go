package db

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"testing"

	"github.com/browsertask/browsertask/engine"
)

func ptr(v int64) *int64 { return &v }

func TestRunRoundTripEveryField(t *testing.T) {
	ctx := context.Background()
	d := newDB(t)
	in := &engine.Run{
		RunID: "run_1", TemplateID: "batch_extract_pages", TemplateVersion: 3,
		SessionID: "sess_1", OwnsSession: true, Mode: engine.ModeSync,
		Progress:  engine.Progress{DoneSteps: 0, TotalSteps: 7, FailedSteps: 0, Message: "waiting"},
		CreatedAt: 1000, UpdatedAt: 1000, ExpiresAt: 61000,
		Inputs:    json.RawMessage(`{"urls": ["http://a/"],  "n":1}`),
		TimeoutMs: 30000, TTLMs: 60000, SessionOwnerID: "owner_a",
		IdempotencyKey: "k1", CancelReason: "",
	}
	got := mustCreate(t, d, in)
	want := *in
	want.Status = engine.StatusQueued
	want.ArtifactIDs = []string{}
	if !reflect.DeepEqual(got, &want) {
		t.Fatalf("CreateRun returned\n%+v\nwant\n%+v", got, &want)
	}

	claimed := mustClaimOne(t, d, "owner_a", 2000)
	if claimed.Status != engine.StatusRunning || claimed.Attempt != 1 || claimed.OwnerID != "owner_a" ||
		claimed.LeaseExpiresAt != 17000 || claimed.StartedAt == nil || *claimed.StartedAt != 2000 {
		t.Fatalf("claimed run = %+v", claimed)
	}
	p := engine.Progress{DoneSteps: 6, TotalSteps: 7, FailedSteps: 1, Message: "almost"}
	if err := d.SaveProgress(ctx, "run_1", engine.Holder{OwnerID: "owner_a", Attempt: 1}, p, 2500); err != nil {
		t.Fatal(err)
	}
	if err := d.PutArtifact(ctx, engine.Artifact{ID: "art_2", RunID: "run_1", Name: "b", MimeType: "text/plain",
		CreatedAt: 2600, ExpiresAt: 99999}, []byte("bb")); err != nil {
		t.Fatal(err)
	}
	if err := d.PutArtifact(ctx, engine.Artifact{ID: "art_1", RunID: "run_1", Name: "a", MimeType: "text/plain",
		CreatedAt: 2700, ExpiresAt: 99999}, []byte("a")); err != nil {
		t.Fatal(err)
	}
	result := json.RawMessage(`{"pages": [ {"ok":true} ],"failed":[1]}`)
	runErr := &engine.Error{Code: engine.StepExecutionFailed, Message: "step 3 failed",
		Recovery: engine.StepExecutionFailed.Recovery(), Details: map[string]any{"step": "three"}}
	if err := d.FinishRun(ctx, engine.Finish{RunID: "run_1", OwnerID: "owner_a", Attempt: 1, Status: engine.StatusFailed,
		Result: result, Error: runErr, Now: 3000, RunTTLMs: 100000}); err != nil {
		t.Fatal(err)
	}
	got, err := d.GetRun(ctx, "run_1")
	if err != nil {
		t.Fatal(err)
	}
	want.Status = engine.StatusFailed
	want.Progress = p
	want.Result = result
	want.Error = runErr
	want.ArtifactIDs = []string{"art_2", "art_1"} // creation order
	want.UpdatedAt = 3000
	want.StartedAt = ptr(2000)
	want.FinishedAt = ptr(3000)
	want.ExpiresAt = 103000 // max(1000+60000, 3000+100000)
	want.OwnerID = "owner_a"
	want.Attempt = 1
	if !reflect.DeepEqual(got, &want) {
		t.Fatalf("GetRun after finish\n%+v\nwant\n%+v", got, &want)
	}
	if got.Metrics != (engine.Metrics{}) {
		t.Errorf("Metrics = %+v, want zero (the engine computes them)", got.Metrics)
	}
	if _, err := d.GetRun(ctx, "run_missing"); !errors.Is(err, engine.ErrNotFound) {
		t.Errorf("GetRun(missing) err = %v, want ErrNotFound", err)
	}
	if _, _, err := d.CreateRun(ctx, queuedRun("run_1", 5), nil); !errors.Is(err, engine.ErrConflict) {
		t.Errorf("CreateRun(duplicate id) err = %v, want ErrConflict", err)
	}
}

func TestListRunsOrderFiltersTotal(t *testing.T) {
	ctx := context.Background()
	d := newDB(t)
	// Ten runs; pairs share created_at so ties sort by id descending.
	for i := range 10 {
		r := queuedRun(fmt.Sprintf("run_%02d", i), int64(100+i/2))
		if i%3 == 0 {
			r.TemplateID = "other"
		}
		if i == 4 {
			r.SessionID = "sess_shared"
		}
		mustCreate(t, d, r)
	}
	// run_00 and run_01 end; run_00 is expired at now=5000, run_01 is not.
	for _, id := range []string{"run_00", "run_01"} {
		if _, _, err := d.CancelRun(ctx, engine.CancelRunParams{RunID: id, Reason: "test", Error: engine.Errorf(engine.RunCanceled, "x"), Now: 200}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := d.w.ExecContext(ctx, `UPDATE runs SET expires_at = 4000 WHERE id = 'run_00'`); err != nil {
		t.Fatal(err)
	}
	if _, err := d.w.ExecContext(ctx, `UPDATE runs SET expires_at = 9000 WHERE id = 'run_01'`); err != nil {
		t.Fatal(err)
	}
	// A queued run past its expires_at is never hidden (non-terminal).
	if _, err := d.w.ExecContext(ctx, `UPDATE runs SET expires_at = 1 WHERE id = 'run_05'`); err != nil {
		t.Fatal(err)
	}
	ids := func(runs []*engine.Run) []string {
		out := []string{}
		for _, r := range runs {
			out = append(out, r.RunID)
		}
		return out
	}
	cases := []struct {
		name  string
		f     engine.RunFilter
		want  []string
		total int
	}{
		{"all", engine.RunFilter{Now: 5000},
			[]string{"run_09", "run_08", "run_07", "run_06", "run_05", "run_04", "run_03", "run_02", "run_01"}, 9},
		{"page", engine.RunFilter{Now: 5000, Limit: 3, Offset: 2}, []string{"run_07", "run_06", "run_05"}, 9},
		{"template", engine.RunFilter{Now: 5000, TemplateID: "other"}, []string{"run_09", "run_06", "run_03"}, 3},
		{"status", engine.RunFilter{Now: 5000, Status: engine.StatusCanceled}, []string{"run_01"}, 1},
		{"status expired visible earlier", engine.RunFilter{Now: 3000, Status: engine.StatusCanceled},
			[]string{"run_01", "run_00"}, 2},
		{"session", engine.RunFilter{Now: 5000, SessionID: "sess_shared"}, []string{"run_04"}, 1},
		{"combined page", engine.RunFilter{Now: 5000, TemplateID: "tpl", Limit: 2, Offset: 1},
			[]string{"run_07", "run_05"}, 6},
		{"past end", engine.RunFilter{Now: 5000, Limit: 5, Offset: 50}, []string{}, 9},
	}
	for _, c := range cases {
		runs, total, err := d.ListRuns(ctx, c.f)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		if got := ids(runs); !reflect.DeepEqual(got, c.want) || total != c.total {
			t.Errorf("%s: got %v total %d; want %v total %d", c.name, got, total, c.want, c.total)
		}
	}
}
