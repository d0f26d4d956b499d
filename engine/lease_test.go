package engine_test

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/browsertask/browsertask/db"
	"github.com/browsertask/browsertask/engine"
	"github.com/browsertask/browsertask/internal/fixture"
)

// startEngine runs an engine on store with tpl until the test ends.
func startEngine(t *testing.T, store engine.Store, tpl engine.Template, cfg engine.Config, now func() int64) *engine.Engine {
	t.Helper()
	if cfg.PollInterval == 0 {
		cfg.PollInterval = 20 * time.Millisecond
	}
	cfg.ShutdownGrace = 100 * time.Millisecond
	eng, err := engine.New(engine.Options{Store: store, Templates: []engine.Template{tpl}, Config: cfg, Now: now,
		Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { _ = eng.Run(ctx); close(done) }()
	t.Cleanup(func() { cancel(); <-done })
	return eng
}

func openStore(t *testing.T) *db.DB {
	t.Helper()
	store, err := db.Open(context.Background(), filepath.Join(t.TempDir(), "bt.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { store.Close() })
	return store
}

func submitAsync(t *testing.T, eng *engine.Engine, tpl, inputs string) string {
	t.Helper()
	res, err := eng.Submit(context.Background(), engine.SubmitRequest{TemplateID: tpl, Inputs: json.RawMessage(inputs), Mode: engine.ModeAsync})
	if err != nil {
		t.Fatal(err)
	}
	return res.Run.RunID
}

func waitRun(t *testing.T, eng *engine.Engine, id string) *engine.Run {
	t.Helper()
	ctx, cancel := fixture.Context(t)
	defer cancel()
	r, err := eng.Wait(ctx, id, nil)
	if err != nil {
		t.Fatalf("wait %s: %v", id, err)
	}
	return r
}

// failingFinish is a store whose first FinishRun fails like a full disk.
type failingFinish struct {
	engine.Store
	failures atomic.Int32
}

func (s *failingFinish) FinishRun(ctx context.Context, f engine.Finish) error {
	if s.failures.Add(1) == 1 {
		return errors.New("database or disk is full (injected)")
	}
	return s.Store.FinishRun(ctx, f)
}

// TestFailedFinalWriteIsRecovered (issue 9, defect 4): a run whose final
// write failed no longer holds its lease (the heartbeat extends only the
// runs the process executes), so it is recovered and finished, and the
// global slot it held is freed — it used to stay running until restart.
func TestFailedFinalWriteIsRecovered(t *testing.T) { synctest.Test(t, testFailedFinalWriteIsRecovered) }

func testFailedFinalWriteIsRecovered(t *testing.T) {
	store := &failingFinish{Store: openStore(t)}
	tpl := newSleep()
	eng := startEngine(t, store, tpl, engine.Config{MaxConcurrentRuns: 1, LeaseDuration: 600 * time.Millisecond,
		HeartbeatInterval: 100 * time.Millisecond, RecoveryInterval: 100 * time.Millisecond}, nil)
	first := submitAsync(t, eng, "test_sleep", `{"ms":1,"items":2}`)
	second := submitAsync(t, eng, "test_sleep", `{"ms":1,"items":1}`)
	for _, id := range []string{first, second} {
		if r := waitRun(t, eng, id); r.Status != engine.StatusSucceeded {
			t.Fatalf("run %s: %s %v", id, r.Status, r.Error)
		}
	}
	if n := store.failures.Load(); n < 3 {
		t.Fatalf("FinishRun called %d times, want the failed one, its retry after recovery and the second run's", n)
	}
	tpl.mu.Lock()
	defer tpl.mu.Unlock()
	// The recovered run resumed from its checkpoints: no item ran twice.
	for k, n := range tpl.ran {
		if n != 1 {
			t.Errorf("%s ran %d times", k, n)
		}
	}
}

// TestPausedProcessDoesNotRunItsRunTwice (issue 9, defect 3): the process's
// clock jumps past the lease while a run executes (what a SIGSTOP or a
// suspended laptop looks like from inside). Its own recovery must not
// requeue the run it is still executing (it used to, and then claimed and
// ran it a second time alongside the first); the lease is renewed instead.
func TestPausedProcessDoesNotRunItsRunTwice(t *testing.T) {
	synctest.Test(t, testPausedProcessDoesNotRunItsRunTwice)
}

func testPausedProcessDoesNotRunItsRunTwice(t *testing.T) {
	var skew atomic.Int64
	now := func() int64 { return time.Now().UnixMilli() + skew.Load() }
	tpl := newSleep()
	eng := startEngine(t, openStore(t), tpl, engine.Config{LeaseDuration: 2 * time.Second,
		HeartbeatInterval: time.Hour, RecoveryInterval: 50 * time.Millisecond}, now)
	id := submitAsync(t, eng, "test_sleep", `{"ms":100,"items":8}`)
	fixture.WaitUntil(t, "the run to start", func() bool { return tpl.running.Load() > 0 })
	skew.Store(5000) // the lease (2 s, never heartbeated) is now expired
	r := waitRun(t, eng, id)
	if r.Status != engine.StatusSucceeded || r.Attempt != 1 {
		t.Fatalf("run: %s attempt %d err %v, want succeeded in attempt 1", r.Status, r.Attempt, r.Error)
	}
	tpl.mu.Lock()
	defer tpl.mu.Unlock()
	for k, n := range tpl.ran {
		if n != 1 {
			t.Errorf("%s ran %d times", k, n)
		}
	}
	if tpl.maxSeen.Load() != 1 {
		t.Errorf("%d executions at once, want 1", tpl.maxSeen.Load())
	}
}

// panicTemplate panics on its first run and succeeds afterwards.
type panicTemplate struct{ calls atomic.Int32 }

func (p *panicTemplate) Info() engine.TemplateInfo {
	return engine.TemplateInfo{TemplateID: "test_panic", Version: 1, Versions: []int{1}, Title: "panic", Description: "test",
		InputSchema: json.RawMessage(`{"type":"object"}`), TrustLevel: "any", Examples: []json.RawMessage{json.RawMessage(`{}`)}}
}
func (p *panicTemplate) Check(json.RawMessage, engine.Profile) error { return nil }
func (p *panicTemplate) Run(context.Context, engine.Env) (*engine.Outcome, error) {
	if p.calls.Add(1) == 1 {
		var s []int
		_ = s[len(s)] // an index out of range: a runtime panic, not a deliberate one
	}
	return &engine.Outcome{Result: map[string]any{"ok": true}}, nil
}

// TestTemplatePanicFailsOnlyItsRun: a panic inside a template fails that
// run with EXECUTION_ERROR "internal error" and the same engine then runs
// another run to success.
func TestTemplatePanicFailsOnlyItsRun(t *testing.T) {
	eng := startEngine(t, openStore(t), &panicTemplate{}, engine.Config{}, nil)
	r := waitRun(t, eng, submitAsync(t, eng, "test_panic", `{}`))
	if r.Status != engine.StatusFailed || r.Error == nil || r.Error.Code != engine.ExecutionError || !strings.Contains(r.Error.Message, "internal error") {
		t.Fatalf("panicking run: %s %+v", r.Status, r.Error)
	}
	if r := waitRun(t, eng, submitAsync(t, eng, "test_panic", `{}`)); r.Status != engine.StatusSucceeded {
		t.Fatalf("next run: %s %+v", r.Status, r.Error)
	}
}

// TestPoisonRunCap: a resumable run whose executions keep ending with their
// process gone is failed with "interrupted N times" at the MaxAttempts-th
// crash instead of being requeued for the next process to die on.
func TestPoisonRunCap(t *testing.T) { synctest.Test(t, testPoisonRunCap) }

func testPoisonRunCap(t *testing.T) {
	ctx := context.Background()
	store := openStore(t)
	// An engine that is not running only submits.
	submitter, err := engine.New(engine.Options{Store: store, Templates: []engine.Template{newSleep()},
		Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		t.Fatal(err)
	}
	id := submitAsync(t, submitter, "test_sleep", `{"ms":1}`)
	// Two "processes" claim the run and vanish (their leases lapse, and
	// recovery requeues it each time); a third claims it and vanishes too.
	for i := 1; i <= 3; i++ {
		now := time.Now().UnixMilli() + int64(i)*100000
		runs, err := store.ClaimRuns(ctx, engine.Claim{OwnerID: "gone", Now: now, LeaseUntil: now + 1, MaxRunning: 10, Max: 1})
		if err != nil || len(runs) != 1 || runs[0].RunID != id {
			t.Fatalf("claim %d: %v %v", i, runs, err)
		}
		expired, err := store.ExpiredLeases(ctx, now+2)
		if err != nil || len(expired) != 1 {
			t.Fatalf("expired %d: %v %v", i, expired, err)
		}
		if expired[0].Crashes != i-1 {
			t.Fatalf("claim %d: crashes %d", i, expired[0].Crashes)
		}
		if i == 3 {
			break // the engine's recovery takes the third crash
		}
		if err := store.RecoverRun(ctx, engine.Recovery{RunID: id, OwnerID: "gone", To: engine.StatusQueued, Now: now + 2}); err != nil {
			t.Fatal(err)
		}
	}
	// A live engine's recovery finds the third crash.
	eng := startEngine(t, store, newSleep(), engine.Config{RecoveryInterval: 20 * time.Millisecond}, func() int64 { return time.Now().UnixMilli() + 400000 })
	r := waitRun(t, eng, id)
	if r.Status != engine.StatusFailed || r.Error == nil || r.Error.Code != engine.ExecutionError || !strings.Contains(r.Error.Message, "interrupted 3 times") {
		t.Fatalf("poisoned run: %s %+v", r.Status, r.Error)
	}
}

// TestIdempotencyKeyReusedWithOtherInputs (issue 9, defect 12): the contract
// returns the first run; the answer now says whether the inputs matched.
func TestIdempotencyKeyReusedWithOtherInputs(t *testing.T) {
	synctest.Test(t, testIdempotencyKeyReusedWithOtherInputs)
}

func testIdempotencyKeyReusedWithOtherInputs(t *testing.T) {
	h := newHarness(t, engine.Config{}, "")
	submit := func(inputs string) *engine.SubmitResult {
		res, err := h.eng.Submit(context.Background(), engine.SubmitRequest{TemplateID: "test_sleep", Inputs: json.RawMessage(inputs), IdempotencyKey: "same"})
		if err != nil {
			t.Fatal(err)
		}
		return res
	}
	first := submit(`{"ms":1,"items":2}`)
	same := submit(`{ "items": 2, "ms": 1 }`) // same value, other spelling
	other := submit(`{"ms":1,"items":3}`)
	if first.Deduplicated || !same.Deduplicated || !same.InputsMatch || !other.Deduplicated || other.InputsMatch {
		t.Fatalf("first dedup=%v; same dedup=%v match=%v; other dedup=%v match=%v",
			first.Deduplicated, same.Deduplicated, same.InputsMatch, other.Deduplicated, other.InputsMatch)
	}
	if other.Run.RunID != first.Run.RunID {
		t.Fatalf("other inputs got run %s, want the first run %s", other.Run.RunID, first.Run.RunID)
	}
}

// TestErrorsDoNotEchoHugeInputs (issue 9, defect 12): a 3 MB value that
// breaks a schema rule is not repeated in the error message.
func TestErrorsDoNotEchoHugeInputs(t *testing.T) { synctest.Test(t, testErrorsDoNotEchoHugeInputs) }

func testErrorsDoNotEchoHugeInputs(t *testing.T) {
	s, err := engine.CompileSchema(json.RawMessage(`{"type":"object","properties":{"a":{"type":"string","pattern":"^x+$"},"b":{"enum":["y"]}}}`))
	if err != nil {
		t.Fatal(err)
	}
	big := strings.Repeat("z", 3<<20)
	doc, _ := json.Marshal(map[string]string{"a": big, "b": big})
	e := engine.AsError(s.Validate(doc, "inputs"))
	if e == nil || e.Code != engine.InvalidParameter {
		t.Fatalf("Validate = %v", e)
	}
	if len(e.Message) > 1000 || !strings.Contains(e.Message, "inputs.a") {
		t.Fatalf("message of %d bytes: %.200s", len(e.Message), e.Message)
	}
}
