package acceptance

// Acceptance 4: 100 concurrent submissions with one idempotencyKey create
// exactly one run; after the window (runTtlMs) the key creates a new run.

import (
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/browsertask/browsertask/internal/fixture"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

func TestBlackboxIdempotency100(t *testing.T) {
	t.Parallel()
	// Long enough that the run is still listed on a loaded 2-core machine.
	const ttlMs = 8000
	p := startServe(t, "--run-ttl-ms", fmt.Sprint(ttlMs))
	// Four HTTP sessions, 25 concurrent calls each.
	sessions := make([]*sdk.ClientSession, 4)
	for i := range sessions {
		sessions[i] = connectHTTP(t, p, nil)
	}
	const key = "blackbox-idem-100"
	args := obj{"templateId": "dev_echo", "inputs": obj{"sleepMs": 20, "items": 2},
		"options": obj{"mode": "async", "idempotencyKey": key}}

	type answer struct {
		runID string
		dedup any
		err   error
	}
	answers := make([]answer, 100)
	ctx, cancel := fixture.Context(t) // shared by the calls: t is not for goroutines
	defer cancel()
	var wg sync.WaitGroup
	start := make(chan struct{})
	firstAt := time.Now()
	for i := range answers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			m, isErr, err := tryCall(ctx, sessions[i%len(sessions)], "run_task_template", args)
			if err == nil && isErr {
				err = fmt.Errorf("isError: %v", m)
			}
			id, _ := m["runId"].(string)
			answers[i] = answer{runID: id, dedup: m["deduplicated"], err: err}
		}()
	}
	close(start)
	wg.Wait()

	ids := map[string]int{}
	fresh := 0
	for i, a := range answers {
		if a.err != nil {
			t.Fatalf("call %d: %v", i, a.err)
		}
		ids[a.runID]++
		switch a.dedup {
		case false:
			fresh++
		case true:
		default:
			t.Errorf("call %d: deduplicated %v, want a boolean", i, a.dedup)
		}
	}
	if len(ids) != 1 || fresh != 1 {
		t.Fatalf("100 concurrent submissions: want 1 run and 1 non-deduplicated answer, got %d runs %v and %d fresh", len(ids), ids, fresh)
	}
	cs := sessions[0]
	if n := countRuns(t, cs, obj{"templateId": "dev_echo"}); n != 1 {
		t.Fatalf("list_task_runs total for dev_echo: want 1, got %d", n)
	}
	var first string
	for id := range ids {
		first = id
	}
	done := waitTerminal(t, cs, first)
	if done["status"] != "succeeded" {
		t.Fatalf("the single run ended %v", done["status"])
	}
	// The window ends at the run's expiresAt (epoch ms), which counts from
	// whichever is later: creation or the end of the run.
	expiresAt, _ := done["expiresAt"].(float64)
	if expiresAt < float64(firstAt.UnixMilli()+ttlMs) {
		t.Fatalf("expiresAt %v is before the submission + run TTL (%d)", done["expiresAt"], firstAt.UnixMilli()+ttlMs)
	}
	// Still inside the window after the run finished: deduplicated.
	again := callOK(t, cs, "run_task_template", args)
	if again["runId"] != first || again["deduplicated"] != true {
		t.Fatalf("repeat of a finished run inside the window: want %s deduplicated, got %v", first, again)
	}

	// After the window: a new run.
	time.Sleep(time.Until(time.UnixMilli(int64(expiresAt)).Add(300 * time.Millisecond)))
	next := callOK(t, cs, "run_task_template", args)
	if next["runId"] == first || next["deduplicated"] != false {
		t.Fatalf("submission after the window: want a new run, got %v (old %s)", next, first)
	}
	rep := callOK(t, cs, "run_task_template", args)
	if rep["runId"] != next["runId"] || rep["deduplicated"] != true {
		t.Fatalf("repeat inside the new window: want %v deduplicated, got %v", next["runId"], rep)
	}
	if r := waitTerminal(t, cs, next["runId"].(string)); r["status"] != "succeeded" {
		t.Fatalf("the second run ended %v", r["status"])
	}
}
