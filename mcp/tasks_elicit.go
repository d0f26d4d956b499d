package mcp

import (
	"context"
	"encoding/json"

	"github.com/browsertask/browsertask/engine"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// A 2025-11-25 task whose run waits for a person is input_required; the
// client then calls tasks/result (the Tasks spec, "Input Required Status"),
// and when it declared elicitation the questions reach it there: each one
// is sent as elicitation/create with the related-task metadata, on that
// request's stream, and the client's response answers the run (sealed like
// every secret answer, engine/seal.go). A client without elicitation, or a
// question it did not take, is answered elsewhere (answer_task_run, the
// dashboard, the CLI) while tasks/result keeps waiting.

// canElicit reports whether the session's client declared elicitation.
func canElicit(ss *sdk.ServerSession) bool {
	if ss == nil {
		return false
	}
	p := ss.InitializeParams()
	return p != nil && p.Capabilities != nil && p.Capabilities.Elicitation != nil
}

// waitRelayingInput waits for run id to end, asking ss's client each
// question the run waits on, once per tasks/result request.
func (s *Server) waitRelayingInput(ctx context.Context, ss *sdk.ServerSession, id string) (*engine.Run, error) {
	if !canElicit(ss) {
		return s.eng.Wait(ctx, id, nil)
	}
	asked := map[string]bool{}
	for {
		run, err := s.eng.WaitSettled(ctx, id, nil)
		if err != nil || run.Status.Terminal() {
			return run, err
		}
		if q := s.nextElicitation(ctx, id, asked); q != nil {
			asked[q.RequestID] = true
			s.elicit(ctx, ss, *q)
			continue
		}
		// Only questions already put to this client (or not for it) are
		// waiting: wait until they are answered, another comes, or the run
		// ends.
		wctx, cancel := context.WithCancel(ctx)
		run, err = s.eng.Wait(wctx, id, func(r *engine.Run) {
			if r.InputRequest == nil || !asked[r.InputRequest.RequestID] {
				cancel()
			}
		})
		cancel()
		if err == nil {
			return run, nil
		}
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
	}
}

// nextElicitation is the oldest outstanding question of run id that is an
// elicitation not yet asked here.
func (s *Server) nextElicitation(ctx context.Context, id string, asked map[string]bool) *engine.InputRequest {
	reqs, err := s.eng.PendingInputs(ctx, id)
	if err != nil {
		return nil
	}
	for _, q := range reqs {
		if !asked[q.RequestID] && elicitationOf(q) != nil {
			return &q
		}
	}
	return nil
}

// elicitationOf is the elicitation/create params of a question, or nil when
// the question is another kind of request.
func elicitationOf(q engine.InputRequest) *sdk.ElicitParams {
	var r struct {
		Method string          `json:"method"`
		Params json.RawMessage `json:"params"`
	}
	if json.Unmarshal(q.Request, &r) != nil || r.Method != "elicitation/create" {
		return nil
	}
	var p sdk.ElicitParams
	if json.Unmarshal(r.Params, &p) != nil {
		return nil
	}
	return &p
}

// elicit puts question q to the client and delivers its response to the
// run. A client that fails the request leaves the question to the other
// ways of answering.
func (s *Server) elicit(ctx context.Context, ss *sdk.ServerSession, q engine.InputRequest) {
	p := elicitationOf(q)
	p.Meta = sdk.Meta{metaRelatedTask: map[string]any{"taskId": q.RunID}}
	res, err := ss.Elicit(ctx, p)
	if err != nil {
		s.log.Info("elicitation for a task failed; the question stays open", "taskId", q.RunID, "requestId", q.RequestID, "error", err)
		return
	}
	b, err := json.Marshal(res)
	if err != nil {
		return
	}
	ok, err := s.eng.AnswerInput(context.WithoutCancel(ctx), q.RunID, q.RequestID, b)
	if err != nil || !ok {
		s.log.Info("elicitation response not delivered", "taskId", q.RunID, "requestId", q.RequestID, "answered", ok, "error", err)
	}
}
