package engine

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"sync"
	"time"

	"github.com/google/uuid"
)

// runEnv is the Env a template sees while it runs.
type runEnv struct {
	e      *Engine
	run    *Run
	done   map[string]Item
	log    *slog.Logger
	cancel func(error)
	// deadline is the run's timeout clock, paused while it waits for input.
	deadline *runDeadline

	mu           sync.Mutex
	lastProgress time.Time
	// progress is the last progress recorded; beforeWait is what it was
	// when the run started waiting for the questions in waiting (input.go).
	progress   Progress
	beforeWait Progress
	waiting    []Question
}

var _ Env = (*runEnv)(nil)

func (v *runEnv) RunID() string     { return v.run.RunID }
func (v *runEnv) SessionID() string { return v.run.SessionID }

// BrowserProfile names the persistent profile the run uses ("" = none).
func (v *runEnv) BrowserProfile() string  { return v.run.Profile }
func (v *runEnv) Inputs() json.RawMessage { return v.run.Inputs }

// OutputSchema is the run's options.outputSchema (nil unless its template
// uses it).
func (v *runEnv) OutputSchema() json.RawMessage  { return v.run.OutputSchema }
func (v *runEnv) Profile() Profile               { return v.e.Profile() }
func (v *runEnv) FinishedItems() map[string]Item { return v.done }
func (v *runEnv) Logger() *slog.Logger           { return v.log }

// ClientCanSample reports whether the submitting client declared MCP
// sampling.
func (v *runEnv) ClientCanSample() bool { return v.run.ClientSampling }

// CountModelUsage adds u to the run's model usage. A failed write is
// logged (the metrics then undercount); a run no longer ours is stopped.
func (v *runEnv) CountModelUsage(u ModelUsage) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	err := v.e.store.AddModelUsage(ctx, v.run.RunID, v.e.holder(v.run), u, v.e.now())
	switch {
	case errors.Is(err, ErrConflict):
		v.cancel(errCauseLost)
	case err != nil:
		v.log.Warn("model usage not recorded", "error", err)
	default:
		v.e.notify()
	}
}

// writeCtx detaches writes from the run's context so an item finished just
// before a timeout is still recorded, while bounding how long a write waits.
func writeCtx(ctx context.Context) (context.Context, context.CancelFunc) {
	return context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
}

// Checkpoint records an item and progress. ErrConflict means the run was
// cancelled or recovered elsewhere: the run is stopped.
func (v *runEnv) Checkpoint(ctx context.Context, it Item, p Progress) error {
	wctx, cancel := writeCtx(ctx)
	defer cancel()
	err := v.e.store.SaveItem(wctx, v.run.RunID, v.e.holder(v.run), it, p, v.e.now())
	if errors.Is(err, ErrConflict) {
		v.cancel(errCauseLost)
	}
	if err == nil {
		v.mu.Lock()
		v.lastProgress = time.Now()
		v.progress = p
		v.mu.Unlock()
		v.e.notify()
	}
	return err
}

// SetProgress records progress, and appends a "progress" event, at most
// every 200 ms.
func (v *runEnv) SetProgress(p Progress) {
	v.mu.Lock()
	v.progress = p
	if time.Since(v.lastProgress) < 200*time.Millisecond {
		v.mu.Unlock()
		return
	}
	v.lastProgress = time.Now()
	v.mu.Unlock()
	v.saveProgress(p)
}

// finalProgress is the last progress the template recorded (nil when it
// recorded none).
func (v *runEnv) finalProgress() *Progress {
	v.mu.Lock()
	defer v.mu.Unlock()
	if v.progress == (Progress{}) {
		return nil
	}
	p := v.progress
	return &p
}

// saveProgress writes p now, with its "progress" event.
func (v *runEnv) saveProgress(p Progress) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	err := v.e.store.SaveProgress(ctx, v.run.RunID, v.e.holder(v.run), p, v.e.now())
	if errors.Is(err, ErrConflict) {
		v.cancel(errCauseLost)
		return
	}
	if err == nil {
		// A "progress" event (throttled like the write above) lets event
		// followers see steps that are not item checkpoints.
		v.e.event(v.run.RunID, "progress", p)
		v.e.notify()
	}
}

// PutArtifact stores a file in one transaction and returns its id.
func (v *runEnv) PutArtifact(ctx context.Context, name, mimeType string, data []byte) (string, error) {
	now := v.e.now()
	a := Artifact{
		ID: "art_" + uuid.NewString(), RunID: v.run.RunID, Name: name, MimeType: mimeType,
		Size: int64(len(data)), CreatedAt: now, ExpiresAt: now + v.e.cfg.ArtifactTTL.Milliseconds(),
	}
	wctx, cancel := writeCtx(ctx)
	defer cancel()
	if err := v.e.store.PutArtifact(wctx, a, data); err != nil {
		return "", Wrap(ExecutionError, err, "store artifact %s: %v", name, err)
	}
	return a.ID, nil
}
