package web_test

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"image"
	"image/color"
	"image/png"
	"net/http/httptest"
	"path/filepath"
	"testing"
	"time"

	"github.com/browsertask/browsertask/db"
	"github.com/browsertask/browsertask/engine"
	"github.com/browsertask/browsertask/internal/devtpl"
	"github.com/browsertask/browsertask/internal/fixture"
	"github.com/browsertask/browsertask/web"
)

// env is a dashboard on a real listener over a real engine and SQLite file.
type env struct {
	t     *testing.T
	store *db.DB
	eng   *engine.Engine
	srv   *httptest.Server
	dash  *web.Dashboard
}

// newEnv starts the engine (dev_echo templates, and dev_tool_job for runs
// that ask a person) and the dashboard. With run
// false the engine is not started, so submitted runs stay queued.
func newEnv(t *testing.T, token string, run bool) *env {
	t.Helper()
	return newEnvConfig(t, token, run, engine.Config{PollInterval: 50 * time.Millisecond, ShutdownGrace: 200 * time.Millisecond, HeartbeatInterval: 200 * time.Millisecond})
}

// newEnvConfig is newEnv with the engine's configuration.
func newEnvConfig(t *testing.T, token string, run bool, cfg engine.Config) *env {
	t.Helper()
	path := filepath.Join(t.TempDir(), "bt.db")
	store, err := db.Open(context.Background(), path)
	if err != nil {
		t.Fatal(err)
	}
	log := fixture.Logger(t)
	eng, err := engine.New(engine.Options{Store: store, Templates: []engine.Template{devtpl.Echo{}, devtpl.Echo{Once: true}, devtpl.ToolJob{}},
		Config: cfg, Logger: log, Version: "test"})
	if err != nil {
		t.Fatal(err)
	}
	e := &env{t: t, store: store, eng: eng}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	if run {
		go func() { _ = eng.Run(ctx); close(done) }()
	} else {
		close(done)
	}
	e.dash = web.New(web.Options{Engine: eng, Token: token, DBPath: path, Version: "test",
		Logger: log})
	e.srv = httptest.NewServer(e.dash)
	t.Cleanup(func() {
		e.srv.Close()
		cancel()
		<-done
		store.Close()
	})
	return e
}

// submit starts a dev_echo run with the given inputs.
func (e *env) submit(inputs map[string]any) string {
	e.t.Helper()
	b, _ := json.Marshal(inputs)
	res, err := e.eng.Submit(context.Background(), engine.SubmitRequest{TemplateID: "dev_echo", Inputs: b, Mode: engine.ModeAsync})
	if err != nil {
		e.t.Fatal(err)
	}
	return res.Run.RunID
}

// submitAsking starts a dev_tool_job run with the given inputs (its ask
// list holds the questions).
func (e *env) submitAsking(inputs string) string {
	e.t.Helper()
	res, err := e.eng.Submit(context.Background(), engine.SubmitRequest{TemplateID: devtpl.ToolJobID, Inputs: json.RawMessage(inputs), Mode: engine.ModeAsync})
	if err != nil {
		e.t.Fatal(err)
	}
	return res.Run.RunID
}

// waitQuestions waits until the run waits on n questions (WaitSettled
// returns once it starts waiting; the questions asked at once may take a
// moment more to be stored) and returns them.
func (e *env) waitQuestions(id string, n int) []engine.Question {
	e.t.Helper()
	ctx, cancel := fixture.Context(e.t)
	defer cancel()
	for {
		run, err := e.eng.WaitSettled(ctx, id, nil)
		if err != nil {
			e.t.Fatal(err)
		}
		if run.Status.Terminal() {
			e.t.Fatalf("run %s ended (%s) instead of asking: %+v", id, run.Status, run.Error)
		}
		p, err := e.eng.PendingQuestions(ctx, id)
		if err != nil {
			e.t.Fatal(err)
		}
		if len(p) == n {
			return p
		}
		select {
		case <-ctx.Done():
			e.t.Fatalf("run %s waits on %d questions, want %d", id, len(p), n)
		case <-time.After(20 * time.Millisecond):
		}
	}
}

// waitStatus polls the engine until the run has status (fixture.WaitUntil).
func (e *env) waitStatus(id string, want engine.RunStatus) *engine.Run {
	e.t.Helper()
	var r *engine.Run
	fixture.WaitUntil(e.t, "run "+id+" to be "+string(want), func() bool {
		var err error
		if r, err = e.eng.Get(context.Background(), id); err != nil {
			e.t.Fatal(err)
		}
		return r.Status == want
	})
	return r
}

// pngBase64 is a 240x150 gradient PNG, base64-encoded.
func pngBase64(t *testing.T) string {
	t.Helper()
	img := image.NewRGBA(image.Rect(0, 0, 240, 150))
	for y := 0; y < 150; y++ {
		for x := 0; x < 240; x++ {
			img.Set(x, y, color.RGBA{R: uint8(80 + x/3), G: uint8(70 + y/2), B: 229, A: 255})
		}
	}
	var buf bytes.Buffer
	if err := png.Encode(&buf, img); err != nil {
		t.Fatal(err)
	}
	return base64.StdEncoding.EncodeToString(buf.Bytes())
}
