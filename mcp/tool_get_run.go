package mcp

import (
	"context"
	"encoding/json"

	"github.com/browsertask/browsertask/engine"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

func (s *Server) getTaskRunTool() toolDef {
	return toolDef{
		name:  "get_task_run",
		title: "Get a run",
		description: "Returns one run by runId: status (queued, running, succeeded, partial_success, failed, canceled), " +
			"progress, metrics, and once it is terminal its result (succeeded/partial_success) or error " +
			"(failed/canceled, with errorCode, message and recovery advice), plus artifactIds to read with get_artifact. " +
			"A result larger than the answer budget (maxInlineBytes in get_runtime_profile, default 64 KiB) is cut " +
			"to its first whole items with truncated: true, itemsInline, itemsTotal and artifactId, the artifact " +
			"that holds them all. The answer's first text block is a one-line summary, the second the JSON; " +
			"resource_link blocks point at the artifacts and a finished run's images come as image blocks. " +
			"Use it to poll a run started in async mode; poll every second or two, not faster. " +
			"Runs are kept for runTtlMs (default 30 min) after they end. Errors: RUN_NOT_FOUND (unknown or expired runId).",
		annotations: &sdk.ToolAnnotations{ReadOnlyHint: true, IdempotentHint: true},
		input: object(map[string]any{
			"runId": str("The runId returned by run_task_template or list_task_runs."),
		}, "runId"),
		output: outputOf(runSchema()),
		handle: s.getTaskRun,
	}
}

// getTaskRun answers the run.
func (s *Server) getTaskRun(ctx context.Context, _ *sdk.CallToolRequest, raw json.RawMessage) *sdk.CallToolResult {
	var a struct {
		RunID string `json:"runId"`
	}
	if err := decodeArgs(raw, &a); err != nil {
		return errorResult(err)
	}
	run, err := s.eng.Get(ctx, a.RunID)
	if err != nil {
		return s.errorResultLogged("get_task_run", err)
	}
	return s.runReply(ctx, run, func(r *engine.Run) any { return r }, false)
}
