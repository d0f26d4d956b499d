package mcp

import (
	"context"
	"strings"
	"sync"

	"github.com/browsertask/browsertask/engine"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// Subscriptions to browsertask://runs/{runId}: a client that subscribed
// gets notifications/resources/updated whenever the run's status or
// progress changes (the same changes get_task_run would show), and a last
// one when it ends, then reads the resource again. One watcher per run
// serves every subscribed session (the SDK fans the notification out);
// it stops when the run ends or the last subscriber leaves. Artifacts
// never change, so subscribing to one is refused.

// runWatchers are the watchers of subscribed runs, by URI.
type runWatchers struct {
	mu    sync.Mutex
	byURI map[string]*runWatcher
}

// runWatcher follows one subscribed run.
type runWatcher struct {
	subscribers int
	stop        context.CancelFunc
}

// subscribe starts (or joins) the watcher of a run resource. Errors: the
// SDK's resource-not-found error for anything but an existing run.
func (s *Server) subscribe(ctx context.Context, req *sdk.SubscribeRequest) error {
	uri := req.Params.URI
	id, ok := strings.CutPrefix(uri, runURIPrefix)
	if !ok || id == "" || strings.Contains(id, "/") {
		return sdk.ResourceNotFoundError(uri)
	}
	if _, err := s.eng.Get(ctx, id); err != nil {
		if engine.CodeOf(err) == engine.RunNotFound {
			return sdk.ResourceNotFoundError(uri)
		}
		return errInternal(err)
	}
	w := &s.watchers
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.byURI == nil {
		w.byURI = map[string]*runWatcher{}
	}
	if rw := w.byURI[uri]; rw != nil {
		rw.subscribers++
		return nil
	}
	wctx, stop := context.WithCancel(context.WithoutCancel(ctx))
	rw := &runWatcher{subscribers: 1, stop: stop}
	w.byURI[uri] = rw
	engine.Go(wctx, s.log, "mcp.subscribe.run", func() {
		defer s.dropWatcher(uri, rw)
		updated := func(*engine.Run) {
			_ = s.sdk.ResourceUpdated(wctx, &sdk.ResourceUpdatedNotificationParams{URI: uri})
		}
		if _, err := s.eng.Wait(wctx, id, updated); err == nil {
			updated(nil)
		}
	}, nil)
	return nil
}

// unsubscribe leaves a run's watcher, stopping it with its last subscriber.
func (s *Server) unsubscribe(_ context.Context, req *sdk.UnsubscribeRequest) error {
	w := &s.watchers
	w.mu.Lock()
	defer w.mu.Unlock()
	if rw := w.byURI[req.Params.URI]; rw != nil {
		if rw.subscribers--; rw.subscribers <= 0 {
			rw.stop()
			delete(w.byURI, req.Params.URI)
		}
	}
	return nil
}

// dropWatcher forgets a watcher that ended (its run ended).
func (s *Server) dropWatcher(uri string, rw *runWatcher) {
	w := &s.watchers
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.byURI[uri] == rw {
		delete(w.byURI, uri)
	}
	rw.stop()
}
