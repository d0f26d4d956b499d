package engine_test

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/browsertask/browsertask/db"
	"github.com/browsertask/browsertask/engine"
	"github.com/browsertask/browsertask/internal/devtpl"
	"github.com/browsertask/browsertask/internal/fixture"
)

// liveEngines opens two engines on one database: exec (live base set,
// running) executes runs; other only reads and answers, as another
// process would.
func liveEngines(t *testing.T, base string) (exec, other *engine.Engine) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "bt.db")
	open := func() *db.DB {
		s, err := db.Open(context.Background(), path)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { s.Close() })
		return s
	}
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	exec, err := engine.New(engine.Options{Store: open(), Templates: []engine.Template{devtpl.ToolJob{}}, Logger: log,
		Config: engine.Config{PollInterval: 20 * time.Millisecond, ShutdownGrace: 100 * time.Millisecond}})
	if err != nil {
		t.Fatal(err)
	}
	exec.SetLiveBase(base)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { _ = exec.Run(ctx); close(done) }()
	t.Cleanup(func() { cancel(); <-done })
	other, err = engine.New(engine.Options{Store: open(), Templates: []engine.Template{devtpl.ToolJob{}}, Logger: log})
	if err != nil {
		t.Fatal(err)
	}
	return exec, other
}

// TestTakeoverQuestion: a takeover is a question of kind takeover with the
// live view's URL (on the executing process's dashboard), stored as a
// URL-mode elicitation; another process knows where that live view is; an
// MCP "accept" of the URL elicitation does not end it (the person only
// agreed to go there), a value is refused naming confirm, and confirm true
// (Done) ends it.
func TestTakeoverQuestion(t *testing.T) { synctest.Test(t, testTakeoverQuestion) }

func testTakeoverQuestion(t *testing.T) {
	const base = "http://127.0.0.1:7788"
	exec, other := liveEngines(t, base)
	id := submitQuestions(t, exec, `{"tool":"t","ask":[{"requestId":"t1","kind":"takeover","message":"Solve the puzzle"}]}`, 60000)
	run := waitingRun(t, other, id)
	want := base + "/runs/" + id + "#live"
	if q := run.Question; q.Kind != engine.QuestionTakeover || q.URL != want || q.Message != "Solve the puzzle" {
		t.Fatalf("inputRequest %+v, want kind takeover, url %s", q, want)
	}
	pending, err := other.PendingQuestions(t.Context(), id)
	if err != nil || len(pending) != 1 {
		t.Fatalf("pending %v %v", pending, err)
	}
	var req struct {
		Method string `json:"method"`
		Params struct {
			Mode, URL, Message, ElicitationID string
		} `json:"params"`
	}
	if err := json.Unmarshal(pending[0].Request, &req); err != nil || req.Method != "elicitation/create" || req.Params.Mode != "url" ||
		req.Params.URL != want || req.Params.ElicitationID != "t1" {
		t.Fatalf("stored request %s (%v), want a URL-mode elicitation", pending[0].Request, err)
	}
	if w := other.LiveLocation(t.Context(), run); w.Here || w.URL != want || w.PID != os.Getpid() {
		t.Fatalf("live location from another process %+v, want %s served by pid %d", w, want, os.Getpid())
	}
	if w := exec.LiveLocation(t.Context(), run); !w.Here || w.URL != want {
		t.Fatalf("live location from the executing process %+v", w)
	}

	ok, err := other.AnswerQuestionMCP(t.Context(), id, "t1", json.RawMessage(`{"action":"accept"}`))
	if err != nil || !ok {
		t.Fatalf("accept of the URL elicitation: %v %v", ok, err)
	}
	if p, _ := other.PendingQuestions(t.Context(), id); len(p) != 1 {
		t.Fatalf("an accepted URL elicitation ended the takeover (%d pending)", len(p))
	}
	v := "done"
	if _, err := other.AnswerQuestion(t.Context(), id, "t1", engine.Answer{Value: &v}); engine.CodeOf(err) != engine.InvalidParameter ||
		!strings.Contains(err.Error(), "confirm") {
		t.Fatalf("a value for a takeover: %v, want INVALID_PARAMETER naming confirm", err)
	}
	yes := true
	if _, err := other.AnswerQuestion(t.Context(), id, "t1", engine.Answer{Confirm: &yes}); err != nil {
		t.Fatal(err)
	}
	final := finalRun(t, exec, id)
	if final.Status != engine.StatusSucceeded || !strings.Contains(string(final.Result), `"done":true`) {
		t.Fatalf("run %s %s %+v", final.Status, final.Result, final.Error)
	}
}

// TestTakeOverButton: a person takes a running run over on their own
// initiative: the hold starts, the run shows a takeover question, its
// Done releases the hold; only the executing process can start one.
func TestTakeOverButton(t *testing.T) { synctest.Test(t, testTakeOverButton) }

func testTakeOverButton(t *testing.T) {
	exec, other := liveEngines(t, "http://127.0.0.1:7788")
	id := submitQuestions(t, exec, `{"tool":"t","ask":[{"requestId":"q","kind":"text","message":"Anything"}]}`, 60000)
	waitingRun(t, other, id)
	if _, err := other.TakeOver(t.Context(), id, func() func() { return func() {} }); engine.CodeOf(err) != engine.InvalidParameter {
		t.Fatalf("a takeover from another process: %v, want INVALID_PARAMETER", err)
	}
	var held, released atomic.Int32
	q, err := exec.TakeOver(t.Context(), id, func() func() {
		held.Add(1)
		return func() { released.Add(1) }
	})
	if err != nil {
		t.Fatal(err)
	}
	if q.Kind != engine.QuestionTakeover || !strings.HasPrefix(q.RequestID, "takeover-") || held.Load() != 1 {
		t.Fatalf("takeover %+v, held %d", q, held.Load())
	}
	pending, err := other.PendingQuestions(t.Context(), id)
	if err != nil || len(pending) != 2 {
		t.Fatalf("pending %d (%v), want the question and the takeover", len(pending), err)
	}
	again, err := exec.TakeOver(t.Context(), id, func() func() { held.Add(1); return func() {} })
	if err != nil || again.RequestID != q.RequestID || held.Load() != 1 {
		t.Fatalf("a second Take over: %+v %v (held %d), want the open one", again, err, held.Load())
	}
	yes := true
	if _, err := other.AnswerQuestion(t.Context(), id, q.RequestID, engine.Answer{Confirm: &yes}); err != nil {
		t.Fatal(err)
	}
	fixture.WaitUntil(t, "Done to release the hold", func() bool { return released.Load() == 1 })
	ans := "x"
	if _, err := other.AnswerQuestion(t.Context(), id, "q", engine.Answer{Value: &ans}); err != nil {
		t.Fatal(err)
	}
	if final := finalRun(t, exec, id); final.Status != engine.StatusSucceeded {
		t.Fatalf("run %s %+v", final.Status, final.Error)
	}
}

// TestTakeoverWithoutDashboard: a process that serves no dashboard cannot
// ask for a takeover: the run fails saying why, instead of waiting for a
// person who has nowhere to act.
func TestTakeoverWithoutDashboard(t *testing.T) { synctest.Test(t, testTakeoverWithoutDashboard) }

func testTakeoverWithoutDashboard(t *testing.T) {
	exec, _ := liveEngines(t, "")
	id := submitQuestions(t, exec, `{"tool":"t","ask":[{"requestId":"t1","kind":"takeover","message":"Solve it"}]}`, 60000)
	final := finalRun(t, exec, id)
	if final.Status != engine.StatusFailed || final.Error == nil || !strings.Contains(final.Error.Message, "serves no dashboard") {
		t.Fatalf("run %s %+v, want failed: serves no dashboard", final.Status, final.Error)
	}
}
