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
			"Rows carry every run field but result: resultBytes is its size, artifactIds name the files, and " +
			"get_task_run returns the result. A page holds fewer rows than limit when more would not fit the " +
			"answer budget (truncated: true): go on from offset+len(runs). Runs expire runTtlMs after they end. Errors: INVALID_PARAMETER (bad status, limit or offset).",
		annotations: &sdk.ToolAnnotations{ReadOnlyHint: true, IdempotentHint: true},
		input: object(map[string]any{
			"status":     map[string]any{"type": "string", "enum": statusEnum(), "description": "Only runs in this status."},
			"templateId": str("Only runs of this template."),
			"sessionId":  str("Only runs in this browser session."),
			"limit":      map[string]any{"type": "integer", "minimum": 1, "maximum": maxListLimit, "default": defaultListLimit, "description": "Page size."},
			"offset":     offsetInt("Runs to skip."),
		}),
		output: outputOf(object(map[string]any{
			"runs":      map[string]any{"type": "array", "items": runRowSchema()},
			"total":     integer("Runs matching the filter, before paging."),
			"limit":     integer("Page size used."),
			"offset":    integer("Offset used."),
			"truncated": map[string]any{"type": "boolean", "description": "Present and true when fewer than limit rows fit the answer budget: page on from offset+len(runs)."},
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
	if err != nil {
		return s.errorResultLogged("list_task_runs", err)
	}
	rows := rowsOf(list, s.budget()-linkReserve)
	res := jsonResult(rows, false)
	var ids []string
	for _, r := range rows.Runs {
		ids = append(ids, r.ArtifactIDs...)
	}
	res.Content = append(res.Content, resourceLinks(s.artifactMetas(ctx, ids))...)
	return res
}

// runList is list_task_runs' answer: rows without their results, so
// "what is running?" does not cost every result ever produced.
type runList struct {
	Runs   []runRow `json:"runs"`
	Total  int      `json:"total"`
	Limit  int      `json:"limit"`
	Offset int      `json:"offset"`
	// Truncated says the page holds fewer rows than limit because more
	// would not fit the reply budget: page on from offset+len(runs).
	Truncated bool `json:"truncated,omitempty"`
}

// runRow is a run as list_task_runs lists it: every field but result,
// which resultBytes sizes (get_task_run returns it; artifactIds name the
// files).
type runRow struct {
	*engine.Run
	// Result shadows the run's: always nil, so left out.
	Result      json.RawMessage `json:"result,omitempty"`
	ResultBytes int             `json:"resultBytes"`
}

// rowsOf turns a page of runs into list rows, as many as fit in budget
// bytes (at least one).
func rowsOf(l *engine.RunList, budget int) runList {
	out := runList{Runs: make([]runRow, 0, len(l.Runs)), Total: l.Total, Limit: l.Limit, Offset: l.Offset}
	size := listOverhead
	for _, r := range l.Runs {
		row := runRow{Run: r, ResultBytes: len(r.Result)}
		b, err := json.Marshal(row)
		if err == nil && len(out.Runs) > 0 && size+len(b)+1 > budget {
			out.Truncated = true
			break
		}
		size += len(b) + 1
		out.Runs = append(out.Runs, row)
	}
	return out
}

// listOverhead is room for the list's own fields around its rows.
const listOverhead = 200
