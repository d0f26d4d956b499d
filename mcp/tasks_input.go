package mcp

import (
	"context"
	"encoding/json"

	"github.com/browsertask/browsertask/engine"
)

// Input a task waits for (the Tasks extension's input_required): the run
// stored its questions in their MCP form; tasks/get lists the outstanding
// ones as inputRequests and tasks/update writes the answers back, from any
// process on the database.

// pendingInputs are the outstanding questions of run, keyed by request id
// (nil when there are none or they cannot be read: the task then shows as
// working, and the next poll tries again).
func (s *Server) pendingInputs(ctx context.Context, run *engine.Run) map[string]json.RawMessage {
	reqs, err := s.eng.PendingQuestions(ctx, run.RunID)
	if err != nil {
		s.log.Warn("read input requests", "taskId", run.RunID, "error", err)
		return nil
	}
	if len(reqs) == 0 {
		return nil
	}
	out := make(map[string]json.RawMessage, len(reqs))
	for _, r := range reqs {
		out[r.RequestID] = r.Request
	}
	return out
}

// deliverInputs hands each response to the question of the same key.
// Keys that are not outstanding (never asked, answered already, expired)
// are ignored, as the Tasks extension asks; a response that is not a JSON
// object is -32602.
func (s *Server) deliverInputs(ctx context.Context, run *engine.Run, responses map[string]json.RawMessage) error {
	for key, resp := range responses {
		var obj map[string]any
		if json.Unmarshal(resp, &obj) != nil || obj == nil {
			return errInvalidParams("params.inputResponses[%q] must be an object (the result of the input request)", key)
		}
	}
	for key, resp := range responses {
		ok, err := s.eng.AnswerQuestionMCP(ctx, run.RunID, key, resp)
		if err != nil {
			return taskLookupError(run.RunID, err)
		}
		if !ok {
			s.log.Info("tasks/update: response ignored (not an outstanding request)", "taskId", run.RunID, "key", key)
		}
	}
	return nil
}
