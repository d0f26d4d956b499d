package db

import (
	"context"
	"encoding/json"
	"errors"
	"reflect"
	"testing"

	"github.com/browsertask/browsertask/engine"
)

func TestCompareAndSetWrites(t *testing.T) {
	ctx := context.Background()
	d := newDB(t)
	mustCreate(t, d, queuedRun("run_1", 100))
	mustClaimOne(t, d, "owner_a", 200)

	// SaveItem by a non-owner changes nothing.
	item := engine.Item{Index: 0, Key: "http://a/", Status: engine.ItemSucceeded, Output: json.RawMessage(`{"t":"A"}`)}
	err := d.SaveItem(ctx, "run_1", engine.Holder{OwnerID: "owner_b", Attempt: 1}, item, engine.Progress{DoneSteps: 1, TotalSteps: 2}, 250)
	if !errors.Is(err, engine.ErrConflict) {
		t.Fatalf("SaveItem by non-owner = %v, want ErrConflict", err)
	}
	if items, _ := d.ListItems(ctx, "run_1"); len(items) != 0 {
		t.Fatalf("items after rejected SaveItem = %+v, want none", items)
	}
	if err := d.SaveProgress(ctx, "run_1", engine.Holder{OwnerID: "owner_b", Attempt: 1}, engine.Progress{DoneSteps: 9}, 250); !errors.Is(err, engine.ErrConflict) {
		t.Fatalf("SaveProgress by non-owner = %v, want ErrConflict", err)
	}
	// SaveItem by the owner stores item, progress and an item event together.
	if err := d.SaveItem(ctx, "run_1", engine.Holder{OwnerID: "owner_a", Attempt: 1}, item, engine.Progress{DoneSteps: 1, TotalSteps: 2}, 260); err != nil {
		t.Fatal(err)
	}
	failed := engine.Item{Index: 1, Key: "http://b/", Status: engine.ItemFailed,
		Error: &engine.Error{Code: engine.NavigationTimeout, Message: "slow", Recovery: engine.NavigationTimeout.Recovery()}}
	if err := d.SaveItem(ctx, "run_1", engine.Holder{OwnerID: "owner_a", Attempt: 1}, failed, engine.Progress{DoneSteps: 2, TotalSteps: 2, FailedSteps: 1}, 270); err != nil {
		t.Fatal(err)
	}
	items, err := d.ListItems(ctx, "run_1")
	if err != nil || !reflect.DeepEqual(items, []engine.Item{item, failed}) {
		t.Fatalf("ListItems = %+v, %v", items, err)
	}
	evs, _ := d.ListEvents(ctx, engine.ListEventsParams{RunID: "run_1", AfterSeq: 2, Limit: 10})
	if len(evs) != 2 || evs[0].Type != "item" || string(evs[0].Data) != `{"index":0,"key":"http://a/","status":"succeeded"}` {
		t.Fatalf("item events = %+v", evs)
	}

	// Cancel wins; a late FinishRun by the owner is a conflict.
	cerr := engine.Errorf(engine.RunCanceled, "canceled by the user")
	run, changed, err := d.CancelRun(ctx, engine.CancelRunParams{RunID: "run_1", Reason: "user asked", Error: cerr, Now: 300, RunTTLMs: 5000})
	if err != nil || !changed || run.Status != engine.StatusCanceled || run.CancelReason != "user asked" ||
		run.FinishedAt == nil || *run.FinishedAt != 300 || run.ExpiresAt != 5300 || run.Error.Code != engine.RunCanceled {
		t.Fatalf("CancelRun = %+v, %v, %v", run, changed, err)
	}
	if run.Progress != (engine.Progress{DoneSteps: 2, TotalSteps: 2, FailedSteps: 1}) {
		t.Errorf("progress after cancel = %+v", run.Progress)
	}
	err = d.FinishRun(ctx, engine.Finish{RunID: "run_1", OwnerID: "owner_a", Attempt: 1, Status: engine.StatusSucceeded,
		Result: json.RawMessage(`{"late":true}`), Now: 400, RunTTLMs: 5000})
	if !errors.Is(err, engine.ErrConflict) {
		t.Fatalf("FinishRun after cancel = %v, want ErrConflict", err)
	}
	if err := d.SaveItem(ctx, "run_1", engine.Holder{OwnerID: "owner_a", Attempt: 1}, item, engine.Progress{}, 410); !errors.Is(err, engine.ErrConflict) {
		t.Fatalf("SaveItem after cancel = %v, want ErrConflict", err)
	}
	got, _ := d.GetRun(ctx, "run_1")
	if got.Status != engine.StatusCanceled || got.Result != nil || got.UpdatedAt != 300 {
		t.Fatalf("run after late finish = %+v; want still canceled, no result", got)
	}
	// Cancelling a terminal run changes nothing.
	again, changed, err := d.CancelRun(ctx, engine.CancelRunParams{RunID: "run_1", Reason: "again", Error: cerr, Now: 500, RunTTLMs: 5000})
	if err != nil || changed || again.CancelReason != "user asked" || *again.FinishedAt != 300 {
		t.Fatalf("CancelRun on terminal = %+v, %v, %v; want unchanged", again, changed, err)
	}
	if _, _, err := d.CancelRun(ctx, engine.CancelRunParams{RunID: "run_nope", Error: cerr, Now: 500}); !errors.Is(err, engine.ErrNotFound) {
		t.Fatalf("CancelRun(missing) = %v, want ErrNotFound", err)
	}
	if err := d.FinishRun(ctx, engine.Finish{RunID: "run_nope", OwnerID: "o", Attempt: 1, Status: engine.StatusFailed}); !errors.Is(err, engine.ErrNotFound) {
		t.Fatalf("FinishRun(missing) = %v, want ErrNotFound", err)
	}
	evs, _ = d.ListEvents(ctx, engine.ListEventsParams{RunID: "run_1"})
	var types []string
	for _, e := range evs {
		types = append(types, e.Type)
	}
	if want := []string{"created", "status", "item", "item", "status"}; !reflect.DeepEqual(types, want) {
		t.Fatalf("event types = %v, want %v", types, want)
	}
}

func TestCancelQueuedAndFinishValidation(t *testing.T) {
	ctx := context.Background()
	d := newDB(t)
	mustCreate(t, d, queuedRun("run_q", 100))
	run, changed, err := d.CancelRun(ctx, engine.CancelRunParams{RunID: "run_q", Error: engine.Errorf(engine.RunCanceled, "x"), Now: 150, RunTTLMs: 10})
	if err != nil || !changed || run.Status != engine.StatusCanceled || run.StartedAt != nil {
		t.Fatalf("cancel queued = %+v, %v, %v", run, changed, err)
	}
	if run.ExpiresAt != 1100 { // max(created 100 + ttl 1000, 150 + 10)
		t.Errorf("expires_at = %d, want 1100", run.ExpiresAt)
	}
	if runs, err := d.ClaimRuns(ctx, engine.Claim{OwnerID: "o", Now: 200, LeaseUntil: 300, MaxRunning: 5, Max: 5}); err != nil || len(runs) != 0 {
		t.Fatalf("claim after cancel = %v, %v; want nothing", runs, err)
	}
	if err := d.FinishRun(ctx, engine.Finish{RunID: "run_q", OwnerID: "o", Attempt: 1, Status: engine.StatusRunning}); err == nil {
		t.Fatal("FinishRun to running succeeded; want an error")
	}
}
