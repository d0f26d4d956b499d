package mcp

import (
	"context"
	"sync"
	"time"

	"github.com/browsertask/browsertask/engine"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// A task outlives the request that created it, and so do its progress
// notifications (the creating request's progressToken stays valid for the
// task's life) and its notifications/tasks/status. A watcher per task does
// both, for as long as the run is not terminal and the session lives.
//
// Over Streamable HTTP the notifications go to the session's standalone SSE
// stream (GET), since the creating POST has been answered. The SDK offers
// no way to send notifications/tasks/status there, so those are sent over
// stdio only; the spec makes them optional and clients poll tasks/get.

// sessionHub tracks live sessions: a context that ends with the session
// (for watchers) and, on stdio, the connection that can carry
// notifications/tasks/status.
type sessionHub struct {
	mu sync.Mutex
	m  map[*sdk.ServerSession]*sessionState
}

// sessionState is one live session.
type sessionState struct {
	ctx    context.Context // ends when the session closes
	cancel context.CancelFunc

	mu   sync.Mutex
	conn *taskShimConn // nil unless the transport carries extra notifications
}

func newSessionHub() *sessionHub {
	return &sessionHub{m: map[*sdk.ServerSession]*sessionState{}}
}

// state returns ss's state, creating it (and one goroutine that waits for
// the session to end) on first use.
func (h *sessionHub) state(ss *sdk.ServerSession) *sessionState {
	h.mu.Lock()
	defer h.mu.Unlock()
	if st, ok := h.m[ss]; ok {
		return st
	}
	ctx, cancel := context.WithCancel(context.Background())
	st := &sessionState{ctx: ctx, cancel: cancel}
	h.m[ss] = st
	engine.Go(context.Background(), nil, "mcp.sessionHub.wait", func() {
		_ = ss.Wait()
		cancel()
		h.mu.Lock()
		delete(h.m, ss)
		h.mu.Unlock()
	}, func(*engine.Panic) { cancel() })
	return st
}

// end cancels ss's context now (the process is shutting down): watchers
// stop and requests still waiting (tasks/result, sync calls) return, so the
// session can close without waiting for runs to finish.
func (h *sessionHub) end(ss *sdk.ServerSession) {
	h.state(ss).cancel()
}

// bind returns ctx, also cancelled when ss's session ends; release frees it.
func (h *sessionHub) bind(ctx context.Context, ss *sdk.ServerSession) (context.Context, func()) {
	st := h.state(ss)
	ctx, cancel := context.WithCancel(ctx)
	stop := context.AfterFunc(st.ctx, cancel)
	return ctx, func() { stop(); cancel() }
}

// attach records the stdio connection of ss.
func (h *sessionHub) attach(ss *sdk.ServerSession, conn *taskShimConn) {
	st := h.state(ss)
	st.mu.Lock()
	st.conn = conn
	st.mu.Unlock()
}

// notifier returns the connection for notifications/tasks/status, or nil.
func (st *sessionState) notifier() *taskShimConn {
	st.mu.Lock()
	defer st.mu.Unlock()
	return st.conn
}

// taskWatch sends one task's progress and status notifications.
type taskWatch struct {
	s        *Server
	ss       *sdk.ServerSession
	st       *sessionState
	token    any
	status   string    // last task status the client was told
	sentDone int       // last doneSteps sent as progress (0: none yet)
	sentAt   time.Time // when it was sent
}

// watchTask starts a watcher for a task created on ss, unless there is
// nothing to send (no progressToken and no status channel).
func (s *Server) watchTask(ss *sdk.ServerSession, run *engine.Run, status string, token any) {
	if ss == nil || run.Status.Terminal() {
		return
	}
	st := s.tasks.sessions.state(ss)
	if token == nil && st.notifier() == nil {
		return
	}
	w := &taskWatch{s: s, ss: ss, st: st, token: token, status: status}
	engine.Go(st.ctx, s.log, "mcp.taskWatch", func() { w.run(run.RunID) }, nil)
}

// run follows the run until it is terminal or the session ends. The
// engine's Wait wakes on the run's changes; onChange runs on this goroutine.
func (w *taskWatch) run(runID string) {
	final, err := w.s.eng.Wait(w.st.ctx, runID, w.onChange)
	if err != nil {
		if w.st.ctx.Err() == nil {
			w.s.log.Debug("task watcher stopped", "taskId", runID, "error", err)
		}
		return
	}
	w.onChange(final)
}

// onChange relays progress (only when doneSteps grew, at most every
// progressInterval except for the final state) and status changes.
func (w *taskWatch) onChange(run *engine.Run) {
	ctx := w.st.ctx
	terminal := run.Status.Terminal()
	if w.token != nil && run.Progress.DoneSteps > w.sentDone &&
		(terminal || time.Since(w.sentAt) >= progressInterval) {
		if err := w.ss.NotifyProgress(ctx, progressParams(w.token, run)); err != nil {
			w.s.log.Debug("task progress notification failed", "taskId", run.RunID, "error", err)
		} else {
			w.sentDone, w.sentAt = run.Progress.DoneSteps, time.Now()
		}
	}
	status := runTaskStatus(run)
	if status == w.status {
		return
	}
	w.status = status
	if conn := w.st.notifier(); conn != nil {
		if err := conn.notify(ctx, "notifications/tasks/status", taskOf(run, w.s.eng.Profile())); err != nil {
			w.s.log.Debug("task status notification failed", "taskId", run.RunID, "error", err)
		}
	}
}
