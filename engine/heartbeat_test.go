package engine_test

import (
	"context"
	"encoding/json"
	"log/slog"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/browsertask/browsertask/db"
	"github.com/browsertask/browsertask/engine"
	"github.com/browsertask/browsertask/internal/fixture"
)

// beatingStore tells each heartbeat it answered.
type beatingStore struct {
	engine.Store
	beats chan struct{}
}

func (s *beatingStore) Heartbeat(ctx context.Context, p engine.HeartbeatParams) ([]string, error) {
	held, err := s.Store.Heartbeat(ctx, p)
	select {
	case s.beats <- struct{}{}:
	default:
	}
	return held, err
}

// slowCloseBrowser holds a run's session close until released, as a
// browser closing a context with many pages does.
type slowCloseBrowser struct {
	fakeBrowser
	closing, release chan struct{}
}

func (b *slowCloseBrowser) CloseSession(ctx context.Context, id string) error {
	b.closing <- struct{}{}
	<-b.release
	return b.fakeBrowser.CloseSession(ctx, id)
}

// TestHeartbeatLeavesAFinishedRunAlone: a run whose final state is stored
// winds down here a while longer (its session closes). Heartbeats in that
// while found it not held any more, took it for a run another process
// cancelled or recovered, cancelled its context and said so in the log —
// after every run whose session took a heartbeat to close.
func TestHeartbeatLeavesAFinishedRunAlone(t *testing.T) {
	ctx, cancel := fixture.Context(t)
	defer cancel()
	st, err := db.Open(ctx, filepath.Join(t.TempDir(), "bt.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	store := &beatingStore{Store: st, beats: make(chan struct{}, 1)}
	b := &slowCloseBrowser{fakeBrowser: fakeBrowser{open: map[string]json.RawMessage{}}, closing: make(chan struct{}, 1), release: make(chan struct{})}
	var log fixture.Buffer
	eng, err := engine.New(engine.Options{Store: store, Templates: []engine.Template{newSleep()}, Browser: b,
		Config: engine.Config{HeartbeatInterval: 5 * time.Millisecond, PollInterval: 20 * time.Millisecond, ShutdownGrace: 100 * time.Millisecond},
		Logger: slog.New(slog.NewTextHandler(&log, &slog.HandlerOptions{Level: slog.LevelDebug}))})
	if err != nil {
		t.Fatal(err)
	}
	runCtx, stop := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() { _ = eng.Run(runCtx); close(done) }()
	defer func() { stop(); <-done }()

	sub, err := eng.Submit(ctx, engine.SubmitRequest{TemplateID: "test_sleep", Inputs: json.RawMessage(`{"ms":1}`), Mode: engine.ModeAsync})
	if err != nil {
		t.Fatal(err)
	}
	select {
	case <-b.closing:
	case <-ctx.Done():
		t.Fatal("the run never closed its session")
	}
	// The final state is stored before the session closes; let two
	// heartbeats pass while it closes (the second began after the close
	// did).
	for range 2 {
		select {
		case <-store.beats:
		case <-ctx.Done():
			t.Fatal("no heartbeat")
		}
	}
	close(b.release)
	run, err := eng.Wait(ctx, sub.Run.RunID, nil)
	if err != nil || run.Status != engine.StatusSucceeded {
		t.Fatalf("run: %v %+v", err, run)
	}
	if out := log.String(); strings.Contains(out, "cancelled or recovered by another process") {
		t.Fatalf("a heartbeat took the finished run for one another process took:\n%s", out)
	}
}
