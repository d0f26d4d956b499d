package mcp

import (
	"context"
	"testing"
	"time"

	"github.com/browsertask/browsertask/engine"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

func runArgs(tpl, mode string, extra map[string]any) map[string]any {
	opts := map[string]any{"mode": mode}
	for k, v := range extra {
		opts[k] = v
	}
	return map[string]any{"templateId": tpl, "options": opts}
}

func TestRunModes(t *testing.T) {
	f := newFakeEngine()
	tc := newTestClient(t, f)
	ctx := context.Background()

	// sync: the full terminal run, mode sync.
	res, sc := tc.call(t, ctx, "run_task_template", runArgs("instant", "sync", nil))
	if res.IsError || sc["status"] != "succeeded" || sc["mode"] != "sync" || sc["deduplicated"] != false || sc["result"] == nil {
		t.Fatalf("sync: %v", sc)
	}
	// A failed run in sync mode: isError, the Run with its error inside.
	res, sc = tc.call(t, ctx, "run_task_template", runArgs("failing", "sync", nil))
	if !res.IsError || sc["status"] != "failed" || sc["mode"] != "sync" {
		t.Fatalf("sync failed run: isError=%v %v", res.IsError, sc)
	}
	if e := sc["error"].(map[string]any); e["errorCode"] != "STEP_EXECUTION_FAILED" {
		t.Fatalf("failed run error: %v", e)
	}
	// async: the handle at once.
	res, sc = tc.call(t, ctx, "run_task_template", runArgs("slow", "async", nil))
	if res.IsError || sc["mode"] != "async" || sc["status"] != "queued" || sc["deduplicated"] != false || len(sc) != 5 {
		t.Fatalf("async: %v", sc)
	}
	// auto, quick run: answered as sync.
	_, sc = tc.call(t, ctx, "run_task_template", map[string]any{"templateId": "instant"})
	if sc["mode"] != "sync" || sc["status"] != "succeeded" {
		t.Fatalf("auto quick: %v", sc)
	}
	// auto, slow run: answered as async once the budget (300 ms) elapsed.
	start := time.Now()
	_, sc = tc.call(t, ctx, "run_task_template", runArgs("slow", "auto", nil))
	took := time.Since(start)
	if sc["mode"] != "async" || sc["status"] != "queued" {
		t.Fatalf("auto slow: %v", sc)
	}
	if took < 300*time.Millisecond || took > 3*time.Second {
		t.Fatalf("auto slow answered after %v, want about the 300ms budget", took)
	}
	if _, cancels, _ := f.snapshot(); len(cancels) != 0 {
		t.Fatalf("auto budget expiry must not cancel the run: %v", cancels)
	}
	// The requested mode reaches the engine.
	f.mu.Lock()
	modes := []engine.Mode{f.submits[0].Mode, f.submits[2].Mode, f.submits[3].Mode}
	f.mu.Unlock()
	if modes[0] != engine.ModeSync || modes[1] != engine.ModeAsync || modes[2] != engine.ModeAuto {
		t.Fatalf("modes passed to Submit: %v", modes)
	}
}

func TestIdempotentRepeatAnswersInRequestedMode(t *testing.T) {
	f := newFakeEngine()
	tc := newTestClient(t, f)
	ctx := context.Background()
	key := map[string]any{"idempotencyKey": "k1"}
	_, first := tc.call(t, ctx, "run_task_template", runArgs("instant", "async", key))
	_, again := tc.call(t, ctx, "run_task_template", runArgs("instant", "sync", key))
	if again["runId"] != first["runId"] || again["deduplicated"] != true || again["mode"] != "sync" || again["status"] != "succeeded" {
		t.Fatalf("repeat: first %v, again %v", first, again)
	}
}

// startSlowSync starts a sync run_task_template call of the slow template in
// the background and returns its cancel func and the run id, once the
// server is waiting on the run.
func startSlowSync(t *testing.T, f *fakeEngine, tc *testClient, args map[string]any) (context.CancelFunc, chan error) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		_, err := tc.cs.CallTool(ctx, &sdk.CallToolParams{Name: "run_task_template", Arguments: args})
		done <- err
	}()
	eventually(t, 3*time.Second, "server waiting on the run", func() bool { _, _, w := f.snapshot(); return w == 1 })
	return cancel, done
}

func TestSyncRequestCancellationCancelsRunOnce(t *testing.T) {
	f := newFakeEngine()
	tc := newTestClient(t, f)
	cancel, done := startSlowSync(t, f, tc, runArgs("slow", "sync", nil))
	cancel()
	if err := <-done; err == nil {
		t.Fatal("cancelled call returned no error")
	}
	eventually(t, 3*time.Second, "Cancel call", func() bool { _, c, _ := f.snapshot(); return len(c) > 0 })
	time.Sleep(100 * time.Millisecond)
	_, cancels, waiting := f.snapshot()
	if len(cancels) != 1 || cancels[0].runID != "run_0001" || cancels[0].reason != "client cancelled the request" {
		t.Fatalf("cancels = %+v, want exactly one for run_0001", cancels)
	}
	if waiting != 0 {
		t.Fatalf("%d waits still running", waiting)
	}
	run, _ := f.Get(context.Background(), "run_0001")
	if run.Status != engine.StatusCanceled {
		t.Fatalf("run status %s, want canceled", run.Status)
	}
}

func TestAutoRequestCancellationCancelsRun(t *testing.T) {
	f := newFakeEngine()
	f.budgetMs = 10000
	tc := newTestClient(t, f)
	cancel, done := startSlowSync(t, f, tc, runArgs("slow", "auto", nil))
	cancel()
	<-done
	eventually(t, 3*time.Second, "Cancel call", func() bool { _, c, _ := f.snapshot(); return len(c) == 1 })
}

func TestDeduplicatedSyncCancellationLeavesRunAlone(t *testing.T) {
	f := newFakeEngine()
	tc := newTestClient(t, f)
	key := map[string]any{"idempotencyKey": "shared"}
	_, first := tc.call(t, context.Background(), "run_task_template", runArgs("slow", "async", key))
	cancel, done := startSlowSync(t, f, tc, runArgs("slow", "sync", key))
	cancel()
	<-done
	eventually(t, 3*time.Second, "wait to end", func() bool { _, _, w := f.snapshot(); return w == 0 })
	time.Sleep(100 * time.Millisecond)
	if _, cancels, _ := f.snapshot(); len(cancels) != 0 {
		t.Fatalf("deduplicated wait cancelled the run: %+v", cancels)
	}
	run, _ := f.Get(context.Background(), first["runId"].(string))
	if run.Status != engine.StatusQueued {
		t.Fatalf("run status %s, want queued", run.Status)
	}
}

func TestProgressNotificationsWithToken(t *testing.T) {
	f := newFakeEngine()
	tc := newTestClient(t, f)
	params := &sdk.CallToolParams{Name: "run_task_template", Arguments: runArgs("slow", "sync", nil)}
	params.SetProgressToken("tok-1")
	resc := make(chan *sdk.CallToolResult, 1)
	go func() {
		res, err := tc.cs.CallTool(context.Background(), params)
		if err != nil {
			t.Error(err)
		}
		resc <- res
	}()
	eventually(t, 3*time.Second, "server waiting", func() bool { _, _, w := f.snapshot(); return w == 1 })
	// A burst of 40 updates over ~400 ms must be throttled to a few notifications.
	start := time.Now()
	for i := 1; i <= 40; i++ {
		f.setProgress("run_0001", i, 40)
		time.Sleep(10 * time.Millisecond)
	}
	eventually(t, 3*time.Second, "final progress", func() bool {
		seen := tc.progressSeen()
		return len(seen) > 0 && seen[len(seen)-1].Progress == 40
	})
	elapsed := time.Since(start)
	f.finish("run_0001")
	res := <-resc
	if res == nil || res.IsError {
		t.Fatalf("result: %+v", res)
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
	f := newFakeEngine()
	tc := newTestClient(t, f)
	cancel, done := startSlowSync(t, f, tc, runArgs("slow", "sync", nil))
	defer cancel()
	f.setProgress("run_0001", 1, 2)
	f.finish("run_0001")
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if n := len(tc.progressSeen()); n != 0 {
		t.Fatalf("got %d progress notifications without a progressToken", n)
	}
}
