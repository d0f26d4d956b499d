package mcp

import (
	"context"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/browsertask/browsertask/engine"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// progressInterval throttles progress notifications to at most ~5 per second.
const progressInterval = 200 * time.Millisecond

// progressRelay forwards a run's progress to the client as
// notifications/progress for one request. The engine's change callback only
// records the latest run and signals; a goroutine sends, so a slow client
// never blocks the engine. A nil relay (no progressToken) does nothing.
type progressRelay struct {
	ss    *sdk.ServerSession
	token any
	log   *slog.Logger

	mu     sync.Mutex
	latest *engine.Run

	wake chan struct{}
	done chan struct{}
	exit chan struct{}
}

// startProgress starts a relay seeded with the submitted run, or returns
// nil when the request has no progressToken or no session to notify.
func (s *Server) startProgress(ctx context.Context, req *sdk.CallToolRequest, first *engine.Run) *progressRelay {
	if req == nil || req.Session == nil || req.Params == nil {
		return nil
	}
	token := req.Params.GetProgressToken()
	if token == nil {
		return nil
	}
	r := &progressRelay{
		ss:     req.Session,
		token:  token,
		log:    s.log,
		latest: first,
		wake:   make(chan struct{}, 1),
		done:   make(chan struct{}),
		exit:   make(chan struct{}),
	}
	r.wake <- struct{}{}
	engine.Go(ctx, r.log, "mcp.progressRelay", func() { r.loop(ctx) }, func(*engine.Panic) {
		select {
		case <-r.exit: // loop's defer closed it
		default:
			close(r.exit)
		}
	})
	return r
}

// update records the run's latest state; it never blocks.
func (r *progressRelay) update(run *engine.Run) {
	if r == nil || run == nil {
		return
	}
	r.mu.Lock()
	r.latest = run
	r.mu.Unlock()
	select {
	case r.wake <- struct{}{}:
	default:
	}
}

// stop ends the relay and waits for its goroutine, so no notification is
// sent after the answer.
func (r *progressRelay) stop() {
	if r == nil {
		return
	}
	close(r.done)
	<-r.exit
}

// loop sends a notification whenever doneSteps grew (progress must increase
// with every notification), at most once per progressInterval.
func (r *progressRelay) loop(ctx context.Context) {
	defer close(r.exit)
	last := -1
	for {
		select {
		case <-r.done:
			return
		case <-ctx.Done():
			return
		case <-r.wake:
		}
		r.mu.Lock()
		run := r.latest
		r.mu.Unlock()
		if run == nil || run.Progress.DoneSteps <= last {
			continue
		}
		last = run.Progress.DoneSteps
		if err := r.ss.NotifyProgress(ctx, progressParams(r.token, run)); err != nil {
			r.log.Debug("progress notification failed", "runId", run.RunID, "error", err)
		}
		select {
		case <-r.done:
			return
		case <-ctx.Done():
			return
		case <-time.After(progressInterval):
		}
	}
}

// progressParams maps a run's progress to a progress notification.
func progressParams(token any, run *engine.Run) *sdk.ProgressNotificationParams {
	msg := run.Progress.Message
	if msg == "" {
		msg = fmt.Sprintf("run %s %s: %d/%d steps done", run.RunID, run.Status, run.Progress.DoneSteps, run.Progress.TotalSteps)
	}
	return &sdk.ProgressNotificationParams{
		ProgressToken: token,
		Progress:      float64(run.Progress.DoneSteps),
		Total:         float64(run.Progress.TotalSteps),
		Message:       msg,
	}
}
