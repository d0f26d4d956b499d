package engine_test

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"path/filepath"
	"sort"
	"sync"
	"testing"

	"github.com/browsertask/browsertask/db"
	"github.com/browsertask/browsertask/engine"
)

// flakyTemplate does two items, "a" and "b", skipping the ones its run
// found done. Item "b" fails until up is set; a run with a failed item
// fails. Each run records the keys Done gave it and every attempt at "b".
type flakyTemplate struct {
	mu       sync.Mutex
	up       bool
	triesOfB int
	seen     [][]string // per run, the keys of Done
}

func (*flakyTemplate) Info() engine.TemplateInfo {
	return engine.TemplateInfo{TemplateID: "test_flaky", Version: 1, Versions: []int{1}, TrustLevel: "any",
		InputSchema: json.RawMessage(`{"type":"object"}`), Resumable: true, ContinuesEarlierRuns: true}
}
func (*flakyTemplate) Check(json.RawMessage, engine.Profile) error { return nil }
func (f *flakyTemplate) Run(ctx context.Context, env engine.Env) (*engine.Outcome, error) {
	done := env.FinishedItems()
	keys := make([]string, 0, len(done))
	for k := range done {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	f.mu.Lock()
	f.seen = append(f.seen, keys)
	up := f.up
	f.mu.Unlock()
	failed := 0
	for i, key := range []string{"a", "b"} {
		if _, ok := done[key]; ok {
			continue
		}
		it := engine.Item{Index: i, Key: key, Status: engine.ItemSucceeded, Output: json.RawMessage(`{}`)}
		if key == "b" {
			f.mu.Lock()
			f.triesOfB++
			f.mu.Unlock()
			if !up {
				it.Status, it.Error = engine.ItemFailed, engine.Errorf(engine.StepExecutionFailed, "connection refused")
				failed++
			}
		}
		if err := env.Checkpoint(ctx, it, engine.Progress{DoneSteps: i + 1, TotalSteps: 2}); err != nil {
			return nil, err
		}
	}
	if failed > 0 {
		return nil, engine.Errorf(engine.StepExecutionFailed, "%d item(s) failed", failed)
	}
	return &engine.Outcome{Result: map[string]any{"ok": true}}, nil
}

// TestAResubmissionRetriesFailedItems: submitting the inputs of a failed
// run again adopts the items that succeeded and does the failed ones
// again — twice while the item still fails, and once more after it came
// back, when the run succeeds. On bfdb840 the failed item was adopted
// too: "b" was tried once in all and every resubmission failed at once.
func TestAResubmissionRetriesFailedItems(t *testing.T) {
	ctx := context.Background()
	store, err := db.Open(ctx, filepath.Join(t.TempDir(), "bt.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	tpl := &flakyTemplate{}
	eng, err := engine.New(engine.Options{Store: store, Templates: []engine.Template{tpl},
		Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		t.Fatal(err)
	}
	runCtx, cancel := context.WithCancel(ctx)
	stopped := make(chan struct{})
	go func() { _ = eng.Run(runCtx); close(stopped) }()
	defer func() { cancel(); <-stopped }()
	submit := func() *engine.Run {
		t.Helper()
		sub, err := eng.Submit(ctx, engine.SubmitRequest{TemplateID: "test_flaky", Mode: engine.ModeAsync,
			Inputs: json.RawMessage(`{"urls":["http://127.0.0.1:1/"]}`)})
		if err != nil {
			t.Fatal(err)
		}
		r, err := eng.Wait(ctx, sub.Run.RunID, nil)
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
	adoptedItems := func(runID string) []float64 {
		t.Helper()
		evs, _, _, err := eng.EventsAfter(ctx, runID, 0, 100)
		if err != nil {
			t.Fatal(err)
		}
		var n []float64
		for _, ev := range evs {
			if ev.Type == "adopted" {
				var d map[string]any
				if err := json.Unmarshal(ev.Data, &d); err != nil {
					t.Fatal(err)
				}
				n = append(n, d["items"].(float64))
			}
		}
		return n
	}

	first := submit()
	if first.Status != engine.StatusFailed {
		t.Fatalf("first run: %s, want failed", first.Status)
	}
	second := submit()
	if second.Status != engine.StatusFailed {
		t.Fatalf("second run: %s, want failed (b still fails)", second.Status)
	}
	tpl.mu.Lock()
	tpl.up = true
	tpl.mu.Unlock()
	third := submit()
	if third.Status != engine.StatusSucceeded {
		t.Fatalf("third run: %s %v, want succeeded once b came back", third.Status, third.Error)
	}

	tpl.mu.Lock()
	defer tpl.mu.Unlock()
	if tpl.triesOfB != 3 {
		t.Fatalf("b was tried %d times in three runs, want 3 (each resubmission tries it again)", tpl.triesOfB)
	}
	want := [][]string{{}, {"a"}, {"a"}}
	if len(tpl.seen) != 3 {
		t.Fatalf("%d executions, want 3", len(tpl.seen))
	}
	for i, keys := range tpl.seen {
		if len(keys) != len(want[i]) || (len(keys) == 1 && keys[0] != want[i][0]) {
			t.Fatalf("run %d was given the done items %v, want %v (only the succeeded ones)", i+1, keys, want[i])
		}
	}
	for _, r := range []*engine.Run{second, third} {
		if got := adoptedItems(r.RunID); len(got) != 1 || got[0] != 1 {
			t.Fatalf("run %s adopted events' items %v, want one event of 1 item", r.RunID, got)
		}
	}
	items, err := eng.Items(ctx, third.RunID)
	if err != nil {
		t.Fatal(err)
	}
	if len(items) != 2 || items[0].Key != "a" || items[1].Key != "b" || items[1].Status != engine.ItemSucceeded {
		t.Fatalf("the third run's items: %+v, want a and b succeeded", items)
	}
}
