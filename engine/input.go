package engine

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"
)

// A run can ask for input while it runs: a one-time code, a confirmation,
// a value only the person knows, or (for the protocol fixtures) any MCP
// input request. The request is stored with the run (run_inputs), the run
// waits, and whoever answers (an MCP client through tasks/update, from any
// process on the database) writes the response there. The waiting run
// polls its rows, waking early on local changes.

// InputRequest is one question a run asked, and its answer once given.
type InputRequest struct {
	RunID     string `json:"runId"`
	RequestID string `json:"requestId"`
	// Kind says what is asked: "text", "secret", "confirm", or "mcp" for a
	// raw MCP input request (Request says which).
	Kind    string `json:"kind"`
	Message string `json:"message"`
	// Request is the MCP form of the question: {"method", "params"}, as it
	// appears in inputRequests.
	Request     json.RawMessage `json:"request"`
	RequestedAt int64           `json:"requestedAt"`
	ExpiresAt   int64           `json:"expiresAt"`
	// Response is the answer (the MCP result of Request), nil while the
	// question is outstanding.
	Response   json.RawMessage `json:"response,omitempty"`
	AnsweredAt int64           `json:"answeredAt,omitempty"`
}

// Answered reports whether the request has its response.
func (r InputRequest) Answered() bool { return r.Response != nil }

// AnswerInputParams are the arguments of Store.AnswerInput.
type AnswerInputParams struct {
	RunID, RequestID string
	Response         json.RawMessage
	Now              int64
}

// DefaultInputTimeoutMs is how long a run waits for an answer when the
// configuration does not say (10 minutes).
const DefaultInputTimeoutMs = 10 * 60 * 1000

// inputPoll is how often a waiting run looks for an answer another process
// may have written; local answers wake it at once.
const inputPoll = 250 * time.Millisecond

// Ask stores the question and waits for its answer, which it returns. A
// question asked again with the same RequestID (a run resumed after a
// crash) keeps its stored answer. The wait ends with the run's context
// (cancel, timeout) or with RUN_TIMEOUT, details.reason "no answer", when
// nobody answered within the input timeout.
func (v *runEnv) Ask(ctx context.Context, q InputRequest) (json.RawMessage, error) {
	if q.RequestID == "" || len(q.Request) == 0 {
		return nil, Errorf(ExecutionError, "input request needs a requestId and a request")
	}
	now := v.e.now()
	q.RunID = v.run.RunID
	q.RequestedAt = now
	q.ExpiresAt = now + v.e.cfg.InputTimeoutMs
	wctx, cancel := writeCtx(ctx)
	err := v.e.store.AddInputRequest(wctx, q)
	cancel()
	if err != nil {
		return nil, Wrap(ExecutionError, err, "store input request: %v", err)
	}
	v.e.event(v.run.RunID, "input", map[string]any{"requestId": q.RequestID, "kind": q.Kind, "message": q.Message})
	v.e.notify()
	t := time.NewTicker(inputPoll)
	defer t.Stop()
	for {
		ch := v.e.changes()
		reqs, err := v.e.store.InputRequests(ctx, v.run.RunID)
		if err != nil {
			if ctx.Err() != nil {
				return nil, ctx.Err()
			}
			return nil, Wrap(ExecutionError, err, "read input requests: %v", err)
		}
		for _, r := range reqs {
			if r.RequestID != q.RequestID {
				continue
			}
			if r.Answered() {
				return r.Response, nil
			}
			if v.e.now() >= r.ExpiresAt {
				return nil, Errorf(RunTimeout, "no answer to %q within %d ms", q.Message, v.e.cfg.InputTimeoutMs).
					WithDetails(map[string]any{"reason": "no answer", "requestId": q.RequestID})
			}
		}
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-ch:
		case <-t.C:
		}
	}
}

// PendingInputs returns the questions run runID is waiting on (empty for
// a run that waits for nothing, or is unknown).
func (e *Engine) PendingInputs(ctx context.Context, runID string) ([]InputRequest, error) {
	reqs, err := e.store.InputRequests(ctx, runID)
	if err != nil {
		return nil, Wrap(ExecutionError, err, "read input requests: %v", err)
	}
	now := e.now()
	out := []InputRequest{}
	for _, r := range reqs {
		if !r.Answered() && now < r.ExpiresAt {
			out = append(out, r)
		}
	}
	return out, nil
}

// AnswerInput delivers the answer to one outstanding question of run runID.
// It reports false when there is no such outstanding question (never
// asked, answered already, expired): the caller may ignore that, as the
// Tasks extension asks. Errors: RUN_NOT_FOUND.
func (e *Engine) AnswerInput(ctx context.Context, runID, requestID string, response json.RawMessage) (bool, error) {
	if _, err := e.Get(ctx, runID); err != nil {
		return false, err
	}
	if len(response) == 0 {
		return false, Errorf(InvalidParameter, "the response to %q is empty", requestID)
	}
	ok, err := e.store.AnswerInput(ctx, AnswerInputParams{RunID: runID, RequestID: requestID, Response: response, Now: e.now()})
	if err != nil {
		if errors.Is(err, ErrNotFound) {
			return false, nil
		}
		return false, Wrap(ExecutionError, err, "store answer: %v", err)
	}
	if ok {
		e.event(runID, "input", map[string]any{"requestId": requestID, "answered": true})
		e.notify()
	}
	return ok, nil
}

// String describes the request for logs.
func (r InputRequest) String() string {
	return fmt.Sprintf("input %s/%s (%s)", r.RunID, r.RequestID, r.Kind)
}
