package db

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/browsertask/browsertask/db/sqlcommon"
	"github.com/browsertask/browsertask/engine"
)

// TestEventCap: past sqlcommon.MaxEventsPerRun events, status events are still
// appended and item/progress events are dropped (their items still stored).
func TestEventCap(t *testing.T) {
	ctx := context.Background()
	d := newDB(t)
	mustCreate(t, d, queuedRun("run_1", 1))
	run := mustClaimOne(t, d, "owner", 2) // created + status = 2 events
	// Fill up to the cap directly, then check what is still appended.
	if _, err := d.w.ExecContext(ctx, `UPDATE runs SET event_seq = ? WHERE id = 'run_1'`, sqlcommon.MaxEventsPerRun-1); err != nil {
		t.Fatal(err)
	}
	if err := d.AppendEvent(ctx, "run_1", "progress", json.RawMessage(`{"n":1}`), 3); err != nil {
		t.Fatal(err) // seq 10000: the last one allowed
	}
	if err := d.SaveItem(ctx, "run_1", engine.Holder{OwnerID: "owner", Attempt: 1}, engine.Item{Index: 0, Key: "k", Status: "succeeded"},
		engine.Progress{DoneSteps: 1}, 4); err != nil {
		t.Fatal(err) // item stored, its event dropped
	}
	if err := d.AppendEvent(ctx, "run_1", "progress", nil, 5); err != nil {
		t.Fatal(err)
	}
	if err := d.FinishRun(ctx, engine.Finish{RunID: run.RunID, OwnerID: "owner", Attempt: 1, Status: engine.StatusSucceeded,
		Result: json.RawMessage(`1`), Now: 6, RunTTLMs: 10}); err != nil {
		t.Fatal(err)
	}
	evs, err := d.ListEvents(ctx, engine.ListEventsParams{RunID: "run_1", AfterSeq: 2})
	if err != nil || len(evs) != 2 || evs[0].Seq != sqlcommon.MaxEventsPerRun || evs[0].Type != "progress" ||
		evs[1].Seq != sqlcommon.MaxEventsPerRun+1 || evs[1].Type != "status" {
		t.Fatalf("events past the cap = %+v, %v; want progress@10000 then status@10001", evs, err)
	}
	if items, _ := d.ListItems(ctx, "run_1"); len(items) != 1 {
		t.Fatalf("item past the event cap not stored: %+v", items)
	}
}
