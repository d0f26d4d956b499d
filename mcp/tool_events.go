package mcp

import (
	"context"
	"encoding/json"
	"time"

	"github.com/browsertask/browsertask/engine"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// Bounds of the event tools' arguments.
const (
	maxEventWaitMs     = 30000
	defaultEventWaitMs = 10000
)

// eventPage is the answer of both event tools.
type eventPage struct {
	Events   []engine.Event `json:"events"`
	NextSeq  int64          `json:"nextSeq"`
	Terminal bool           `json:"terminal"`
}

// eventPageSchema is {events, nextSeq, terminal}.
func eventPageSchema() map[string]any {
	event := object(map[string]any{
		"runId": str("Run the event belongs to."),
		"seq":   integer("Position in the run's log, 1.. without gaps; resume after it with afterSeq."),
		"at":    integer("When it happened, Unix ms."),
		"type":  str("created, status, progress, item, artifact or log."),
		"data":  nullableObject("Event details, for example {\"status\":\"running\"} or an item checkpoint."),
	}, "runId", "seq", "at", "type")
	return object(map[string]any{
		"events":   map[string]any{"type": "array", "items": event},
		"nextSeq":  integer("Pass this as afterSeq in the next call."),
		"terminal": map[string]any{"type": "boolean", "description": "True when the run has ended and no event after nextSeq remains: stop following."},
	}, "events", "nextSeq", "terminal")
}

func (s *Server) getTaskRunEventsTool() toolDef {
	return toolDef{
		name:  "get_task_run_events",
		title: "Read a run's events",
		description: "Returns a run's event log after afterSeq (default 0 = from the start), oldest first, at most limit " +
			"(1..1000, default 500): status changes, progress, item results and artifacts, each with a seq. " +
			"Answer {events, nextSeq, terminal}: call again with afterSeq = nextSeq to continue; terminal true means the " +
			"run has ended and nothing follows. Use subscribe_task_run_events instead to wait for new events. " +
			"Errors: RUN_NOT_FOUND (unknown or expired runId), INVALID_PARAMETER.",
		annotations: &sdk.ToolAnnotations{ReadOnlyHint: true, IdempotentHint: true},
		input: object(map[string]any{
			"runId":    str("The run to read."),
			"afterSeq": offsetInt("Return only events with seq > afterSeq."),
			"limit":    map[string]any{"type": "integer", "minimum": 1, "maximum": engine.MaxEventLimit, "default": engine.DefaultEventLimit, "description": "Most events returned."},
		}, "runId"),
		output: outputOf(eventPageSchema()),
		handle: s.getTaskRunEvents,
	}
}

func (s *Server) subscribeTaskRunEventsTool() toolDef {
	return toolDef{
		name:  "subscribe_task_run_events",
		title: "Wait for a run's next events",
		description: "Long-poll for a run's events: returns as soon as the run has events after afterSeq (default 0), " +
			"or an empty list after waitMs (0..30000, default 10000) when nothing happened, or at once when the run has " +
			"ended and everything was read. Answer {events, nextSeq, terminal}; loop with afterSeq = nextSeq until " +
			"terminal is true. Cheaper and faster than polling get_task_run; nothing is lost across reconnects or a " +
			"server restart because afterSeq resumes exactly. Errors: RUN_NOT_FOUND, INVALID_PARAMETER.",
		annotations: &sdk.ToolAnnotations{ReadOnlyHint: true, IdempotentHint: true},
		input: object(map[string]any{
			"runId":    str("The run to follow."),
			"afterSeq": offsetInt("Return only events with seq > afterSeq (the previous answer's nextSeq)."),
			"waitMs":   map[string]any{"type": "integer", "minimum": 0, "maximum": maxEventWaitMs, "default": defaultEventWaitMs, "description": "Longest wait for a new event, in ms."},
		}, "runId"),
		output: outputOf(eventPageSchema()),
		handle: s.subscribeTaskRunEvents,
	}
}

// getTaskRunEvents answers one page of the log.
func (s *Server) getTaskRunEvents(ctx context.Context, _ *sdk.CallToolRequest, raw json.RawMessage) *sdk.CallToolResult {
	a := struct {
		RunID    string `json:"runId"`
		AfterSeq int64  `json:"afterSeq"`
		Limit    int    `json:"limit"`
	}{Limit: engine.DefaultEventLimit}
	if err := decodeArgs(raw, &a); err != nil {
		return errorResult(err)
	}
	evs, next, terminal, err := s.eng.EventsAfter(ctx, a.RunID, a.AfterSeq, a.Limit)
	return s.answer("get_task_run_events", eventPage{Events: evs, NextSeq: next, Terminal: terminal}, err)
}

// subscribeTaskRunEvents long-polls for the next events.
func (s *Server) subscribeTaskRunEvents(ctx context.Context, _ *sdk.CallToolRequest, raw json.RawMessage) *sdk.CallToolResult {
	a := struct {
		RunID    string `json:"runId"`
		AfterSeq int64  `json:"afterSeq"`
		WaitMs   int64  `json:"waitMs"`
	}{WaitMs: defaultEventWaitMs}
	if err := decodeArgs(raw, &a); err != nil {
		return errorResult(err)
	}
	evs, next, terminal, err := s.eng.WaitEvents(ctx, a.RunID, a.AfterSeq, time.Duration(a.WaitMs)*time.Millisecond)
	return s.answer("subscribe_task_run_events", eventPage{Events: evs, NextSeq: next, Terminal: terminal}, err)
}
