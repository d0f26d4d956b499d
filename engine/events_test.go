package engine_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/browsertask/browsertask/db"
	"github.com/browsertask/browsertask/engine"
	"github.com/browsertask/browsertask/internal/fixture"
)

// drain reads every event already there and returns the seq to resume from.
func drain(t *testing.T, eng *engine.Engine, runID string, after int64) ([]engine.Event, int64) {
	t.Helper()
	var all []engine.Event
	for {
		evs, next, _, err := eng.EventsAfter(context.Background(), runID, after, 0)
		if err != nil {
			t.Fatal(err)
		}
		if len(evs) == 0 {
			return all, after
		}
		all, after = append(all, evs...), next
	}
}

// itemClock is the store with a record of when each item checkpoint was
// committed: lags are measured from the moment an event became visible, not
// from its timestamp (taken before a write that may queue for the database
// on a busy machine).
type itemClock struct {
	engine.Store
	mu sync.Mutex
	at map[int]time.Time
}

func (c *itemClock) SaveItem(ctx context.Context, runID string, h engine.Holder, it engine.Item, p engine.Progress, now int64) error {
	err := c.Store.SaveItem(ctx, runID, h, it, p, now)
	c.mu.Lock()
	c.at[it.Index] = time.Now()
	c.mu.Unlock()
	return err
}

// committed returns when item index was saved. The waiter can wake before
// SaveItem has returned to this wrapper, so it first lets every other
// goroutine of the bubble settle (synctest.Wait) instead of sleeping.
func (c *itemClock) committed(index int) (time.Time, bool) {
	synctest.Wait()
	c.mu.Lock()
	defer c.mu.Unlock()
	at, ok := c.at[index]
	return at, ok
}

func TestWaitEventsReturnsWithin100msOfANewEvent(t *testing.T) {
	synctest.Test(t, testWaitEventsReturnsWithin100msOfANewEvent)
}

func testWaitEventsReturnsWithin100msOfANewEvent(t *testing.T) {
	store, err := db.Open(context.Background(), filepath.Join(t.TempDir(), "bt.db"))
	if err != nil {
		t.Fatal(err)
	}
	clock := &itemClock{Store: store, at: map[int]time.Time{}}
	eng, err := engine.New(engine.Options{Store: clock, Templates: []engine.Template{newSleep()},
		Config: engine.Config{PollInterval: 50 * time.Millisecond, ShutdownGrace: 100 * time.Millisecond},
		Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		t.Fatal(err)
	}
	ctx, stop := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { _ = eng.Run(ctx); close(done) }()
	t.Cleanup(func() { stop(); <-done; store.Close() })
	sub, err := eng.Submit(ctx, engine.SubmitRequest{TemplateID: "test_sleep", Inputs: json.RawMessage(`{"ms":300,"items":6}`), Mode: engine.ModeAsync})
	if err != nil {
		t.Fatal(err)
	}
	runID := sub.Run.RunID
	waitStatus(t, eng, runID, engine.StatusRunning)
	_, after := drain(t, eng, runID, 0)
	// Local events (this engine's checkpoints) wake the waiter at once: on
	// the bubble's fake clock no time passes between the commit and the
	// return, so a waiter that only found the event by its 50 ms store poll
	// would show a lag of 50 ms and fail. A busy machine cannot fail it.
	var lags []time.Duration
	for i := 0; i < 5; i++ {
		evs, next, terminal, err := eng.WaitEvents(ctx, runID, after, 5*time.Second)
		got := time.Now()
		if err != nil || len(evs) == 0 || evs[0].Type != "item" || terminal {
			t.Fatalf("wait: %v events=%+v terminal=%v", err, evs, terminal)
		}
		var it struct{ Index int }
		_ = json.Unmarshal(evs[0].Data, &it)
		at, ok := clock.committed(it.Index)
		if !ok {
			t.Fatalf("no commit time for item %d", it.Index)
		}
		lags = append(lags, got.Sub(at))
		after = next
	}
	sorted := append([]time.Duration(nil), lags...)
	sort.Slice(sorted, func(i, j int) bool { return sorted[i] < sorted[j] })
	t.Logf("local events returned %v after their commit (median %v)", lags, sorted[2])
	if sorted[4] != 0 {
		t.Fatalf("local event lags %v: want 0 each (woken by the commit, not by the poll)", lags)
	}
	// An event written by another process (straight into the store, no
	// local change signal) is found by the 50 ms store poll.
	slow, err := eng.Submit(ctx, engine.SubmitRequest{TemplateID: "test_sleep", Inputs: json.RawMessage(`{"ms":5000,"items":1}`), Mode: engine.ModeAsync})
	if err != nil {
		t.Fatal(err)
	}
	waitStatus(t, eng, slow.Run.RunID, engine.StatusRunning)
	_, after = drain(t, eng, slow.Run.RunID, 0)
	written := make(chan time.Time, 1)
	go func() {
		time.Sleep(300 * time.Millisecond)
		_ = store.AppendEvent(context.Background(), slow.Run.RunID, "log", json.RawMessage(`{"msg":"peer"}`), time.Now().UnixMilli())
		written <- time.Now()
	}()
	evs, _, _, err := eng.WaitEvents(ctx, slow.Run.RunID, after, 5*time.Second)
	got := time.Now()
	if err != nil || len(evs) != 1 || evs[0].Type != "log" {
		t.Fatalf("peer event: %v %+v", err, evs)
	}
	lag := got.Sub(<-written)
	t.Logf("peer event returned %v after its commit (store poll every 50 ms)", lag)
	if lag > 50*time.Millisecond { // 0 when the write lands on a poll tick
		t.Fatalf("peer event returned %v after it was written, want within one 50 ms store poll", lag)
	}
}

func TestWaitEventsIsEmptyAtTheDeadline(t *testing.T) {
	synctest.Test(t, testWaitEventsIsEmptyAtTheDeadline)
}

func testWaitEventsIsEmptyAtTheDeadline(t *testing.T) {
	h := newHarness(t, engine.Config{}, "")
	r := h.submit(`{"ms":3000,"items":1}`)
	waitStatus(t, h.eng, r.RunID, engine.StatusRunning)
	_, after := drain(t, h.eng, r.RunID, 0)
	start := time.Now()
	evs, next, terminal, err := h.eng.WaitEvents(context.Background(), r.RunID, after, 400*time.Millisecond)
	el := time.Since(start)
	if err != nil || len(evs) != 0 || terminal || next != after {
		t.Fatalf("quiet wait: err=%v events=%d terminal=%v next=%d want %d", err, len(evs), terminal, next, after)
	}
	if el != 400*time.Millisecond {
		t.Fatalf("quiet wait returned after %v, want 400ms on the bubble's clock", el)
	}
	if _, _, _, err := h.eng.WaitEvents(context.Background(), "run_nope", 0, time.Second); engine.CodeOf(err) != engine.RunNotFound {
		t.Fatalf("unknown run: %v", err)
	}
	if _, _, _, err := h.eng.EventsAfter(context.Background(), r.RunID, -1, 0); engine.CodeOf(err) != engine.InvalidParameter {
		t.Fatalf("negative afterSeq: %v", err)
	}
	// A finished run with nothing new answers at once with terminal true.
	if _, err := h.eng.Cancel(context.Background(), r.RunID, "test"); err != nil {
		t.Fatal(err)
	}
	_, after = drain(t, h.eng, r.RunID, after)
	start = time.Now()
	evs, _, terminal, err = h.eng.WaitEvents(context.Background(), r.RunID, after, 5*time.Second)
	if err != nil || len(evs) != 0 || !terminal || time.Since(start) != 0 { // at once, not the 5 s wait
		t.Fatalf("terminal wait: err=%v events=%d terminal=%v after %v", err, len(evs), terminal, time.Since(start))
	}
}

func TestEventsResumeAcrossARestartLosesNothing(t *testing.T) {
	synctest.Test(t, testEventsResumeAcrossARestartLosesNothing)
}

func testEventsResumeAcrossARestartLosesNothing(t *testing.T) {
	path := filepath.Join(t.TempDir(), "bt.db")
	h1 := newHarness(t, engine.Config{}, path)
	r := h1.submit(`{"ms":100,"items":10}`)
	var seen []engine.Event
	var after int64
	items := 0
	for items < 3 {
		evs, next, _, err := h1.eng.WaitEvents(context.Background(), r.RunID, after, 5*time.Second)
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range evs {
			if e.Type == "item" {
				items++
			}
		}
		seen, after = append(seen, evs...), next
	}
	h1.stop() // graceful shutdown: the resumable run goes back to queued
	h2 := newHarness(t, engine.Config{}, path)
	for {
		evs, next, terminal, err := h2.eng.WaitEvents(context.Background(), r.RunID, after, 5*time.Second)
		if err != nil {
			t.Fatal(err)
		}
		seen, after = append(seen, evs...), next
		if terminal {
			break
		}
	}
	full, err := h2.store.ListEvents(context.Background(), engine.ListEventsParams{RunID: r.RunID})
	if err != nil {
		t.Fatal(err)
	}
	if fmt.Sprint(seqTypes(seen)) != fmt.Sprint(seqTypes(full)) {
		t.Fatalf("followed events differ from the stored log:\n got  %v\n want %v", seqTypes(seen), seqTypes(full))
	}
	for i, e := range full {
		if e.Seq != int64(i+1) {
			t.Fatalf("seq %d at position %d: not gapless", e.Seq, i)
		}
	}
	var statuses []string
	for _, e := range full {
		if e.Type == "status" {
			var d struct{ Status string }
			_ = json.Unmarshal(e.Data, &d)
			statuses = append(statuses, d.Status)
		}
	}
	if fmt.Sprint(statuses) != "[running queued running succeeded]" {
		t.Fatalf("status events %v, want running, queued (restart), running, succeeded", statuses)
	}
	t.Logf("followed %d events across the restart, identical to the stored log", len(seen))
}

func TestEventsExpireWithTheRun(t *testing.T) { synctest.Test(t, testEventsExpireWithTheRun) }

func testEventsExpireWithTheRun(t *testing.T) {
	// The run may expire before a Wait call could observe it on a loaded machine,
	// so the test follows the stored event log instead: first the terminal status
	// event must appear, then the whole log must go with the run.
	h := newHarness(t, engine.Config{RunTTL: time.Second, JanitorInterval: 50 * time.Millisecond}, "")
	runID := h.submit(`{"ms":1,"items":2}`).RunID
	sawTerminal := false
	fixture.WaitUntil(t, "the terminal status event, then the run's events to go with it", func() bool {
		full, err := h.store.ListEvents(context.Background(), engine.ListEventsParams{RunID: runID})
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range full {
			if e.Type == "status" && strings.Contains(string(e.Data), `"succeeded"`) {
				sawTerminal = true
			}
		}
		return sawTerminal && len(full) == 0
	})
	if _, _, _, err := h.eng.EventsAfter(context.Background(), runID, 0, 0); engine.CodeOf(err) != engine.RunNotFound {
		t.Fatalf("expired run events: %v", err)
	}
}

func seqTypes(evs []engine.Event) []string {
	out := make([]string, len(evs))
	for i, e := range evs {
		out[i] = fmt.Sprintf("%d:%s", e.Seq, e.Type)
	}
	return out
}

// waitStatus polls until the run reaches status (fixture.WaitUntil).
func waitStatus(t *testing.T, eng *engine.Engine, runID string, status engine.RunStatus) {
	t.Helper()
	fixture.WaitUntil(t, "run "+runID+" to be "+string(status), func() bool {
		r, err := eng.Get(context.Background(), runID)
		if err != nil {
			t.Fatal(err)
		}
		return r.Status == status
	})
}
