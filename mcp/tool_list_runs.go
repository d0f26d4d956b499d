package mcp

import (
	"context"
	"encoding/json"

	"github.com/browsertask/browsertask/engine"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// Paging bounds of list_task_runs.
const (
	defaultListLimit = 50
	maxListLimit     = 1000
)

func (s *Server) listTaskRunsTool() toolDef {
	return toolDef{
		name:  "list_task_runs",
		title: "List runs",
		description: "Lists runs newest first (by createdAt, ties by runId), optionally filtered by status, templateId " +
			"or sessionId, one page at a time: limit 1..1000 (default 50), offset >= 0 (default 0). " +
			"total is the number of runs matching the filter before paging, so page until offset+len(runs) >= total. " +
			"Use it to find runs you lost track of or to see what is queued or running. " +
			"Runs expire runTtlMs after they end. Errors: INVALID_PARAMETER (bad status, limit or offset).",
		annotations: &sdk.ToolAnnotations{ReadOnlyHint: true, IdempotentHint: true},
		input: object(map[string]any{
			"status":     map[string]any{"type": "string", "enum": statusEnum(), "description": "Only runs in this status."},
			"templateId": str("Only runs of this template."),
			"sessionId":  str("Only runs in this browser session."),
			"limit":      map[string]any{"type": "integer", "minimum": 1, "maximum": maxListLimit, "default": defaultListLimit, "description": "Page size."},
			"offset":     offsetInt("Runs to skip."),
		}),
		output: outputOf(object(map[string]any{
			"runs":   map[string]any{"type": "array", "items": runSchema()},
			"total":  integer("Runs matching the filter, before paging."),
			"limit":  integer("Page size used."),
			"offset": integer("Offset used."),
		}, "runs", "total", "limit", "offset")),
		handle: s.listTaskRuns,
	}
}

// listTaskRuns answers one page of runs.
func (s *Server) listTaskRuns(ctx context.Context, _ *sdk.CallToolRequest, raw json.RawMessage) *sdk.CallToolResult {
	a := struct {
		Status     string `json:"status"`
		TemplateID string `json:"templateId"`
		SessionID  string `json:"sessionId"`
		Limit      int    `json:"limit"`
		Offset     int    `json:"offset"`
	}{Limit: defaultListLimit}
	if err := decodeArgs(raw, &a); err != nil {
		return errorResult(err)
	}
	list, err := s.eng.List(ctx, engine.ListQuery{
		Status: a.Status, TemplateID: a.TemplateID, SessionID: a.SessionID, Limit: a.Limit, Offset: a.Offset,
	})
	return s.answer("list_task_runs", list, err)
}
