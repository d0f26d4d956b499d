package mcp

import (
	"context"
	"encoding/json"

	"github.com/browsertask/browsertask/engine"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// answer_task_run answers a run that waits for a person, from any client
// of any protocol version and any process on the database: the one way to
// answer that needs nothing of the protocol's own input machinery.
func (s *Server) answerTaskRunTool() toolDef {
	return toolDef{
		name:  "answer_task_run",
		title: "Answer a run that waits for a person",
		description: "Gives a running run the answer it waits for: a run whose inputRequest is set (get_task_run, " +
			"list_task_runs, or the answer of run_task_template) paused to ask a person something - a one-time code, " +
			"a value only they know, a yes/no confirmation. ASK YOUR USER and pass on exactly what they say: never " +
			"invent, guess or reuse a code, and never confirm on their behalf. Give value (a string) for kind text or " +
			"secret, confirm (true or false) for kind confirm; false declines. Kind takeover asks your user to act in the " +
			"run's browser through the live view at inputRequest.url (give them the link); it ends when they press " +
			"Done there, or confirm true once they say they are done (false: they will not). A secret answer is never stored or " +
			"shown in clear. The answer is {answered: true, runId, requestId, kind}; poll the run with get_task_run. " +
			"Errors: RUN_NOT_FOUND; INVALID_PARAMETER when nothing with that requestId is waiting (answered already, " +
			"expired) or the answer does not fit the kind.",
		annotations: &sdk.ToolAnnotations{},
		input: object(map[string]any{
			"runId":     str("The waiting run."),
			"requestId": str("inputRequest.requestId of the run."),
			"value":     map[string]any{"type": "string", "maxLength": 10000, "description": "The answer for kind text or secret, exactly as your user gave it."},
			"confirm":   map[string]any{"type": "boolean", "description": "The answer for kind confirm: true yes, false no; for kind takeover: true done, false declined."},
		}, "runId", "requestId"),
		output: outputOf(object(map[string]any{
			"answered":  map[string]any{"type": "boolean"},
			"runId":     str("The run."),
			"requestId": str("The question answered."),
			"kind":      map[string]any{"type": "string", "enum": []string{engine.QuestionText, engine.QuestionSecret, engine.QuestionConfirm, engine.QuestionTakeover}},
		}, "answered", "runId", "requestId", "kind")),
		handle: s.answerTaskRun,
	}
}

// answeredRun is answer_task_run's answer: never the value itself.
type answeredRun struct {
	Answered  bool   `json:"answered"`
	RunID     string `json:"runId"`
	RequestID string `json:"requestId"`
	Kind      string `json:"kind"`
}

// answerTaskRun delivers the answer.
func (s *Server) answerTaskRun(ctx context.Context, _ *sdk.CallToolRequest, raw json.RawMessage) *sdk.CallToolResult {
	var a struct {
		RunID     string  `json:"runId"`
		RequestID string  `json:"requestId"`
		Value     *string `json:"value"`
		Confirm   *bool   `json:"confirm"`
	}
	if err := decodeArgs(raw, &a); err != nil {
		return errorResult(err)
	}
	if a.RequestID == "" {
		return errorResult(invalidField("requestId", "is required: pass inputRequest.requestId of the run (get_task_run shows it)"))
	}
	// The answer must land even if the client stops waiting for this reply.
	q, err := s.eng.AnswerQuestion(context.WithoutCancel(ctx), a.RunID, a.RequestID, engine.Answer{Value: a.Value, Confirm: a.Confirm})
	if err != nil {
		return s.errorResultLogged("answer_task_run", err)
	}
	return jsonResult(answeredRun{Answered: true, RunID: a.RunID, RequestID: q.RequestID, Kind: q.Kind}, false)
}
