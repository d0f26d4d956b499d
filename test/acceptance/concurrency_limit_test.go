package acceptance

// Acceptance 5 (and the contract item "over the concurrency limit a
// submission is queued and later completes normally"): with
// --max-concurrent-runs 2, eight submissions never run more than two at a
// time, the rest report queued, and all end succeeded.

import (
	"context"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// runSampler polls list_task_runs for running and queued totals until stop.
type runSampler struct {
	maxRunning, sawQueued, samples atomic.Int64
	errs                           chan error
}

func sampleRuns(ctx context.Context, sessions []*sdk.ClientSession, filter obj, every time.Duration) *runSampler {
	s := &runSampler{errs: make(chan error, 1)}
	go func() {
		defer close(s.errs)
		for i := 0; ctx.Err() == nil; i++ {
			cs := sessions[i%len(sessions)]
			for _, st := range []string{"running", "queued"} {
				args := obj{"status": st, "limit": 1}
				for k, v := range filter {
					args[k] = v
				}
				m, isErr, err := tryCall(ctx, cs, "list_task_runs", args)
				if ctx.Err() != nil {
					return
				}
				if err != nil || isErr {
					s.errs <- err
					return
				}
				n := num(m, "total")
				if st == "running" {
					for {
						old := s.maxRunning.Load()
						if n <= old || s.maxRunning.CompareAndSwap(old, n) {
							break
						}
					}
				} else if n > 0 {
					s.sawQueued.Add(1)
				}
			}
			s.samples.Add(1)
			time.Sleep(every)
		}
	}()
	return s
}

func TestBlackboxConcurrencyLimit(t *testing.T) {
	t.Parallel()
	p := startServe(t, "--max-concurrent-runs", "2")
	cs := connectHTTP(t, p, nil)
	ctx, stop := context.WithCancel(context.Background())
	sampler := sampleRuns(ctx, []*sdk.ClientSession{connectHTTP(t, p, nil)}, obj{"templateId": "dev_echo"}, 50*time.Millisecond)

	ids := make([]string, 8)
	statuses := make([]any, 8)
	var wg sync.WaitGroup
	for i := range ids {
		wg.Add(1)
		go func() {
			defer wg.Done()
			cctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			m, isErr, err := tryCall(cctx, cs, "run_task_template", obj{"templateId": "dev_echo",
				"inputs": obj{"sleepMs": 100, "items": 4}, "options": obj{"mode": "async"}})
			if err != nil || isErr {
				t.Errorf("submission %d: %v %v", i, err, m)
				return
			}
			ids[i], _ = m["runId"].(string)
			statuses[i] = m["status"]
		}()
	}
	wg.Wait()
	if t.Failed() {
		stop()
		t.FailNow()
	}
	queuedAnswers := 0
	for _, st := range statuses {
		if st == "queued" {
			queuedAnswers++
		}
	}
	// Just after the burst at most two can be running; the others must say queued.
	list := callOK(t, cs, "list_task_runs", obj{"templateId": "dev_echo"})
	running, queued := 0, 0
	for _, x := range list["runs"].([]any) {
		switch x.(obj)["status"] {
		case "running":
			running++
		case "queued":
			queued++
		}
	}
	if running > 2 {
		t.Errorf("right after 8 submissions: %d running, limit 2", running)
	}
	if queued < 1 && queuedAnswers < 6 {
		t.Errorf("want the runs over the limit reported queued: %d queued listed, %d queued answers", queued, queuedAnswers)
	}
	for _, id := range ids {
		run := waitTerminal(t, cs, id, 30*time.Second)
		if run["status"] != "succeeded" || num(sub(run, "progress"), "doneSteps") != 4 {
			t.Errorf("run %s: want succeeded with 4 steps, got %v %v", id, run["status"], run["progress"])
		}
		if num(sub(run, "metrics"), "queuedMs") < 0 {
			t.Errorf("run %s: queuedMs %v", id, sub(run, "metrics")["queuedMs"])
		}
	}
	stop()
	for err := range sampler.errs {
		t.Errorf("sampler: %v", err)
	}
	if mx := sampler.maxRunning.Load(); mx > 2 || mx < 1 {
		t.Errorf("sampled running count: max %d, want 1..2", mx)
	}
	if sampler.sawQueued.Load() == 0 {
		t.Errorf("the sampler never saw a queued run")
	}
	// The sampler's coverage is shown by what it saw (a running run and a
	// queued one), not by how many samples a busy machine let it take.
	t.Logf("%d samples", sampler.samples.Load())
	if n := countRuns(t, cs, obj{"status": "succeeded"}); n != 8 {
		t.Errorf("succeeded total: want 8, got %d", n)
	}
	t.Logf("queued answers %d, samples %d, max running %d", queuedAnswers, sampler.samples.Load(), sampler.maxRunning.Load())
}
