package engine_test

import (
	"context"
	"encoding/json"
	"testing"
	"testing/synctest"
	"time"

	"github.com/browsertask/browsertask/engine"
	"github.com/browsertask/browsertask/internal/devtpl"
	"github.com/browsertask/browsertask/internal/fixture"
)

// askingEngine runs the engine with the dev_tool_job template.
func askingEngine(t *testing.T, cfg engine.Config) *engine.Engine {
	t.Helper()
	return startEngine(t, openStore(t), devtpl.ToolJob{}, cfg, nil)
}

const askInputs = `{"tool":"t","ask":[{"requestId":"confirm","message":"Go on?","request":{"method":"elicitation/create","params":{"message":"Go on?"}}}]}`

// waitPending waits until run id asks something and returns it.
func waitPending(t *testing.T, eng *engine.Engine, id string) []engine.Question {
	t.Helper()
	var p []engine.Question
	fixture.WaitUntil(t, "run "+id+" to ask", func() bool {
		var err error
		if p, err = eng.PendingQuestions(context.Background(), id); err != nil {
			t.Fatal(err)
		}
		return len(p) > 0
	})
	return p
}

func submitAsk(t *testing.T, eng *engine.Engine) string {
	t.Helper()
	sub, err := eng.Submit(context.Background(), engine.SubmitRequest{TemplateID: devtpl.ToolJobID, Inputs: json.RawMessage(askInputs), Mode: engine.ModeAsync})
	if err != nil {
		t.Fatal(err)
	}
	return sub.Run.RunID
}

// TestAskWaitsForTheAnswer: the run stays running while it waits, the
// answer reaches it, and an answer to a question no longer outstanding is
// refused (false), not stored.
func TestAskWaitsForTheAnswer(t *testing.T) {
	eng := askingEngine(t, engine.Config{})
	id := submitAsk(t, eng)
	p := waitPending(t, eng, id)
	if len(p) != 1 || p[0].RequestID != "confirm" || p[0].Message != "Go on?" || p[0].ExpiresAt-p[0].RequestedAt != engine.DefaultQuestionTimeout.Milliseconds() {
		t.Fatalf("pending = %+v", p)
	}
	if run, _ := eng.Get(context.Background(), id); run.Status != engine.StatusRunning {
		t.Fatalf("a waiting run is %s, want running", run.Status)
	}
	ok, err := eng.AnswerQuestionMCP(context.Background(), id, "confirm", json.RawMessage(`{"action":"accept","content":{"confirm":true}}`))
	if err != nil || !ok {
		t.Fatalf("AnswerQuestionMCP = %v, %v", ok, err)
	}
	ctx, cancel := fixture.Context(t)
	defer cancel()
	run, err := eng.Wait(ctx, id, nil)
	if err != nil || run.Status != engine.StatusSucceeded {
		t.Fatalf("run = %+v, %v", run, err)
	}
	var res struct {
		Answers map[string]json.RawMessage `json:"answers"`
	}
	if err := json.Unmarshal(run.Result, &res); err != nil || string(res.Answers["confirm"]) != `{"action":"accept","content":{"confirm":true}}` {
		t.Fatalf("result = %s (%v)", run.Result, err)
	}
	if ok, err := eng.AnswerQuestionMCP(context.Background(), id, "confirm", json.RawMessage(`{"action":"decline"}`)); ok || err != nil {
		t.Fatalf("second answer = %v, %v; want false, nil", ok, err)
	}
	if _, err := eng.AnswerQuestionMCP(context.Background(), "run_nope", "confirm", json.RawMessage(`{}`)); engine.CodeOf(err) != engine.RunNotFound {
		t.Fatalf("answer to an unknown run: %v", err)
	}
}

// TestAskWithoutAnswerTimesOut: nobody answers within the input timeout:
// RUN_TIMEOUT with details.reason "no answer".
func TestAskWithoutAnswerTimesOut(t *testing.T) { synctest.Test(t, testAskWithoutAnswerTimesOut) }

func testAskWithoutAnswerTimesOut(t *testing.T) {
	eng := askingEngine(t, engine.Config{QuestionTimeout: 300 * time.Millisecond})
	id := submitAsk(t, eng)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	run, err := eng.Wait(ctx, id, nil)
	if err != nil || run.Status != engine.StatusFailed || run.Error == nil || run.Error.Code != engine.RunTimeout ||
		run.Error.Details["reason"] != "no answer" {
		t.Fatalf("run = %+v %+v, %v", run, run.Error, err)
	}
	if p, _ := eng.PendingQuestions(context.Background(), id); len(p) != 0 {
		t.Fatalf("an expired question is still pending: %+v", p)
	}
}

// TestCancelWhileAsking: cancel ends a waiting run within 2 s.
func TestCancelWhileAsking(t *testing.T) { synctest.Test(t, testCancelWhileAsking) }

func testCancelWhileAsking(t *testing.T) {
	eng := askingEngine(t, engine.Config{})
	id := submitAsk(t, eng)
	waitPending(t, eng, id)
	start := time.Now()
	if _, err := eng.Cancel(context.Background(), id, "test"); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	run, err := eng.Wait(ctx, id, nil)
	if err != nil || run.Status != engine.StatusCanceled {
		t.Fatalf("run = %+v, %v", run, err)
	}
	if d := time.Since(start); d > 2*time.Second {
		t.Fatalf("cancel took %s", d)
	}
}
