package postgres

import (
	"context"
	"log/slog"
	"testing"
	"time"

	"github.com/browsertask/browsertask/engine"
	"github.com/browsertask/browsertask/internal/devtpl"
	"github.com/browsertask/browsertask/internal/fixture"
)

// TestEngineWokenByAnotherProcess: two engines on one database, each on its
// own handle as two daemons would be, with a scheduler poll of one hour. A
// run submitted through engine A (which does not execute runs) is claimed
// and finished by the idle engine B at once: only the NOTIFY could have
// woken B. A's Wait sees the run finish.
func TestEngineWokenByAnotherProcess(t *testing.T) {
	u := testURL(t)
	newEngine := func(d *DB) *engine.Engine {
		cfg := engine.DefaultConfig()
		cfg.PollInterval = time.Hour
		e, err := engine.New(engine.Options{Store: d, Templates: []engine.Template{devtpl.Echo{}}, Config: cfg,
			Logger: slog.New(slog.DiscardHandler)})
		if err != nil {
			t.Fatal(err)
		}
		return e
	}
	hb := openTest(t, u)
	a, b := newEngine(openTest(t, u)), newEngine(hb)
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan struct{})
	engine.Go(ctx, nil, "test.engineB", func() { defer close(done); _ = b.Run(ctx) }, nil)
	t.Cleanup(func() { cancel(); <-done })
	fixture.WaitUntil(t, "engine B listening", hb.Listening)

	sub, err := a.Submit(t.Context(), engine.SubmitRequest{TemplateID: "dev_echo", Inputs: []byte(`{"sleepMs":0}`), Mode: engine.ModeAsync})
	if err != nil {
		t.Fatal(err)
	}
	// Far below the hour-long poll; generous for a loaded machine.
	wctx, wcancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer wcancel()
	run, err := a.Wait(wctx, sub.Run.RunID, nil)
	if err != nil {
		t.Fatalf("waiting on A for the run B should claim: %v", err)
	}
	if run.Status != engine.StatusSucceeded || run.Attempt != 1 {
		t.Fatalf("run = %s attempt %d, want succeeded in attempt 1", run.Status, run.Attempt)
	}
}
