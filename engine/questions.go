package engine

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
)

// Questions for a person: a template asks with AskText or AskConfirm; the
// question is stored in its MCP form (an elicitation/create form request),
// so MCP clients can show it as such, and anyone may answer it with
// AnswerQuestion (answer_task_run, the dashboard, the CLI) or with the MCP
// elicitation result itself (tasks/update, an elicitation response).

// ErrDeclined is returned by AskText when the person declined to answer
// (an elicitation "decline" or "cancel"). Templates turn it into their own
// error (run_steps: STEP_EXECUTION_FAILED, details.reason "declined").
var ErrDeclined = errors.New("the person declined to answer")

// Answer is a person's answer to a question: Value for text and secret
// questions, Confirm for confirm questions.
type Answer struct {
	Value   *string
	Confirm *bool
}

// elicitResult is the MCP result of an elicitation/create request.
type elicitResult struct {
	Action  string         `json:"action"`
	Content map[string]any `json:"content,omitempty"`
}

// The properties of the requested schema: "value" for text and secret
// questions, "confirm" for confirm questions.
const (
	answerValueField   = "value"
	answerConfirmField = "confirm"
)

// formRequest is the MCP form of a question: an elicitation/create request
// in form mode with a single string property (text, secret) or a boolean
// (confirm).
func formRequest(kind, message string) json.RawMessage {
	prop := map[string]any{"type": "string", "title": "Answer"}
	field := answerValueField
	switch kind {
	case QuestionSecret:
		prop["description"] = "Kept secret: sealed to the run's process and masked in everything it records."
	case QuestionConfirm:
		field = answerConfirmField
		prop = map[string]any{"type": "boolean", "title": "Yes?"}
	}
	b, _ := json.Marshal(map[string]any{
		"method": "elicitation/create",
		"params": map[string]any{
			"mode":    "form",
			"message": message,
			"requestedSchema": map[string]any{
				"type":       "object",
				"properties": map[string]any{field: prop},
				"required":   []string{field},
			},
		},
	})
	return b
}

// AskText asks a person for a value (kind QuestionText or QuestionSecret) and
// returns it. Errors: ErrDeclined, RUN_TIMEOUT "no answer", the context's.
func AskText(ctx context.Context, env Env, requestID, kind, message string) (string, error) {
	if kind != QuestionText && kind != QuestionSecret {
		return "", fmt.Errorf("AskText: kind must be %q or %q, got %q", QuestionText, QuestionSecret, kind)
	}
	raw, err := env.Ask(ctx, Question{RequestID: requestID, Kind: kind, Message: message, Request: formRequest(kind, message)})
	if err != nil {
		return "", err
	}
	var res elicitResult
	if err := json.Unmarshal(raw, &res); err != nil {
		return "", Errorf(ExecutionError, "the answer to %q is not an elicitation result", message)
	}
	if res.Action != "accept" {
		return "", ErrDeclined
	}
	s, ok := res.Content[answerValueField].(string)
	if !ok {
		return "", Errorf(ExecutionError, "the answer to %q has no string %q", message, answerValueField)
	}
	return s, nil
}

// AskConfirm asks a person a yes/no question. A declined or cancelled
// elicitation is a no.
func AskConfirm(ctx context.Context, env Env, requestID, message string) (bool, error) {
	raw, err := env.Ask(ctx, Question{RequestID: requestID, Kind: QuestionConfirm, Message: message, Request: formRequest(QuestionConfirm, message)})
	if err != nil {
		return false, err
	}
	var res elicitResult
	if err := json.Unmarshal(raw, &res); err != nil {
		return false, Errorf(ExecutionError, "the answer to %q is not an elicitation result", message)
	}
	yes, _ := res.Content[answerConfirmField].(bool)
	return res.Action == "accept" && yes, nil
}

// AnswerQuestion answers the question requestID of run runID, or its only
// outstanding question when requestID is "". Errors: RUN_NOT_FOUND;
// INVALID_PARAMETER when nothing with that requestId is waiting, or the
// answer does not fit the question's kind (value for text and secret,
// confirm for confirm).
func (e *Engine) AnswerQuestion(ctx context.Context, runID, requestID string, a Answer) (*WaitingQuestion, error) {
	if _, err := e.Get(ctx, runID); err != nil {
		return nil, err
	}
	pending, err := e.PendingQuestions(ctx, runID)
	if err != nil {
		return nil, err
	}
	var q *Question
	for i := range pending {
		if pending[i].RequestID == requestID || (requestID == "" && len(pending) == 1) {
			q = &pending[i]
		}
	}
	if q == nil {
		switch {
		case requestID == "" && len(pending) > 1:
			return nil, Errorf(InvalidParameter, "run %s waits for %d answers; name one with requestId", runID, len(pending)).
				WithDetails(map[string]any{"field": "requestId"})
		case requestID == "":
			return nil, Errorf(InvalidParameter, "run %s is not waiting for an answer", runID).WithDetails(map[string]any{"field": "runId"})
		}
		return nil, Errorf(InvalidParameter, "run %s is not waiting for an answer to requestId %q (answered already, expired, or never asked)", runID, requestID).
			WithDetails(map[string]any{"field": "requestId"})
	}
	var res elicitResult
	switch q.Kind {
	case QuestionText, QuestionSecret:
		if a.Value == nil || a.Confirm != nil {
			return nil, Errorf(InvalidParameter, "request %s asks for a %s value: give value (a string), not confirm", q.RequestID, q.Kind).
				WithDetails(map[string]any{"field": "value"})
		}
		res = elicitResult{Action: "accept", Content: map[string]any{answerValueField: *a.Value}}
	case QuestionConfirm:
		if a.Confirm == nil || a.Value != nil {
			return nil, Errorf(InvalidParameter, "request %s asks to confirm: give confirm (true or false), not value", q.RequestID).
				WithDetails(map[string]any{"field": "confirm"})
		}
		res = elicitResult{Action: "accept", Content: map[string]any{answerConfirmField: *a.Confirm}}
	case QuestionTakeover:
		// confirm true: the person is done with the takeover; false: they
		// will not do it.
		if a.Confirm == nil || a.Value != nil {
			return nil, Errorf(InvalidParameter, "request %s is a takeover: give confirm true once the person finished in the live view (%s), false if they will not; not value", q.RequestID, requestURL(q.Request)).
				WithDetails(map[string]any{"field": "confirm"})
		}
		res = elicitResult{Action: "decline"}
		if *a.Confirm {
			res = elicitResult{Action: "accept", Content: map[string]any{"done": true}}
		}
	default:
		return nil, Errorf(InvalidParameter, "request %s is an MCP %s request; answer it with the client that started the task", q.RequestID, q.Kind).
			WithDetails(map[string]any{"field": "requestId"})
	}
	b, err := json.Marshal(res)
	if err != nil {
		return nil, Wrap(ExecutionError, err, "encode answer: %v", err)
	}
	ok, err := e.deliver(ctx, *q, b)
	if err != nil {
		return nil, err
	}
	if !ok {
		return nil, Errorf(InvalidParameter, "request %s of run %s was answered or expired meanwhile", q.RequestID, runID).
			WithDetails(map[string]any{"field": "requestId"})
	}
	return q.Waiting(), nil
}
