package engine_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"testing"
	"testing/synctest"
	"time"

	"github.com/browsertask/browsertask/db"
	"github.com/browsertask/browsertask/engine"
	"github.com/browsertask/browsertask/internal/devtpl"
	"github.com/browsertask/browsertask/internal/fixture"
)

// personEngines opens two engines on one database file: the first executes
// runs, the second only answers (another process, as the CLI or a second
// MCP client would be). It returns them and the database path.
func personEngines(t *testing.T, cfg engine.Config) (exec, other *engine.Engine, path string) {
	t.Helper()
	path = filepath.Join(t.TempDir(), "bt.db")
	open := func() *db.DB {
		s, err := db.Open(context.Background(), path)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { s.Close() })
		return s
	}
	exec = startEngine(t, open(), devtpl.ToolJob{}, cfg, nil)
	other, err := engine.New(engine.Options{Store: open(), Templates: []engine.Template{devtpl.ToolJob{}},
		Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		t.Fatal(err)
	}
	return exec, other, path
}

func submitQuestions(t *testing.T, eng *engine.Engine, inputs string, timeoutMs int64) string {
	t.Helper()
	sub, err := eng.Submit(context.Background(), engine.SubmitRequest{TemplateID: devtpl.ToolJobID,
		Inputs: json.RawMessage(inputs), Mode: engine.ModeAsync, TimeoutMs: timeoutMs})
	if err != nil {
		t.Fatal(err)
	}
	return sub.Run.RunID
}

// waitingRun waits until the run shows an inputRequest and returns the run.
func waitingRun(t *testing.T, eng *engine.Engine, id string) *engine.Run {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	run, err := eng.WaitSettled(ctx, id, nil)
	if err != nil {
		t.Fatal(err)
	}
	if run.Question == nil {
		t.Fatalf("run ended without asking: %+v %+v", run, run.Error)
	}
	return run
}

func finalRun(t *testing.T, eng *engine.Engine, id string) *engine.Run {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	run, err := eng.Wait(ctx, id, nil)
	if err != nil {
		t.Fatal(err)
	}
	return run
}

// TestSecretAnswerFromAnotherProcess: a secret question is shown on the run
// (inputRequest, progress.message), answered through a second engine on the
// database, reaches the run, and the value is nowhere in the database
// files or the events; the run's result shows it masked.
func TestSecretAnswerFromAnotherProcess(t *testing.T) {
	synctest.Test(t, testSecretAnswerFromAnotherProcess)
}

func testSecretAnswerFromAnotherProcess(t *testing.T) {
	const otp = "731902"
	exec, other, path := personEngines(t, engine.Config{})
	id := submitQuestions(t, exec, `{"tool":"t","ask":[{"requestId":"otp","kind":"secret","message":"Enter the code from your authenticator app"}]}`, 0)
	run := waitingRun(t, other, id)
	want := engine.WaitingQuestion{RequestID: "otp", Kind: "secret", Message: "Enter the code from your authenticator app",
		RequestedAt: run.Question.RequestedAt, ExpiresAt: run.Question.RequestedAt + engine.DefaultQuestionTimeout.Milliseconds()}
	if *run.Question != want || run.Status != engine.StatusRunning {
		t.Fatalf("inputRequest = %+v (status %s), want %+v", run.Question, run.Status, want)
	}
	if run.Progress.Message != "waiting for input: Enter the code from your authenticator app" {
		t.Errorf("progress.message = %q", run.Progress.Message)
	}
	list, err := other.List(context.Background(), engine.ListQuery{})
	if err != nil || len(list.Runs) != 1 || list.Runs[0].Question == nil || list.Runs[0].Question.RequestID != "otp" {
		t.Fatalf("list = %+v, %v", list, err)
	}
	yes := true
	if _, err := other.AnswerQuestion(context.Background(), id, "otp", engine.Answer{Confirm: &yes}); engine.CodeOf(err) != engine.InvalidParameter {
		t.Errorf("confirm for a secret question: %v, want INVALID_PARAMETER", err)
	}
	v := otp
	if _, err := other.AnswerQuestion(context.Background(), id, "", engine.Answer{Value: &v}); err != nil {
		t.Fatal(err)
	}
	final := finalRun(t, exec, id)
	if final.Status != engine.StatusSucceeded || final.Question != nil {
		t.Fatalf("run = %+v %+v", final, final.Error)
	}
	var res struct {
		Answers map[string]map[string]string `json:"answers"`
	}
	if err := json.Unmarshal(final.Result, &res); err != nil || res.Answers["otp"]["value"] != engine.SecretMask {
		t.Fatalf("result = %s (%v); want the value masked", final.Result, err)
	}
	evs, _, _, err := other.EventsAfter(context.Background(), id, 0, engine.MaxEventLimit)
	if err != nil {
		t.Fatal(err)
	}
	kinds := map[string]int{}
	for _, e := range evs {
		kinds[e.Type]++
		if bytes.Contains(e.Data, []byte(otp)) {
			t.Errorf("event %s holds the code: %s", e.Type, e.Data)
		}
	}
	if kinds["input"] != 2 {
		t.Errorf("input events = %d, want 2 (asked, answered): %v", kinds["input"], kinds)
	}
	for _, f := range []string{path, path + "-wal", path + "-shm"} {
		b, err := os.ReadFile(f)
		if err != nil && !os.IsNotExist(err) {
			t.Fatal(err)
		}
		if bytes.Contains(b, []byte(otp)) {
			t.Errorf("%s holds the code in clear", filepath.Base(f))
		}
	}
}

// TestQuestionKinds: a text answer and a confirm reach the run; answers
// that do not fit are refused with the field named.
func TestQuestionKinds(t *testing.T) { synctest.Test(t, testQuestionKinds) }

func testQuestionKinds(t *testing.T) {
	exec, other, _ := personEngines(t, engine.Config{})
	id := submitQuestions(t, exec, `{"tool":"t","ask":[{"requestId":"name","kind":"text","message":"Your name?"},{"requestId":"go","kind":"confirm","message":"Buy it?"}]}`, 0)
	waitingRun(t, other, id)
	fixture.WaitUntil(t, "both questions to be pending", func() bool {
		p, err := other.PendingQuestions(context.Background(), id)
		if err != nil {
			t.Fatal(err)
		}
		return len(p) == 2
	})
	v, yes := "Ada", true
	cases := []struct {
		name, runID, requestID string
		a                      engine.Answer
		code                   engine.ErrorCode
		field                  string
	}{
		{"unknown run", "run_nope", "name", engine.Answer{Value: &v}, engine.RunNotFound, ""},
		{"unknown request", id, "nope", engine.Answer{Value: &v}, engine.InvalidParameter, "requestId"},
		{"two waiting, none named", id, "", engine.Answer{Value: &v}, engine.InvalidParameter, "requestId"},
		{"value for confirm", id, "go", engine.Answer{Value: &v}, engine.InvalidParameter, "confirm"},
		{"nothing for text", id, "name", engine.Answer{}, engine.InvalidParameter, "value"},
	}
	for _, c := range cases {
		_, err := other.AnswerQuestion(context.Background(), c.runID, c.requestID, c.a)
		var e *engine.Error
		if engine.CodeOf(err) != c.code {
			t.Errorf("%s: %v, want %s", c.name, err, c.code)
		} else if c.field != "" && (!asError(err, &e) || e.Details["field"] != c.field) {
			t.Errorf("%s: details %+v, want field %s", c.name, e, c.field)
		}
	}
	if _, err := other.AnswerQuestion(context.Background(), id, "name", engine.Answer{Value: &v}); err != nil {
		t.Fatal(err)
	}
	// The message names the question still open, not the one answered.
	fixture.WaitUntil(t, `progress "waiting for input: Buy it?" after one of two answers`, func() bool {
		run, err := other.Get(context.Background(), id)
		if err != nil {
			t.Fatal(err)
		}
		return run.Progress.Message == "waiting for input: Buy it?" && run.Question != nil && run.Question.RequestID == "go"
	})
	if _, err := other.AnswerQuestion(context.Background(), id, "go", engine.Answer{Confirm: &yes}); err != nil {
		t.Fatal(err)
	}
	final := finalRun(t, exec, id)
	if final.Status != engine.StatusSucceeded {
		t.Fatalf("run = %+v %+v", final, final.Error)
	}
	var res struct {
		Answers map[string]map[string]any `json:"answers"`
	}
	if err := json.Unmarshal(final.Result, &res); err != nil || res.Answers["name"]["value"] != "Ada" || res.Answers["go"]["confirm"] != true {
		t.Fatalf("result = %s (%v)", final.Result, err)
	}
	if _, err := other.AnswerQuestion(context.Background(), id, "", engine.Answer{Value: &v}); engine.CodeOf(err) != engine.InvalidParameter {
		t.Errorf("answer to a finished run: %v, want INVALID_PARAMETER", err)
	}
}

// TestWaitDoesNotCountAgainstTimeout: a run with timeoutMs 400 that waits
// longer than that for its answer still succeeds; the same run with nobody
// answering stops at the input timeout with reason "no answer".
func TestWaitDoesNotCountAgainstTimeout(t *testing.T) {
	synctest.Test(t, testWaitDoesNotCountAgainstTimeout)
}

func testWaitDoesNotCountAgainstTimeout(t *testing.T) {
	exec, other, _ := personEngines(t, engine.Config{})
	id := submitQuestions(t, exec, `{"tool":"t","ask":[{"requestId":"go","kind":"confirm","message":"Go on?"}]}`, 400)
	run := waitingRun(t, other, id)
	// Wait on the run's own clock past its timeoutMs before answering.
	for time.Now().UnixMilli() < run.Question.RequestedAt+800 {
		time.Sleep(50 * time.Millisecond)
	}
	yes := true
	if _, err := other.AnswerQuestion(context.Background(), id, "go", engine.Answer{Confirm: &yes}); err != nil {
		t.Fatalf("answer after the run's timeoutMs: %v", err)
	}
	if final := finalRun(t, exec, id); final.Status != engine.StatusSucceeded {
		t.Fatalf("run = %s %+v, want succeeded (the wait is not the run's time)", final.Status, final.Error)
	}
}

func asError(err error, target **engine.Error) bool { return errors.As(err, target) }
