package templates

import (
	"context"
	"encoding/json"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/browsertask/browsertask/engine"
	"github.com/browsertask/browsertask/internal/fixture"
)

// throttledEnv keeps progress as the engine stores it: a SetProgress call
// within 200 ms of the last stored progress is dropped (engine/env.go), a
// Checkpoint always stores its progress.
type throttledEnv struct {
	*fakeEnv
	tmu    sync.Mutex
	last   time.Time
	stored []engine.Progress
}

func (e *throttledEnv) SetProgress(p engine.Progress) {
	e.tmu.Lock()
	defer e.tmu.Unlock()
	if time.Since(e.last) < 200*time.Millisecond {
		return
	}
	e.last = time.Now()
	e.stored = append(e.stored, p)
}

func (e *throttledEnv) Checkpoint(ctx context.Context, it engine.Item, p engine.Progress) error {
	e.tmu.Lock()
	e.last = time.Now()
	e.stored = append(e.stored, p)
	e.tmu.Unlock()
	return e.fakeEnv.Checkpoint(ctx, it, p)
}

// final is the progress a finished run shows.
func (e *throttledEnv) final(t *testing.T) engine.Progress {
	t.Helper()
	e.tmu.Lock()
	defer e.tmu.Unlock()
	if len(e.stored) == 0 {
		t.Fatal("no progress stored")
	}
	return e.stored[len(e.stored)-1]
}

// TestRunStepsEndsAtItsStepCount: a quick run_steps run (each step well
// within the engine's 200 ms progress throttle) ends showing every step
// done — 3/3 for startUrl and two steps, not 1/3 — and each step is an
// item (a screenshot step's names its artifact); a run whose second step fails ends at 3/3 with 1 failed and the
// failed step's item carries the error.
func TestRunStepsEndsAtItsStepCount(t *testing.T) {
	srv := fixture.New(t)
	m := testManager(t)
	env := &throttledEnv{fakeEnv: newEnv(t, mustJSON(t, map[string]any{"startUrl": srv.URL("/form"), "steps": []map[string]any{
		{"action": "type", "selector": "#q", "text": "mug"},
		{"action": "screenshot", "name": "form"},
	}}))}
	ctx, cancel := fixture.Context(t)
	defer cancel()
	if _, err := NewRunSteps(m).Run(ctx, env); err != nil {
		t.Fatal(err)
	}
	if p := env.final(t); p.DoneSteps != 3 || p.TotalSteps != 3 || p.FailedSteps != 0 {
		t.Fatalf("final progress %d/%d (%d failed), want 3/3", p.DoneSteps, p.TotalSteps, p.FailedSteps)
	}
	env.mu.Lock()
	items := append([]engine.Item(nil), env.items...)
	env.mu.Unlock()
	if len(items) != 2 || items[0].Key != "step 0 type" || items[1].Key != "step 1 screenshot" ||
		items[0].Index != 0 || items[1].Index != 1 || items[1].Status != engine.ItemSucceeded {
		t.Fatalf("items %+v, want step 0 type and step 1 screenshot, succeeded", items)
	}
	// The screenshot step's item names its artifact (the dashboard links
	// it from the step's row); the typed text is in no item.
	var shot map[string]any
	if err := json.Unmarshal(items[1].Output, &shot); err != nil || shot["artifactId"] != "art_form.png" || shot["action"] != "screenshot" {
		t.Fatalf("screenshot step output %s (%v), want action screenshot and artifactId art_form.png", items[1].Output, err)
	}
	if strings.Contains(string(items[0].Output), "mug") {
		t.Fatalf("the typed text is in the item: %s", items[0].Output)
	}

	env = &throttledEnv{fakeEnv: newEnv(t, mustJSON(t, map[string]any{"startUrl": srv.URL("/form"), "steps": []map[string]any{
		{"action": "click", "selector": "#go"},
		{"action": "click", "selector": "#missing", "timeoutMs": 300},
	}}))}
	_, err := NewRunSteps(m).Run(ctx, env)
	if engine.CodeOf(err) != engine.ElementNotFound {
		t.Fatalf("run error %v, want ELEMENT_NOT_FOUND", err)
	}
	if p := env.final(t); p.DoneSteps != 3 || p.TotalSteps != 3 || p.FailedSteps != 1 {
		t.Fatalf("final progress %d/%d (%d failed), want 3/3 with 1 failed", p.DoneSteps, p.TotalSteps, p.FailedSteps)
	}
	env.mu.Lock()
	defer env.mu.Unlock()
	if n := len(env.items); n != 2 || env.items[1].Status != engine.ItemFailed || env.items[1].Error == nil ||
		env.items[1].Error.Code != engine.ElementNotFound || env.items[1].Error.Details["stepIndex"] != 1 {
		t.Fatalf("items %+v, want the second failed with ELEMENT_NOT_FOUND at stepIndex 1", env.items)
	}
}
