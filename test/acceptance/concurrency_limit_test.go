package acceptance

// Acceptance 5 (and the contract item "over the concurrency limit a
// submission is queued and later completes normally"): with
// --max-concurrent-runs 2, eight submissions never run more than two at a
// time, the rest report queued, and all end succeeded.
//
// Every run asks a question and holds its slot until it is answered, so
// what runs and what waits is decided by the answers the test gives, not
// by how fast a busy machine lets runs finish: after each answer exactly
// min(2, runs left) run and the rest are queued.

import (
	"context"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/browsertask/browsertask/internal/fixture"
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
	const total, limit = 8, 2
	p := startServe(t, "--max-concurrent-runs", "2")
	cs := connectHTTP(t, p, nil)
	ctx, stop := context.WithCancel(context.Background())
	defer stop()
	// Between the answers, a second client samples the totals as well: no
	// read may ever show more than two running.
	filter := obj{"templateId": "dev_tool_job"}
	sampler := sampleRuns(ctx, []*sdk.ClientSession{connectHTTP(t, p, nil)}, filter, 20*time.Millisecond)

	ids := make([]string, total)
	statuses := make([]any, total)
	var wg sync.WaitGroup
	for i := range ids {
		wg.Add(1)
		go func() {
			defer wg.Done()
			m, isErr, err := tryCall(ctx, cs, "run_task_template", obj{"templateId": "dev_tool_job",
				"inputs": obj{"tool": "limit", "arguments": obj{"n": i}, "ask": []any{
					obj{"requestId": "go", "kind": "confirm", "message": "finish?"}}},
				"options": obj{"mode": "async"}})
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
		t.FailNow()
	}
	for i, st := range statuses {
		if st != "queued" {
			t.Errorf("submission %d answered %v, want queued", i, st)
		}
	}

	left := slices.Clone(ids)
	for len(left) > 0 {
		want := min(limit, len(left))
		asking := waitAsking(t, cs, left, want)
		running, queued := countRuns(t, cs, obj{"templateId": "dev_tool_job", "status": "running"}),
			countRuns(t, cs, obj{"templateId": "dev_tool_job", "status": "queued"})
		if running != int64(want) || queued != int64(len(left)-want) {
			t.Fatalf("%d runs left, %d asking: %d running and %d queued, want %d and %d",
				len(left), len(asking), running, queued, want, len(left)-want)
		}
		// Answer one; its slot goes to the next queued run.
		id := asking[0]
		if a := callOK(t, cs, "answer_task_run", obj{"runId": id, "requestId": "go", "confirm": true}); a["answered"] != true {
			t.Fatalf("answer %s: %v", id, a)
		}
		if run := waitTerminal(t, cs, id); run["status"] != "succeeded" {
			t.Fatalf("run %s after its answer: %v %v", id, run["status"], run["error"])
		}
		left = slices.DeleteFunc(left, func(x string) bool { return x == id })
	}

	stop()
	for err := range sampler.errs {
		t.Errorf("sampler: %v", err)
	}
	if mx := sampler.maxRunning.Load(); mx > limit {
		t.Errorf("sampled running count: max %d, limit %d", mx, limit)
	}
	if n := countRuns(t, cs, obj{"templateId": "dev_tool_job", "status": "succeeded"}); n != total {
		t.Errorf("succeeded total: want %d, got %d", total, n)
	}
	t.Logf("%d samples, max running %d, queued seen in %d", sampler.samples.Load(), sampler.maxRunning.Load(), sampler.sawQueued.Load())
}

// waitAsking waits until want of the runs ids wait for their answer and
// returns them. The runs that do not ask are still queued (checked by the
// caller), so the wait ends on the scheduler's claim, however slow; it
// gives up near the test's deadline (fixture.Context).
func waitAsking(t *testing.T, cs *sdk.ClientSession, ids []string, want int) []string {
	t.Helper()
	ctx, cancel := fixture.Context(t)
	defer cancel()
	for {
		var asking []string
		for _, id := range ids {
			r := getRun(t, cs, id)
			if terminal(r["status"]) {
				t.Fatalf("run %s ended unanswered: %v %v", id, r["status"], r["error"])
			}
			if r["inputRequest"] != nil {
				asking = append(asking, id)
			}
		}
		if len(asking) > want {
			t.Fatalf("%d runs ask at once, limit %d: %v", len(asking), want, asking)
		}
		if len(asking) == want {
			return asking
		}
		select {
		case <-ctx.Done():
			t.Fatalf("%d of %d runs ask near the test's deadline, want %d", len(asking), len(ids), want)
		case <-time.After(20 * time.Millisecond):
		}
	}
}
