package web_test

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/browsertask/browsertask/engine"
	"github.com/browsertask/browsertask/internal/fixture"
)

func TestHistoryListsForgottenRuns(t *testing.T) {
	e := newEnvConfig(t, "", true, engine.Config{PollInterval: 50 * time.Millisecond, ShutdownGrace: 200 * time.Millisecond,
		HeartbeatInterval: 200 * time.Millisecond, RunTTL: time.Millisecond, JanitorInterval: 20 * time.Millisecond})
	ok := e.submit(map[string]any{"items": 2, "content": "hello"})
	failed := e.submit(map[string]any{"fail": true})
	// Both runs end and are forgotten at once (runTtlMs 1 ms); the janitor
	// keeps their history.
	fixture.WaitUntil(t, "both runs in the history", func() bool {
		h, err := e.eng.History(context.Background(), 10, 0)
		if err != nil {
			t.Fatal(err)
		}
		return h.Total == 2
	})
	if code, _ := get(t, e, "/runs/"+ok, nil); code != http.StatusNotFound {
		t.Fatalf("the forgotten run's page: %d, want 404", code)
	}
	code, body := get(t, e, "/history", nil)
	if code != http.StatusOK {
		t.Fatalf("/history: %d", code)
	}
	for _, want := range []string{
		`data-run-id="` + ok + `" data-expired="true"`, `data-run-id="` + failed + `" data-expired="true"`,
		`data-status="succeeded"`, `data-status="failed"`, ">expired<",
		"items 2", "STEP_EXECUTION_FAILED: dev_echo was asked to fail",
		`href="/artifacts/art_`, ">content<", "kept for 7 days",
	} {
		if !strings.Contains(body, want) {
			t.Errorf("/history lacks %q", want)
		}
	}
	if t.Failed() {
		t.Logf("body:\n%s", body)
	}
	// The runs list links it.
	if _, runs := get(t, e, "/", nil); !strings.Contains(runs, `href="/history"`) {
		t.Fatalf("the runs page does not link the history")
	}
}
