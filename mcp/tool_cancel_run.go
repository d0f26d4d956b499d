package mcp

import (
	"context"
	"encoding/json"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

func (s *Server) cancelTaskRunTool() toolDef {
	return toolDef{
		name:  "cancel_task_run",
		title: "Cancel a run",
		description: "Cancels a queued or running run: it is canceled (error.errorCode RUN_CANCELED) before this " +
			"answers {success: true, runId, status: \"canceled\"}, and its browser work stops within 2 seconds. " +
			"A run that already ended is left as it is and the answer is {success: false, runId, status, reason} - " +
			"not an error. Use it when a run is no longer wanted or takes too long. " +
			"Errors: RUN_NOT_FOUND (unknown or expired runId).",
		annotations: destructiveIdempotent(),
		input: object(map[string]any{
			"runId":  str("The run to cancel."),
			"reason": map[string]any{"type": "string", "maxLength": 1000, "description": "Optional reason, kept with the run."},
		}, "runId"),
		output: outputOf(object(map[string]any{
			"success": map[string]any{"type": "boolean", "description": "True when this call canceled the run."},
			"runId":   str("The run."),
			"status":  map[string]any{"type": "string", "enum": statusEnum()},
			"reason":  str("Why nothing was canceled (when success is false)."),
		}, "success", "runId", "status")),
		handle: s.cancelTaskRun,
	}
}

// cancelTaskRun cancels the run.
func (s *Server) cancelTaskRun(ctx context.Context, _ *sdk.CallToolRequest, raw json.RawMessage) *sdk.CallToolResult {
	var a struct {
		RunID  string `json:"runId"`
		Reason string `json:"reason"`
	}
	if err := decodeArgs(raw, &a); err != nil {
		return errorResult(err)
	}
	// The cancel must complete even if the client stops waiting for it.
	res, err := s.eng.Cancel(context.WithoutCancel(ctx), a.RunID, a.Reason)
	return s.answer("cancel_task_run", res, err)
}
