package engine_test

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"path/filepath"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/browsertask/browsertask/db"
	"github.com/browsertask/browsertask/engine"
	"github.com/browsertask/browsertask/internal/fixture"
)

// fakeBrowser is an in-memory engine.Browser.
type fakeBrowser struct {
	mu     sync.Mutex
	open   map[string]json.RawMessage
	closed []string
}

func (f *fakeBrowser) OpenSession(_ context.Context, id string, state json.RawMessage) error {
	if string(state) == `{"bad":true}` {
		return engine.Errorf(engine.InvalidParameter, "bad state")
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	f.open[id] = state
	return nil
}

func (f *fakeBrowser) ExportSession(_ context.Context, id string) (json.RawMessage, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if _, ok := f.open[id]; !ok {
		return nil, engine.Errorf(engine.SessionNotFound, "gone")
	}
	return json.RawMessage(`{"cookies":[{"name":"sid","value":"v-` + id + `"}],"origins":[]}`), nil
}

func (f *fakeBrowser) CloseSession(_ context.Context, id string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	delete(f.open, id)
	f.closed = append(f.closed, id)
	return nil
}

func (f *fakeBrowser) Describe() engine.BrowserInfo {
	return engine.BrowserInfo{Mode: "local", Product: "fake"}
}

func (f *fakeBrowser) isOpen(id string) bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	_, ok := f.open[id]
	return ok
}

func TestSessionLifecycle(t *testing.T) { synctest.Test(t, testSessionLifecycle) }

func testSessionLifecycle(t *testing.T) {
	store, err := db.Open(context.Background(), filepath.Join(t.TempDir(), "bt.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	fb := &fakeBrowser{open: map[string]json.RawMessage{}}
	eng, err := engine.New(engine.Options{Store: store, Templates: []engine.Template{newSleep()}, Browser: fb,
		Config: engine.Config{SessionIdleTTL: 1500 * time.Millisecond, PollInterval: 20 * time.Millisecond, ShutdownGrace: 100 * time.Millisecond},
		Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { _ = eng.Run(ctx); close(done) }()
	defer func() { cancel(); <-done }()
	bg := context.Background()

	if eng.Profile().SessionIdleTTLMs != 1500 {
		t.Fatalf("profile sessionIdleTtlMs %d", eng.Profile().SessionIdleTTLMs)
	}
	a, err := eng.CreateSession(bg, engine.CreateSessionRequest{})
	if err != nil || !fb.isOpen(a.ID) || a.ExpiresAt != a.CreatedAt+1500 {
		t.Fatalf("create: %+v %v", a, err)
	}
	exp, err := eng.ExportSessionState(bg, a.ID)
	if err != nil || exp.MimeType != "application/json" {
		t.Fatalf("export: %+v %v", exp, err)
	}
	chunk, err := eng.ReadArtifact(bg, exp.ArtifactID, 0, 0)
	if err != nil || chunk.Data != `{"cookies":[{"name":"sid","value":"v-`+a.ID+`"}],"origins":[]}` {
		t.Fatalf("exported artifact: %+v %v", chunk, err)
	}
	// Restore from the artifact: the browser receives the exported JSON.
	b, err := eng.CreateSession(bg, engine.CreateSessionRequest{ArtifactID: exp.ArtifactID})
	if err != nil || string(fb.open[b.ID]) != chunk.Data {
		t.Fatalf("restore: %v %s", err, fb.open[b.ID])
	}
	if _, err := eng.CreateSession(bg, engine.CreateSessionRequest{StorageState: json.RawMessage(`{"bad":true}`)}); engine.CodeOf(err) != engine.InvalidParameter {
		t.Fatalf("bad state: %v", err)
	}
	if _, err := eng.CreateSession(bg, engine.CreateSessionRequest{ArtifactID: "art_nope"}); engine.CodeOf(err) != engine.ArtifactNotFound {
		t.Fatalf("unknown artifact: %v", err)
	}
	list, err := eng.ListSessions(bg)
	if err != nil || len(list) != 2 {
		t.Fatalf("list: %v %v", list, err)
	}
	if _, err := eng.CloseSession(bg, a.ID); err != nil || fb.isOpen(a.ID) {
		t.Fatalf("close: %v", err)
	}
	if _, err := eng.CloseSession(bg, a.ID); engine.CodeOf(err) != engine.SessionNotFound {
		t.Fatalf("close twice: %v", err)
	}
	if _, err := eng.ExportSessionState(bg, a.ID); engine.CodeOf(err) != engine.SessionNotFound {
		t.Fatalf("export closed: %v", err)
	}
	// A run bound to b keeps it alive past its idle TTL; idle, it expires.
	res, err := eng.Submit(bg, engine.SubmitRequest{TemplateID: "test_sleep", SessionID: b.ID, Inputs: json.RawMessage(`{"ms":2000}`), Mode: engine.ModeAsync})
	if err != nil {
		t.Fatal(err)
	}
	wctx, wcancel := context.WithTimeout(bg, 10*time.Second)
	defer wcancel()
	if run, err := eng.Wait(wctx, res.Run.RunID, nil); err != nil || run.Status != engine.StatusSucceeded {
		t.Fatalf("run in session: %v %v", run, err)
	}
	if !fb.isOpen(b.ID) {
		t.Fatal("a session in use expired")
	}
	fixture.WaitUntil(t, "the idle session to expire", func() bool { return !fb.isOpen(b.ID) })
	if _, err := eng.Submit(bg, engine.SubmitRequest{TemplateID: "test_sleep", SessionID: b.ID, Inputs: json.RawMessage(`{}`)}); engine.CodeOf(err) != engine.SessionNotFound {
		t.Fatalf("submit to an expired session: %v", err)
	}
}
