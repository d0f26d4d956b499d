//lint:file-ignore SA1019 MCP sampling is deprecated by SEP-2577 (from 2026-07-28, removal not before 2027-07-28) yet still served: extract_structured asks the calling client's model with it (issue 16).

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

// The same holds for sampling: a question whose MCP form is
// sampling/createMessage (extract_structured asking the client's model,
// modelfill.ClientSampler in internal/extract) is sent to a client that declared sampling, on
// tasks/result related to the task and during a synchronous call of
// run_task_template; when the client fails the request (its user
// declined) the run gets a refusal at once instead of waiting out the
// input timeout.

// canElicit reports whether the session's client declared elicitation.
func canElicit(ss *sdk.ServerSession) bool {
	if ss == nil {
		return false
	}
	p := ss.InitializeParams()
	return p != nil && p.Capabilities != nil && p.Capabilities.Elicitation != nil
}

// canSample reports whether the session's client declared sampling.
func canSample(ss *sdk.ServerSession) bool {
	if ss == nil {
		return false
	}
	p := ss.InitializeParams()
	return p != nil && p.Capabilities != nil && p.Capabilities.Sampling != nil
}

// samplesDuring reports whether the client of call req can answer the
// run's sampling requests: a 2026-07-28 client that declared sampling and
// the Tasks extension (the requests appear in tasks/get's inputRequests),
// or an earlier client that declared sampling and waits for the run (mode
// "sync"; a task-augmented call is callAsTask's). An earlier client's
// auto or async call is not: nobody would relay the requests once the
// call has answered.
func samplesDuring(req *sdk.CallToolRequest, mode engine.Mode) bool {
	if meta := paramsMeta(req.GetParams()); modernMeta(meta) {
		_, ok := clientCapabilities(meta)["sampling"]
		return ok && declaresTasks(meta)
	}
	return mode == engine.ModeSync && canSample(req.Session)
}

// waitRelayingInput waits for run id to end, asking ss's client each
// question the run waits on, once per tasks/result request.
func (s *Server) waitRelayingInput(ctx context.Context, ss *sdk.ServerSession, id string) (*engine.Run, error) {
	if !canElicit(ss) && !canSample(ss) {
		return s.eng.Wait(ctx, id, nil)
	}
	asked := map[string]bool{}
	for {
		run, err := s.eng.WaitSettled(ctx, id, nil)
		if err != nil || run.Status.Terminal() {
			return run, err
		}
		if q := s.nextRelayable(ctx, ss, id, asked); q != nil {
			asked[q.RequestID] = true
			s.relay(ctx, ss, *q, true)
			continue
		}
		// Only questions already put to this client (or not for it) are
		// waiting: wait until they are answered, another comes, or the run
		// ends.
		wctx, cancel := context.WithCancel(ctx)
		run, err = s.eng.Wait(wctx, id, func(r *engine.Run) {
			if r.Question == nil || !asked[r.Question.RequestID] {
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

// nextRelayable is the oldest outstanding question of run id not yet
// asked here that ss's client can answer: an elicitation when it declared
// elicitation, a sampling request when it declared sampling.
func (s *Server) nextRelayable(ctx context.Context, ss *sdk.ServerSession, id string, asked map[string]bool) *engine.Question {
	reqs, err := s.eng.PendingQuestions(ctx, id)
	if err != nil {
		return nil
	}
	elicits, samples := canElicit(ss), canSample(ss)
	for _, q := range reqs {
		if asked[q.RequestID] {
			continue
		}
		if (elicits && elicitationOf(q) != nil) || (samples && samplingOf(q) != nil) {
			return &q
		}
	}
	return nil
}

// waitSettledSampling is the engine's WaitSettled for a synchronous call
// of a client that declared sampling: the run's sampling requests go to
// the client during the call and the wait goes on; it returns once the run
// ended or waits for another kind of question (a person's).
func (s *Server) waitSettledSampling(ctx context.Context, ss *sdk.ServerSession, id string, update func(*engine.Run)) (*engine.Run, error) {
	asked := map[string]bool{}
	for {
		run, err := s.eng.WaitSettled(ctx, id, update)
		if err != nil || run.Status.Terminal() || !canSample(ss) {
			return run, err
		}
		if q := s.nextSampling(ctx, id, asked); q != nil {
			asked[q.RequestID] = true
			s.sample(ctx, ss, *q, false)
			continue
		}
		if run.Question == nil || !asked[run.Question.RequestID] {
			return run, nil
		}
		// The run has not taken an answer given here yet: wait until it
		// has (or asks something else, or ends).
		wctx, cancel := context.WithCancel(ctx)
		ended, err := s.eng.Wait(wctx, id, func(r *engine.Run) {
			update(r)
			if r.Question == nil || !asked[r.Question.RequestID] {
				cancel()
			}
		})
		cancel()
		if err == nil {
			return ended, nil
		}
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
	}
}

// nextSampling is the oldest outstanding sampling request of run id not
// yet asked here.
func (s *Server) nextSampling(ctx context.Context, id string, asked map[string]bool) *engine.Question {
	reqs, err := s.eng.PendingQuestions(ctx, id)
	if err != nil {
		return nil
	}
	for _, q := range reqs {
		if !asked[q.RequestID] && samplingOf(q) != nil {
			return &q
		}
	}
	return nil
}

// samplingOf is the sampling/createMessage params of a question, or nil
// when the question is another kind of request.
func samplingOf(q engine.Question) *sdk.CreateMessageParams {
	var p sdk.CreateMessageParams
	if !paramsOf(q, "sampling/createMessage", &p) {
		return nil
	}
	return &p
}

// relay puts question q (an elicitation or a sampling request) to ss's
// client, with the related-task metadata when related, and delivers the
// response to the run.
func (s *Server) relay(ctx context.Context, ss *sdk.ServerSession, q engine.Question, related bool) {
	if samplingOf(q) != nil {
		s.sample(ctx, ss, q, related)
		return
	}
	s.elicit(ctx, ss, q)
}

// sample sends sampling request q to the client and delivers its result
// to the run; a failed request is delivered as a refusal
// (engine.SamplingRefusal), so the run does not wait for an answer that
// will not come.
func (s *Server) sample(ctx context.Context, ss *sdk.ServerSession, q engine.Question, related bool) {
	p := samplingOf(q)
	if related {
		p.Meta = sdk.Meta{metaRelatedTask: map[string]any{"taskId": q.RunID}}
	}
	var answer json.RawMessage
	res, err := ss.CreateMessage(ctx, p)
	if err == nil {
		answer, err = json.Marshal(res)
	}
	if err != nil {
		if ctx.Err() != nil {
			return // the request ended; the question stays open
		}
		s.log.Info("sampling request failed; the run is told", "runId", q.RunID, "requestId", q.RequestID, "error", err)
		answer = engine.SamplingRefusal(err.Error())
	}
	ok, err := s.eng.AnswerQuestionMCP(context.WithoutCancel(ctx), q.RunID, q.RequestID, answer)
	if err != nil || !ok {
		s.log.Info("sampling response not delivered", "runId", q.RunID, "requestId", q.RequestID, "answered", ok, "error", err)
	}
}

// elicitationOf is the elicitation/create params of a question, or nil when
// the question is another kind of request.
func elicitationOf(q engine.Question) *sdk.ElicitParams {
	var p sdk.ElicitParams
	if !paramsOf(q, "elicitation/create", &p) {
		return nil
	}
	return &p
}

// paramsOf decodes the params of question q into p when its MCP request
// is method, and reports whether it did.
func paramsOf(q engine.Question, method string, p any) bool {
	var r struct {
		Method string          `json:"method"`
		Params json.RawMessage `json:"params"`
	}
	return json.Unmarshal(q.Request, &r) == nil && r.Method == method && json.Unmarshal(r.Params, p) == nil
}

// elicit puts question q to the client and delivers its response to the
// run. A client that fails the request leaves the question to the other
// ways of answering.
func (s *Server) elicit(ctx context.Context, ss *sdk.ServerSession, q engine.Question) {
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
	ok, err := s.eng.AnswerQuestionMCP(context.WithoutCancel(ctx), q.RunID, q.RequestID, b)
	if err != nil || !ok {
		s.log.Info("elicitation response not delivered", "taskId", q.RunID, "requestId", q.RequestID, "answered", ok, "error", err)
	}
}
