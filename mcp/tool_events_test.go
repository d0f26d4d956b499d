package mcp

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/browsertask/browsertask/engine"
)

// commitClock is the store with a record of when each item checkpoint was
// committed, so a test measures how soon a subscriber sees an event from
// the moment it became visible (not from its timestamp, taken before the
// write waited for the database on a busy machine).
type commitClock struct {
	engine.Store
	mu      sync.Mutex
	at      map[string]time.Time // runId/index → commit time
	changed chan struct{}        // closed and replaced on every record
}

func newCommitClock() *commitClock {
	return &commitClock{at: map[string]time.Time{}, changed: make(chan struct{})}
}

func (c *commitClock) SaveItem(ctx context.Context, runID string, h engine.Holder, it engine.Item, p engine.Progress, now int64) error {
	err := c.Store.SaveItem(ctx, runID, h, it, p, now)
	c.mu.Lock()
	c.at[fmt.Sprintf("%s/%d", runID, it.Index)] = time.Now()
	close(c.changed)
	c.changed = make(chan struct{})
	c.mu.Unlock()
	return err
}

// committed returns when item index of runID was committed (waiting for
// the record, which is written just after the commit).
func (c *commitClock) committed(t *testing.T, runID string, index int) time.Time {
	t.Helper()
	timeout := time.After(10 * time.Second)
	for {
		c.mu.Lock()
		at, ok := c.at[fmt.Sprintf("%s/%d", runID, index)]
		ch := c.changed
		c.mu.Unlock()
		if ok {
			return at
		}
		select {
		case <-ch:
		case <-timeout:
			t.Fatalf("no commit recorded for %s item %d", runID, index)
		}
	}
}

// page decodes an event tool's answer.
type testPage struct {
	Events   []engine.Event `json:"events"`
	NextSeq  int64          `json:"nextSeq"`
	Terminal bool           `json:"terminal"`
}

func (tc *testClient) events(t *testing.T, tool string, args map[string]any) testPage {
	t.Helper()
	res, sc := tc.call(t, context.Background(), tool, args)
	if res.IsError {
		t.Fatalf("%s: %v", tool, sc)
	}
	b, _ := json.Marshal(sc)
	var p testPage
	if err := json.Unmarshal(b, &p); err != nil {
		t.Fatal(err)
	}
	return p
}

func submitEcho(t *testing.T, eng *engine.Engine, inputs string) string {
	t.Helper()
	res, err := eng.Submit(context.Background(), engine.SubmitRequest{TemplateID: "dev_echo", Inputs: json.RawMessage(inputs), Mode: engine.ModeAsync})
	if err != nil {
		t.Fatal(err)
	}
	return res.Run.RunID
}

// TestSubscribeReturnsOnTheEventAndEmptyAtWaitMs holds the long-poll to
// its promise (its tool description): it returns as soon as there is something after
// afterSeq, or empty at waitMs. With waitMs at its maximum a non-empty
// answer can only come from the event (the deadline answers empty), so the
// first half asserts outcome and order, not speed; the lag from each
// commit is logged and only held well under waitMs. The second half is
// about time: an empty answer not before waitMs, and well before a large
// bound (a loaded machine is late, not stuck).
func TestSubscribeReturnsOnTheEventAndEmptyAtWaitMs(t *testing.T) {
	synctest.Test(t, testSubscribeReturnsOnTheEventAndEmptyAtWaitMs)
}

func testSubscribeReturnsOnTheEventAndEmptyAtWaitMs(t *testing.T) {
	clock := newCommitClock()
	eng, _ := startEngine(t, engineOpts{wrap: func(s engine.Store) engine.Store { clock.Store = s; return clock }})
	tc := newTestClient(t, eng)
	subscribe := func(runID string, after, waitMs int64) testPage {
		return tc.events(t, "subscribe_task_run_events", map[string]any{"runId": runID, "afterSeq": after, "waitMs": waitMs})
	}
	const longWait = 30000 // ms, the maximum
	id := submitEcho(t, eng, `{"sleepMs":300,"items":7}`)
	var after int64
	for running := false; !running; { // catch up: created, status running
		p := subscribe(id, after, longWait)
		if len(p.Events) == 0 || p.Terminal {
			t.Fatalf("subscribe while catching up: %+v", p)
		}
		for _, e := range p.Events {
			running = running || (e.Type == "status" && strings.Contains(string(e.Data), `"running"`))
		}
		after = p.NextSeq
	}
	// Each item is committed ~300 ms after the previous one: every answer
	// carries the next items, in order, without gaps.
	var lags []time.Duration
	next := 0
	for next < 5 {
		p := subscribe(id, after, longWait)
		back := time.Now()
		if len(p.Events) == 0 || p.Terminal {
			t.Fatalf("subscribe: %+v", p)
		}
		for k, e := range p.Events {
			var item struct{ Index int }
			_ = json.Unmarshal(e.Data, &item)
			if e.Seq != after+int64(k)+1 || e.Type != "item" || item.Index != next {
				t.Fatalf("event %+v, want item %d at seq %d", e, next, after+int64(k)+1)
			}
			next++
		}
		lags = append(lags, back.Sub(clock.committed(t, id, next-1)))
		after = p.NextSeq
	}
	t.Logf("subscribe answered after each item commit: %v (waitMs %d)", lags, longWait)
	for _, lag := range lags {
		if lag > longWait*time.Millisecond/3 {
			t.Fatalf("subscribe lags %v: an answer came %v after its event, near waitMs", lags, lag)
		}
	}
	// A run sleeping ten minutes writes nothing more once running: waitMs
	// 300 answers empty, at 300 ms and not before.
	quiet := submitEcho(t, eng, `{"sleepMs":600000,"items":1}`)
	var qAfter int64
	for qAfter < 2 { // created, status running
		qAfter = subscribe(quiet, qAfter, longWait).NextSeq
	}
	const wait = 300 * time.Millisecond
	start := time.Now()
	q := subscribe(quiet, qAfter, wait.Milliseconds())
	if el := time.Since(start); len(q.Events) != 0 || q.NextSeq != qAfter || q.Terminal || el < wait || el > wait+15*time.Second {
		t.Fatalf("quiet subscribe after %v: %+v, want empty at %v", el, q, wait)
	}
	// The first run goes on to its end: the rest of its log, ending with
	// status succeeded.
	p := testPage{NextSeq: after}
	var rest []engine.Event
	for !p.Terminal {
		p = subscribe(id, p.NextSeq, longWait)
		rest = append(rest, p.Events...)
	}
	if len(rest) == 0 {
		t.Fatal("no events after the quiet wait")
	}
	last := rest[len(rest)-1]
	if last.Type != "status" || !strings.Contains(string(last.Data), `"succeeded"`) {
		t.Fatalf("last event %+v, want status succeeded", last)
	}
}

func TestEventToolErrorsNameTheField(t *testing.T) {
	eng := newEngine(t, engine.Config{})
	tc := newTestClient(t, eng)
	ctx := context.Background()
	res, sc := tc.call(t, ctx, "subscribe_task_run_events", map[string]any{"runId": "x", "waitMs": 30001})
	if msg := wantError(t, res, sc, engine.InvalidParameter); !strings.HasPrefix(msg, "waitMs must be an integer in 0..30000, got 30001") {
		t.Fatalf("message %q", msg)
	}
	res, sc = tc.call(t, ctx, "get_task_run_events", map[string]any{"runId": "x", "afterSeq": -1})
	if msg := wantError(t, res, sc, engine.InvalidParameter); !strings.HasPrefix(msg, "afterSeq must be an integer >= 0") {
		t.Fatalf("message %q", msg)
	}
	res, sc = tc.call(t, ctx, "get_task_run_events", map[string]any{})
	if msg := wantError(t, res, sc, engine.InvalidParameter); msg != "runId is required" {
		t.Fatalf("message %q", msg)
	}
	res, sc = tc.call(t, ctx, "subscribe_task_run_events", map[string]any{"runId": "run_missing", "waitMs": 10})
	wantError(t, res, sc, engine.RunNotFound)
	// Paging with limit returns the log in order without gaps.
	id := submitEcho(t, eng, `{"items":5}`)
	if _, err := eng.Wait(ctx, id, nil); err != nil {
		t.Fatal(err)
	}
	var seqs []int64
	p := testPage{}
	for !p.Terminal {
		p = tc.events(t, "get_task_run_events", map[string]any{"runId": id, "afterSeq": p.NextSeq, "limit": 2})
		if len(p.Events) > 2 {
			t.Fatalf("limit 2 returned %d events", len(p.Events))
		}
		for _, e := range p.Events {
			seqs = append(seqs, e.Seq)
		}
	}
	// created, running, 5 items, succeeded
	if fmt.Sprint(seqs) != "[1 2 3 4 5 6 7 8]" {
		t.Fatalf("seqs %v", seqs)
	}
}

func TestSubscribeResumesAcrossADaemonRestart(t *testing.T) {
	path := filepath.Join(t.TempDir(), "bt.db")
	eng1, stop1 := startEngine(t, engineOpts{path: path})
	tc1 := newTestClient(t, eng1)
	id := submitEcho(t, eng1, `{"sleepMs":80,"items":12}`)
	var seen []engine.Event
	var after int64
	for items := 0; items < 4; {
		p := tc1.events(t, "subscribe_task_run_events", map[string]any{"runId": id, "afterSeq": after, "waitMs": 5000})
		for _, e := range p.Events {
			if e.Type == "item" {
				items++
			}
		}
		seen, after = append(seen, p.Events...), p.NextSeq
	}
	stop1() // the daemon stops; the run goes back to queued
	eng2, _ := startEngine(t, engineOpts{path: path})
	tc2 := newTestClient(t, eng2)
	for {
		p := tc2.events(t, "subscribe_task_run_events", map[string]any{"runId": id, "afterSeq": after, "waitMs": 5000})
		seen, after = append(seen, p.Events...), p.NextSeq
		if p.Terminal {
			break
		}
	}
	full := tc2.events(t, "get_task_run_events", map[string]any{"runId": id, "limit": 1000})
	got, want := seqTypesOf(seen), seqTypesOf(full.Events)
	if got != want {
		t.Fatalf("followed across the restart:\n %s\nstored:\n %s", got, want)
	}
	if !strings.Contains(want, `status:queued`) || !strings.HasSuffix(want, "status:succeeded") {
		t.Fatalf("log does not show the requeue and the end: %s", want)
	}
	t.Logf("%d events followed across the restart, identical to the stored log", len(seen))
}

func seqTypesOf(evs []engine.Event) string {
	var b strings.Builder
	for i, e := range evs {
		if i > 0 {
			b.WriteString(" ")
		}
		fmt.Fprintf(&b, "%d:%s", e.Seq, e.Type)
		if e.Type == "status" {
			var d struct{ Status string }
			_ = json.Unmarshal(e.Data, &d)
			b.WriteString(":" + d.Status)
		}
	}
	return b.String()
}
