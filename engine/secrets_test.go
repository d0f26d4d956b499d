package engine_test

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/browsertask/browsertask/db"
	"github.com/browsertask/browsertask/engine"
)

// secretTemplate has a schema-marked password and echoes it everywhere a
// careless template could: result, error, item, progress, text artifact
// and log. It records the password it received.
type secretTemplate struct {
	mu  sync.Mutex
	got []string
}

func (s *secretTemplate) Info() engine.TemplateInfo {
	return engine.TemplateInfo{
		TemplateID: "test_secret", Version: 1, Versions: []int{1}, Title: "secret", Description: "test",
		InputSchema: json.RawMessage(`{"type":"object","additionalProperties":false,"required":["user","password"],"properties":{
			"user":{"type":"string"},"password":{"type":"string","format":"password"},
			"extra":{"type":"array","items":{"type":"object","properties":{"token":{"type":"string","x-secret":true}}}},
			"fail":{"type":"boolean"}}}`),
		TrustLevel: "any",
	}
}

func (s *secretTemplate) Check(json.RawMessage, engine.Profile) error { return nil }

func (s *secretTemplate) Run(ctx context.Context, env engine.Env) (*engine.Outcome, error) {
	var in struct {
		User     string `json:"user"`
		Password string `json:"password"`
		Fail     bool   `json:"fail"`
	}
	_ = json.Unmarshal(env.Inputs(), &in)
	s.mu.Lock()
	s.got = append(s.got, in.Password)
	s.mu.Unlock()
	env.Logger().Info("logging in", "password", in.Password, "msg2", "pw="+in.Password)
	if err := env.Checkpoint(ctx, engine.Item{Key: "k-" + in.Password, Status: engine.ItemSucceeded,
		Output: json.RawMessage(`{"echo":"` + in.Password + `"}`)}, engine.Progress{DoneSteps: 1, TotalSteps: 1, Message: "typed " + in.Password}); err != nil {
		return nil, err
	}
	if _, err := env.PutArtifact(ctx, "echo.txt", "text/plain", []byte("the password is "+in.Password)); err != nil {
		return nil, err
	}
	if in.Fail {
		return nil, engine.Errorf(engine.StepExecutionFailed, "login as %s with %s failed", in.User, in.Password).
			WithDetails(map[string]any{"tried": in.Password})
	}
	return &engine.Outcome{Result: map[string]any{"user": in.User, "echo": in.Password, "sentence": "pw " + in.Password + " ok"}}, nil
}

// TestSecretsNeverStored: the template gets the real password, while the
// database file, events, results, errors, artifacts and logs only ever see
// "***".
func TestSecretsNeverStored(t *testing.T) { synctest.Test(t, testSecretsNeverStored) }

func testSecretsNeverStored(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "bt.db")
	store, err := db.Open(context.Background(), path)
	if err != nil {
		t.Fatal(err)
	}
	var logs bytes.Buffer
	var logMu sync.Mutex
	tpl := &secretTemplate{}
	eng, err := engine.New(engine.Options{Store: store, Templates: []engine.Template{tpl},
		Config: engine.Config{PollInterval: 20 * time.Millisecond, ShutdownGrace: 100 * time.Millisecond},
		Logger: slog.New(slog.NewTextHandler(lockedWriter{&logs, &logMu}, nil))})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { _ = eng.Run(ctx); close(done) }()
	const pw, token = "Sup3r-Secret-Pw", "tok-AAAA-1234"
	var ids []string
	for _, fail := range []bool{false, true} {
		in, _ := json.Marshal(map[string]any{"user": "alice", "password": pw, "extra": []any{map[string]any{"token": token}}, "fail": fail})
		res, err := eng.Submit(context.Background(), engine.SubmitRequest{TemplateID: "test_secret", Inputs: in, Mode: engine.ModeAsync})
		if err != nil {
			t.Fatal(err)
		}
		wctx, wcancel := context.WithTimeout(context.Background(), 10*time.Second)
		run, err := eng.Wait(wctx, res.Run.RunID, nil)
		wcancel()
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, run.RunID)
		b, _ := json.Marshal(run)
		if strings.Contains(string(b), pw) || !strings.Contains(string(b), "***") {
			t.Fatalf("run shows the secret or no mask: %s", b)
		}
		evs, _, _, err := eng.EventsAfter(context.Background(), run.RunID, 0, 1000)
		if err != nil {
			t.Fatal(err)
		}
		b, _ = json.Marshal(evs)
		if strings.Contains(string(b), pw) {
			t.Fatalf("events show the secret: %s", b)
		}
	}
	if ok := len(tpl.got) == 2 && tpl.got[0] == pw && tpl.got[1] == pw; !ok {
		t.Fatalf("the template received %q, want the real password twice", tpl.got)
	}
	cancel()
	<-done
	for _, id := range ids {
		r, _ := store.GetRun(context.Background(), id)
		if !strings.Contains(string(r.Inputs), `"password":"***"`) || !strings.Contains(string(r.Inputs), `"token":"***"`) || !strings.Contains(string(r.Inputs), `"user":"alice"`) {
			t.Fatalf("stored inputs: %s", r.Inputs)
		}
	}
	store.Close()
	for _, f := range []string{path, path + "-wal", path + "-shm"} {
		b, err := os.ReadFile(f)
		if err == nil && (bytes.Contains(b, []byte(pw)) || bytes.Contains(b, []byte(token))) {
			t.Fatalf("%s contains a secret", f)
		}
	}
	logMu.Lock()
	defer logMu.Unlock()
	if strings.Contains(logs.String(), pw) || !strings.Contains(logs.String(), "pw=***") {
		t.Fatalf("logs: %s", logs.String())
	}
}

// lockedWriter serialises writes of concurrent loggers.
type lockedWriter struct {
	b  *bytes.Buffer
	mu *sync.Mutex
}

func (w lockedWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.b.Write(p)
}
