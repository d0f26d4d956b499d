package mcp

import (
	"context"
	"log/slog"
	"testing"
	"testing/synctest"
	"time"

	"github.com/browsertask/browsertask/engine"
	"github.com/browsertask/browsertask/internal/fixture"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

func TestRunModes(t *testing.T) {
	synctest.Test(t, testRunModes)
}

func testRunModes(t *testing.T) {
	eng := newEngine(t, engine.Config{AutoSyncBudget: 60000 * time.Millisecond})
	tc := newTestClient(t, eng)
	ctx := context.Background()

	// sync: the full terminal run, mode sync.
	res, sc := tc.call(t, ctx, "run_task_template", runArgs(instantRun, "sync", nil))
	if res.IsError || sc["status"] != "succeeded" || sc["mode"] != "sync" || sc["deduplicated"] != false || sc["result"] == nil {
		t.Fatalf("sync: %v", sc)
	}
	syncID := sc["runId"].(string)
	// A failed run in sync mode: isError, the Run with its error inside.
	res, sc = tc.call(t, ctx, "run_task_template", runArgs(failingRun, "sync", nil))
	if !res.IsError || sc["status"] != "failed" || sc["mode"] != "sync" {
		t.Fatalf("sync failed run: isError=%v %v", res.IsError, sc)
	}
	if e := sc["error"].(map[string]any); e["errorCode"] != "STEP_EXECUTION_FAILED" {
		t.Fatalf("failed run error: %v", e)
	}
	// async: the handle at once.
	res, sc = tc.call(t, ctx, "run_task_template", runArgs(slowRun, "async", nil))
	if res.IsError || sc["mode"] != "async" || sc["status"] != "queued" || sc["deduplicated"] != false || len(sc) != 5 {
		t.Fatalf("async: %v", sc)
	}
	asyncID := sc["runId"].(string)
	// auto (the default), quick run: answered as sync within the budget.
	_, sc = tc.call(t, ctx, "run_task_template", runArgs(instantRun, "", nil))
	if sc["mode"] != "sync" || sc["status"] != "succeeded" {
		t.Fatalf("auto quick: %v", sc)
	}
	autoID := sc["runId"].(string)
	// The requested mode reaches the engine ("" is auto there).
	for id, want := range map[string]engine.Mode{syncID: engine.ModeSync, asyncID: engine.ModeAsync, autoID: engine.ModeAuto} {
		if r, err := eng.Get(ctx, id); err != nil || r.Mode != want {
			t.Fatalf("run %s stored with mode %v (%v), want %s", id, r, err, want)
		}
	}
}

// TestAutoAnswersAsyncOnceTheBudgetElapsed: auto mode waits
// autoSyncBudgetMs for a run that goes on, then answers the handle and
// leaves the run running.
func TestAutoAnswersAsyncOnceTheBudgetElapsed(t *testing.T) {
	synctest.Test(t, testAutoAnswersAsyncOnceTheBudgetElapsed)
}

func testAutoAnswersAsyncOnceTheBudgetElapsed(t *testing.T) {
	const budget = 300 * time.Millisecond
	eng := newEngine(t, engine.Config{AutoSyncBudget: budget})
	tc := newTestClient(t, eng)
	start := time.Now()
	_, sc := tc.call(t, context.Background(), "run_task_template", runArgs(slowRun, "auto", nil))
	took := time.Since(start)
	if sc["mode"] != "async" || sc["status"] == "canceled" || engine.RunStatus(sc["status"].(string)).Terminal() {
		t.Fatalf("auto slow: %v", sc)
	}
	// The promise is about time: never before the budget; the upper bound
	// only catches a wait that ignores it (a loaded machine is slow, not 30 s late).
	if took < budget || took > 30*time.Second {
		t.Fatalf("auto slow answered after %v, want the %v budget", took, budget)
	}
	if r, err := eng.Get(context.Background(), sc["runId"].(string)); err != nil || r.Status.Terminal() {
		t.Fatalf("the budget's expiry ended the run: %+v %v", r, err)
	}
}

func TestIdempotentRepeatAnswersInRequestedMode(t *testing.T) {
	synctest.Test(t, testIdempotentRepeatAnswersInRequestedMode)
}

func testIdempotentRepeatAnswersInRequestedMode(t *testing.T) {
	tc := newTestClient(t, newEngine(t, engine.Config{}))
	ctx := context.Background()
	key := map[string]any{"idempotencyKey": "k1"}
	_, first := tc.call(t, ctx, "run_task_template", runArgs(instantRun, "async", key))
	_, again := tc.call(t, ctx, "run_task_template", runArgs(instantRun, "sync", key))
	if again["runId"] != first["runId"] || again["deduplicated"] != true || again["mode"] != "sync" || again["status"] != "succeeded" {
		t.Fatalf("repeat: first %v, again %v", first, again)
	}
}

// callInBackground starts a run_task_template call with a progress token
// and returns once the server is waiting on its run (the relay's first
// notification is sent just before the wait), with the cancel of the call
// and its outcome.
func callInBackground(t *testing.T, tc *testClient, args map[string]any) (context.CancelFunc, chan error) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	params := &sdk.CallToolParams{Name: "run_task_template", Arguments: args}
	params.SetProgressToken("wait")
	done := make(chan error, 1)
	go func() {
		_, err := tc.cs.CallTool(ctx, params)
		done <- err
	}()
	tc.waitProgress(t, 1)
	return cancel, done
}

// newLoggedClient is newTestClient whose server logs into the returned
// recorder.
func newLoggedClient(t *testing.T, eng Engine) (*testClient, *logRecorder) {
	logs := newLogRecorder()
	return connectClient(t, NewServer(eng, ServerOptions{Version: "test", Logger: slog.New(logs)})), logs
}

// canceledBy returns once run id is terminal and checks it was canceled
// for reason, with one status event saying so.
func canceledBy(t *testing.T, eng *engine.Engine, id, reason string) {
	t.Helper()
	ctx, cancel := fixture.Context(t)
	defer cancel()
	run, err := eng.Wait(ctx, id, nil)
	if err != nil {
		t.Fatal(err)
	}
	if run.Status != engine.StatusCanceled || run.Error == nil || run.Error.Details["reason"] != reason {
		t.Fatalf("run %s ended %s (%+v), want canceled for %q", id, run.Status, run.Error, reason)
	}
	evs, _, _, err := eng.EventsAfter(ctx, id, 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, e := range evs {
		if e.Type == "status" && string(e.Data) == `{"status":"canceled"}` {
			n++
		}
	}
	if n != 1 {
		t.Fatalf("%d canceled status events, want 1: %+v", n, evs)
	}
}

func TestSyncRequestCancellationCancelsRunOnce(t *testing.T) {
	synctest.Test(t, testSyncRequestCancellationCancelsRunOnce)
}

func testSyncRequestCancellationCancelsRunOnce(t *testing.T) {
	eng := newEngine(t, engine.Config{})
	tc, logs := newLoggedClient(t, eng)
	cancel, done := callInBackground(t, tc, runArgs(slowRun, "sync", nil))
	cancel()
	if err := <-done; err == nil {
		t.Fatal("cancelled call returned no error")
	}
	logs.wait(t, "request cancelled; run cancelled")
	canceledBy(t, eng, onlyRun(t, eng).RunID, clientCancelReason)
}

func TestAutoRequestCancellationCancelsRun(t *testing.T) {
	synctest.Test(t, testAutoRequestCancellationCancelsRun)
}

func testAutoRequestCancellationCancelsRun(t *testing.T) {
	eng := newEngine(t, engine.Config{AutoSyncBudget: 60000 * time.Millisecond})
	tc, logs := newLoggedClient(t, eng)
	cancel, done := callInBackground(t, tc, runArgs(slowRun, "auto", nil))
	cancel()
	<-done
	logs.wait(t, "request cancelled; run cancelled")
	canceledBy(t, eng, onlyRun(t, eng).RunID, clientCancelReason)
}

func TestDeduplicatedSyncCancellationLeavesRunAlone(t *testing.T) {
	synctest.Test(t, testDeduplicatedSyncCancellationLeavesRunAlone)
}

func testDeduplicatedSyncCancellationLeavesRunAlone(t *testing.T) {
	eng := newEngine(t, engine.Config{})
	tc, logs := newLoggedClient(t, eng)
	key := map[string]any{"idempotencyKey": "shared"}
	_, first := tc.call(t, context.Background(), "run_task_template", runArgs(slowRun, "async", key))
	cancel, done := callInBackground(t, tc, runArgs(slowRun, "sync", key))
	cancel()
	<-done
	// The server has handled the cancellation once it says so.
	logs.wait(t, "request cancelled; run left alone because it was deduplicated")
	run, err := eng.Get(context.Background(), first["runId"].(string))
	if err != nil || run.Status.Terminal() {
		t.Fatalf("the deduplicated wait's cancellation ended the run: %+v %v", run, err)
	}
}

func TestProgressNotificationsWithToken(t *testing.T) {
	synctest.Test(t, testProgressNotificationsWithToken)
}

func testProgressNotificationsWithToken(t *testing.T) {
	tc := newTestClient(t, newEngine(t, engine.Config{}))
	// 40 items, 20 ms apart: a burst of updates that must be throttled to
	// a few notifications (at most one per progressInterval).
	params := &sdk.CallToolParams{Name: "run_task_template", Arguments: runArgs(map[string]any{"items": 40, "sleepMs": 20}, "sync", nil)}
	params.SetProgressToken("tok-1")
	start := time.Now()
	res, err := tc.cs.CallTool(context.Background(), params)
	elapsed := time.Since(start)
	if err != nil || res.IsError {
		t.Fatalf("result: %+v %v", res, err)
	}
	tc.check(t, "run_task_template", res)
	seen := tc.progressSeen()
	t.Logf("%d notifications in %v", len(seen), elapsed)
	if len(seen) < 3 {
		t.Fatalf("got %d progress notifications, want >= 3", len(seen))
	}
	if max := int(elapsed/progressInterval) + 3; len(seen) > max {
		t.Fatalf("got %d notifications in %v, want <= %d (throttled to ~5/s)", len(seen), elapsed, max)
	}
	for i, p := range seen {
		if p.ProgressToken != "tok-1" {
			t.Fatalf("notification %d token %v", i, p.ProgressToken)
		}
		if i > 0 && p.Progress <= seen[i-1].Progress {
			t.Fatalf("progress did not increase: %v then %v", seen[i-1].Progress, p.Progress)
		}
		if i > 0 && (p.Total != 40 || p.Message == "") {
			t.Fatalf("notification %d: total %v message %q", i, p.Total, p.Message)
		}
	}
}

func TestNoProgressWithoutToken(t *testing.T) {
	synctest.Test(t, testNoProgressWithoutToken)
}

func testNoProgressWithoutToken(t *testing.T) {
	tc := newTestClient(t, newEngine(t, engine.Config{}))
	res, sc := tc.call(t, context.Background(), "run_task_template", runArgs(map[string]any{"items": 3, "sleepMs": 50}, "sync", nil))
	if res.IsError || sc["status"] != "succeeded" {
		t.Fatalf("run: %v", sc)
	}
	if n := len(tc.progressSeen()); n != 0 {
		t.Fatalf("got %d progress notifications without a progressToken", n)
	}
}
