package db

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"sync"
	"testing"

	"github.com/browsertask/browsertask/engine"
)

func TestEventSeqContiguousAcrossHandles(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "bt.db")
	handles := []*DB{openTest(t, path), openTest(t, path)}
	mustCreate(t, handles[0], queuedRun("run_1", 1))
	const writers, each = 8, 25
	var wg sync.WaitGroup
	errs := make(chan error, writers)
	for w := range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range each {
				data := json.RawMessage(fmt.Sprintf(`{"w":%d,"i":%d}`, w, i))
				if err := handles[w%2].AppendEvent(ctx, "run_1", "log", data, int64(i)); err != nil {
					errs <- err
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	evs, err := handles[1].ListEvents(ctx, engine.ListEventsParams{RunID: "run_1"})
	if err != nil || len(evs) != 1+writers*each {
		t.Fatalf("ListEvents = %d events, %v; want %d", len(evs), err, 1+writers*each)
	}
	seen := map[string]bool{}
	for i, e := range evs {
		if e.Seq != int64(i+1) || e.RunID != "run_1" {
			t.Fatalf("event %d has seq %d run %q; want seq %d (contiguous from 1)", i, e.Seq, e.RunID, i+1)
		}
		if i > 0 {
			seen[string(e.Data)] = true
		}
	}
	if len(seen) != writers*each {
		t.Fatalf("%d distinct log events, want %d", len(seen), writers*each)
	}
	// Paging by afterSeq and limit.
	page, err := handles[0].ListEvents(ctx, engine.ListEventsParams{RunID: "run_1", AfterSeq: 10, Limit: 5})
	if err != nil || len(page) != 5 || page[0].Seq != 11 || page[4].Seq != 15 {
		t.Fatalf("ListEvents(after 10, limit 5) = %+v, %v", page, err)
	}
	if err := handles[0].AppendEvent(ctx, "run_nope", "log", nil, 1); !errors.Is(err, engine.ErrNotFound) {
		t.Fatalf("AppendEvent(missing run) = %v, want ErrNotFound", err)
	}
}

func TestEventCap(t *testing.T) {
	ctx := context.Background()
	d := newDB(t)
	mustCreate(t, d, queuedRun("run_1", 1))
	run := mustClaimOne(t, d, "owner", 2) // created + status = 2 events
	// Fill up to the cap directly, then check what is still appended.
	if _, err := d.w.ExecContext(ctx, `UPDATE runs SET event_seq = ? WHERE id = 'run_1'`, maxEventsPerRun-1); err != nil {
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
	if err != nil || len(evs) != 2 || evs[0].Seq != maxEventsPerRun || evs[0].Type != "progress" ||
		evs[1].Seq != maxEventsPerRun+1 || evs[1].Type != "status" {
		t.Fatalf("events past the cap = %+v, %v; want progress@10000 then status@10001", evs, err)
	}
	if items, _ := d.ListItems(ctx, "run_1"); len(items) != 1 {
		t.Fatalf("item past the event cap not stored: %+v", items)
	}
}
