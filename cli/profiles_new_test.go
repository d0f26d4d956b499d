package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/browsertask/browsertask/db"
	"github.com/browsertask/browsertask/engine"
	"github.com/browsertask/browsertask/internal/fixture"
)

// fakeSignIn stands in for profile_sign_in without a browser: it asks the
// person to take over, as the real one does, and ends by their answer.
type fakeSignIn struct{}

func (fakeSignIn) Info() engine.TemplateInfo {
	return engine.TemplateInfo{TemplateID: engine.SignInTemplate, Version: 1, Versions: []int{1}, Title: "sign in (test)",
		InputSchema: json.RawMessage(`{"type":"object"}`)}
}
func (fakeSignIn) Check(json.RawMessage, engine.Profile) error { return nil }
func (fakeSignIn) Run(ctx context.Context, env engine.Env) (*engine.Outcome, error) {
	err := engine.AskTakeover(ctx, env, "sign-in", "Sign in, then press Done")
	if errors.Is(err, engine.ErrDeclined) {
		return nil, engine.Errorf(engine.StepExecutionFailed, "the person declined to sign in")
	}
	if err != nil {
		return nil, err
	}
	return &engine.Outcome{Result: map[string]any{"profile": env.BrowserProfile()}}, nil
}

// signalWriter is a buffer that says when a line holding want is written.
type signalWriter struct {
	mu   sync.Mutex
	buf  bytes.Buffer
	want string
	seen chan struct{}
	once sync.Once
}

func (w *signalWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	n, err := w.buf.Write(p)
	if strings.Contains(w.buf.String(), w.want) {
		w.once.Do(func() { close(w.seen) })
	}
	return n, err
}

func (w *signalWriter) String() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.buf.String()
}

// TestProfilesNewWaitsThroughTheEngine (issue 31): `profiles new`'s wait
// (waitSignIn, over Engine.Wait) prints the dashboard page once the
// sign-in run asks for the person, and returns when the person presses
// Done (the takeover answered), with the profile's line; a declined
// sign-in is the command's error with the run's code. The person answers
// only after the page was printed, as a person reading it would.
func TestProfilesNewWaitsThroughTheEngine(t *testing.T) {
	for _, done := range []bool{true, false} {
		path := filepath.Join(t.TempDir(), "bt.db")
		store, err := db.Open(context.Background(), path)
		if err != nil {
			t.Fatal(err)
		}
		eng, err := engine.New(engine.Options{Store: store, Templates: []engine.Template{fakeSignIn{}},
			Config: engine.Config{PollInterval: 50 * time.Millisecond, ShutdownGrace: 200 * time.Millisecond,
				HeartbeatInterval: 200 * time.Millisecond, ProfilesDir: filepath.Join(t.TempDir(), "profiles")},
			Logger: slog.New(slog.NewTextHandler(io.Discard, nil)), Version: "test"})
		if err != nil {
			t.Fatal(err)
		}
		eng.SetLiveBase("http://127.0.0.1:9")
		ctx, cancel := fixture.Context(t)
		ran := make(chan struct{})
		go func() { _ = eng.Run(ctx); close(ran) }()

		_, res, err := eng.SignInProfile(ctx, "work", "", "http://127.0.0.1:9/login", engine.ModeAsync)
		if err != nil {
			t.Fatal(err)
		}
		id := res.Run.RunID
		out := &signalWriter{want: "press Done: ", seen: make(chan struct{})}
		waited := make(chan error, 1)
		go func() { waited <- waitSignIn(ctx, eng, id, "work", out) }()
		select {
		case <-out.seen:
		case err := <-waited:
			t.Fatalf("waitSignIn returned %v before the page was printed; stdout %q", err, out.String())
		case <-ctx.Done():
			t.Fatalf("the dashboard page was never printed; stdout %q", out.String())
		}
		if _, err := eng.AnswerQuestion(ctx, id, "sign-in", engine.Answer{Confirm: &done}); err != nil {
			t.Fatal(err)
		}
		err = <-waited
		page := "Sign in here, then press Done: " + engine.LiveURL("http://127.0.0.1:9", id) + "\n"
		if done {
			if want := page + "Profile work is signed in; use it with profile: \"work\"\n"; err != nil || out.String() != want {
				t.Errorf("done: err %v, stdout %q; want %q", err, out.String(), want)
			}
		} else if err == nil || !strings.Contains(err.Error(), "STEP_EXECUTION_FAILED: the person declined to sign in") || out.String() != page {
			t.Errorf("declined: err %v, stdout %q; want the run's error after the page", err, out.String())
		}
		cancel()
		<-ran
		store.Close()
	}
}
