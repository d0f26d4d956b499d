package acceptance

// Acceptance 8: a `serve` and an `mcp` (stdio) on one database file act as
// peers: the global maxConcurrentRuns holds across both, and a run submitted
// through one is read and cancelled through the other, whose owner stops it.

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/browsertask/browsertask/internal/fixture"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

func TestBlackboxTwoProcesses(t *testing.T) {
	t.Parallel()
	srv := startServe(t, "--max-concurrent-runs", "2")
	httpCS := connectHTTP(t, srv, nil)
	stdioCS, stdioProc := startStdio(t, "--db", srv.db, "--max-concurrent-runs", "2")

	ctx, stop := context.WithCancel(context.Background())
	defer stop()
	sampler := sampleRuns(ctx, []*sdk.ClientSession{connectHTTP(t, srv, nil), stdioCS}, nil, 50*time.Millisecond)

	ids := make([]string, 8)
	cctx, cancel := fixture.Context(t) // shared by the submissions: t is not for goroutines
	defer cancel()
	var wg sync.WaitGroup
	for i := range ids {
		wg.Add(1)
		go func() {
			defer wg.Done()
			cs := httpCS
			if i%2 == 1 {
				cs = stdioCS
			}
			m, isErr, err := tryCall(cctx, cs, "run_task_template", obj{"templateId": "dev_echo",
				"inputs": obj{"sleepMs": 100, "items": 4}, "options": obj{"mode": "async"}})
			if err != nil || isErr {
				t.Errorf("submission %d: %v %v", i, err, m)
				return
			}
			ids[i], _ = m["runId"].(string)
		}()
	}
	wg.Wait()
	if t.Failed() {
		t.FailNow()
	}
	for i, id := range ids {
		// Each run is read through the process it was not submitted to.
		cs := stdioCS
		if i%2 == 1 {
			cs = httpCS
		}
		run := waitTerminal(t, cs, id)
		if run["status"] != "succeeded" {
			t.Errorf("run %s: %v %v", id, run["status"], run["error"])
		}
	}
	stop()
	for err := range sampler.errs {
		t.Errorf("sampler: %v", err)
	}
	if mx := sampler.maxRunning.Load(); mx > 2 {
		t.Errorf("sampled running count across two processes: max %d, limit 2", mx)
	}
	if sampler.sawQueued.Load() == 0 {
		t.Errorf("the sampler never saw a queued run")
	}
	for _, cs := range []*sdk.ClientSession{httpCS, stdioCS} {
		if n := countRuns(t, cs, obj{"status": "succeeded"}); n != 8 {
			t.Errorf("succeeded total: want 8 through both processes, got %d", n)
		}
	}
	t.Logf("samples %d, max running %d", sampler.samples.Load(), sampler.maxRunning.Load())

	// Submitted through stdio, read and cancelled through HTTP.
	id := submitAsync(t, stdioCS, "dev_echo", obj{"sleepMs": 100, "items": 200}, nil)
	waitRun(t, httpCS, id, "running with progress", func(r obj) bool {
		return r["status"] == "running" && num(sub(r, "progress"), "doneSteps") >= 2
	})
	c := callOK(t, httpCS, "cancel_task_run", obj{"runId": id, "reason": "cross-process cancel"})
	if c["success"] != true || c["status"] != "canceled" {
		t.Fatalf("cross-process cancel: %v", c)
	}
	for _, cs := range []*sdk.ClientSession{httpCS, stdioCS} {
		if r := getRun(t, cs, id); r["status"] != "canceled" || errCode(r) != "RUN_CANCELED" {
			t.Fatalf("after the cancel: %v %v", r["status"], r["error"])
		}
	}
	// The owner notices within its heartbeat and stops: doneSteps freezes.
	time.Sleep(700 * time.Millisecond)
	d1 := num(sub(getRun(t, stdioCS, id), "progress"), "doneSteps")
	time.Sleep(time.Second)
	r := getRun(t, stdioCS, id)
	if d2 := num(sub(r, "progress"), "doneSteps"); d2 != d1 || r["status"] != "canceled" {
		t.Errorf("doneSteps still growing after the cancel: %d -> %d (status %v)", d1, d2, r["status"])
	}
	// The owner (whichever process logged "run started" for it) logs that it
	// stopped the run's work.
	owner := srv
	if stdioProc.logLine("run started", id) {
		owner = stdioProc
	} else if !srv.logLine("run started", id) {
		t.Fatalf("neither process logged starting run %s", id)
	}
	t.Logf("run %s was owned by the %s process", id, owner.cmd.Args[1])
	if !owner.logLine("run stopped", id) {
		t.Errorf("the owner (%s) never logged stopping run %s after the cancel", owner.cmd.Args[1], id)
	}
}
