package mcp

import (
	"context"
	"time"

	"github.com/browsertask/browsertask/engine"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// cancelTimeout bounds the Cancel issued after the client gave up, which
// runs on a context detached from the (already cancelled) request.
const cancelTimeout = 10 * time.Second

// clientCancelReason is the cancel reason when the MCP request is cancelled.
const clientCancelReason = "client cancelled the request"

// autoBudget is how long auto mode waits before answering async: the
// profile's autoSyncBudgetMs, which the engine always fills. An Engine
// whose profile leaves it out gets the engine's default rather than a
// wait without end.
func autoBudget(p engine.Profile) time.Duration {
	if p.AutoSyncBudgetMs > 0 {
		return time.Duration(p.AutoSyncBudgetMs) * time.Millisecond
	}
	return engine.DefaultAutoSyncBudget
}

// waitReply waits for the submitted run to end and answers with it (mode
// sync); a run that starts waiting for a person is answered at once as
// async, with its inputRequest. budget > 0 is auto mode: when the budget elapses first the answer
// is the async handle and the run goes on. While waiting, progress is
// relayed to the client when the request has a progressToken. If the
// request itself is cancelled, the run is cancelled too, unless the
// submission only attached to an existing run through its idempotencyKey.
func (s *Server) waitReply(ctx context.Context, req *sdk.CallToolRequest, sub *engine.SubmitResult, budget time.Duration) *sdk.CallToolResult {
	waitCtx := ctx
	if budget > 0 {
		var cancel context.CancelFunc
		waitCtx, cancel = context.WithTimeout(ctx, budget)
		defer cancel()
	}
	relay := s.startProgress(ctx, req, sub.Run)
	run, err := s.waitSettledSampling(waitCtx, req.Session, sub.Run.RunID, relay.update)
	relay.stop()

	switch {
	case err == nil && !run.Status.Terminal():
		// The run waits for a person: answer now, as async, with the
		// question, so the client neither hangs nor times out on it.
		offerTask(ctx, run, sub.Deduplicated)
		return asyncReply(run, dedupOf(sub))
	case err == nil:
		return s.syncReply(ctx, run, dedupOf(sub))
	case ctx.Err() != nil:
		return s.requestCancelled(ctx, sub)
	case waitCtx.Err() != nil:
		// The auto budget elapsed: answer with the run's current state.
		cur, gerr := s.eng.Get(ctx, sub.Run.RunID)
		if gerr != nil {
			cur = sub.Run
		}
		if cur.Status.Terminal() {
			return s.syncReply(ctx, cur, dedupOf(sub))
		}
		offerTask(ctx, cur, sub.Deduplicated) // a task instead, for a client of the Tasks extension
		return asyncReply(cur, dedupOf(sub))
	default:
		return s.errorResultLogged("run_task_template", err)
	}
}

// requestCancelled handles notifications/cancelled during a wait. The
// client will not read the answer; it is built anyway for transports that
// still deliver it.
func (s *Server) requestCancelled(ctx context.Context, sub *engine.SubmitResult) *sdk.CallToolResult {
	id := sub.Run.RunID
	if sub.Deduplicated {
		s.log.Info("request cancelled; run left alone because it was deduplicated", "runId", id)
		return asyncReply(sub.Run, dedupOf(sub))
	}
	cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), cancelTimeout)
	defer cancel()
	if _, err := s.eng.Cancel(cctx, id, clientCancelReason); err != nil {
		s.log.Warn("cancel after request cancellation failed", "runId", id, "error", err)
		return errorResult(err)
	}
	s.log.Info("request cancelled; run cancelled", "runId", id)
	run, err := s.eng.Get(cctx, id)
	if err != nil {
		return errorResult(err)
	}
	return s.syncReply(ctx, run, dedupInfo{})
}
