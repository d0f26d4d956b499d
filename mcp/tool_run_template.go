package mcp

import (
	"context"
	"encoding/json"
	"strconv"
	"time"

	"github.com/browsertask/browsertask/engine"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// runTemplateArgs are run_task_template's arguments.
type runTemplateArgs struct {
	TemplateID string          `json:"templateId"`
	SessionID  string          `json:"sessionId"`
	Profile    string          `json:"profile"`
	Inputs     json.RawMessage `json:"inputs"`
	Options    struct {
		Mode           engine.Mode     `json:"mode"`
		TimeoutMs      int64           `json:"timeoutMs"`
		IdempotencyKey string          `json:"idempotencyKey"`
		OutputSchema   json.RawMessage `json:"outputSchema"`
	} `json:"options"`
}

func (s *Server) runTaskTemplateTool() toolDef {
	openWorld := true
	notDestructive := false
	return toolDef{
		name:  "run_task_template",
		title: "Run a task template",
		description: "Starts a run of a browser task template (see list_task_templates for ids and input schemas) " +
			"and returns either the finished run or a handle to poll. " +
			"templateId may pin a version as \"id@N\". inputs are checked against the template's inputSchema; " +
			"unknown input fields are rejected. Without sessionId the run gets its own fresh browser session; with profile it runs in that persistent profile's browser (list_profiles). " +
			"options.mode: \"sync\" waits for the end and returns the full run (result or error); " +
			"\"async\" returns at once {runId, sessionId, status, mode, deduplicated} - then poll get_task_run; " +
			"\"auto\" (default) waits up to autoSyncBudgetMs (see get_runtime_profile, default " +
			strconv.Itoa(int(engine.DefaultAutoSyncBudget/time.Second)) + " s) and answers " +
			"like sync if the run finished, else like async. The answer's mode field says which happened. " +
			"options.timeoutMs (1..600000; sync at most syncTimeoutMs) bounds the running phase; when it elapses " +
			"the run fails with RUN_TIMEOUT. options.idempotencyKey (1.." + strconv.Itoa(engine.MaxIdempotencyKeyChars) + " chars) makes a repeat submission " +
			"within the run TTL return the same run with deduplicated=true. Cancelling this request while it " +
			"waits cancels the run (unless it was deduplicated). Sends progress notifications when the request " +
			"carries a progressToken. A finished run's answer is sized like get_task_run's (result cut to the " +
			"answer budget, artifact links, images). Errors: INVALID_PARAMETER, TEMPLATE_NOT_FOUND, TEMPLATE_VERSION_UNSUPPORTED, " +
			"SESSION_NOT_FOUND, TRUST_LEVEL_NOT_ALLOWED; a finished run that failed is returned with isError " +
			"true and its error object inside.",
		annotations: &sdk.ToolAnnotations{OpenWorldHint: &openWorld, DestructiveHint: &notDestructive},
		input: object(map[string]any{
			"templateId": map[string]any{"type": "string", "minLength": 1,
				"description": `Template id, optionally with a version: "batch_extract_pages" or "batch_extract_pages@1".`},
			"sessionId": str("Optional: run inside this existing live browser session."),
			"profile": map[string]any{"type": "string", "minLength": 1, "maxLength": 63,
				"description": "Optional: run in this persistent browser profile (list_profiles), signed in where a person signed it in; not with sessionId."},
			"inputs": map[string]any{"type": "object", "description": "Template inputs, validated against the template's inputSchema."},
			"options": object(map[string]any{
				"mode": map[string]any{"type": "string", "enum": []string{"sync", "async", "auto"}, "default": "auto",
					"description": "sync: wait for the end; async: return at once; auto: wait up to autoSyncBudgetMs."},
				"timeoutMs": map[string]any{"type": "integer", "minimum": 1, "maximum": engine.MaxTimeoutMs,
					"description": "Bound on the running phase in ms (queue time excluded). Default: syncTimeoutMs for sync, asyncTimeoutMs otherwise."},
				"idempotencyKey": map[string]any{"type": "string", "minLength": 1, "maxLength": engine.MaxIdempotencyKeyChars,
					"description": "Deduplicates submissions of the same template within the run TTL."},
				"outputSchema": objectOrBoolean("JSON Schema (2020-12) for templates that declare usesOutputSchema in list_task_templates (required there: each item must match it); other templates ignore it."),
			}),
		}, "templateId"),
		output: outputOf(runAnswerSchema(), asyncHandleSchema()),
		handle: s.runTaskTemplate,
	}
}

// runTaskTemplate submits the run and answers in the requested mode.
func (s *Server) runTaskTemplate(ctx context.Context, req *sdk.CallToolRequest, raw json.RawMessage) *sdk.CallToolResult {
	res := s.submitAndReply(ctx, req, raw)
	if ignored := unknownArguments(s.runTaskTemplateTool().input, raw); len(ignored) > 0 {
		s.log.Info("run_task_template: unknown arguments ignored", "arguments", ignored)
		res = withIgnoredArguments(res, ignored)
	}
	return res
}

// withIgnoredArguments adds ignoredArguments to an answer object: unknown
// top-level or options fields are ignored for forward compatibility (the
// contract), and the caller is told which, so a misspelt option is not lost
// silently. Error results (no run) are left as they are.
func withIgnoredArguments(res *sdk.CallToolResult, ignored []string) *sdk.CallToolResult {
	raw, ok := res.StructuredContent.(json.RawMessage)
	if !ok {
		return res
	}
	var m map[string]any
	if json.Unmarshal(raw, &m) != nil || m["runId"] == nil {
		return res
	}
	m["ignoredArguments"] = ignored
	b, err := json.Marshal(m)
	if err != nil {
		return res
	}
	out := *res
	out.StructuredContent = json.RawMessage(b)
	// The JSON block follows the summary; blocks after it stay.
	out.Content = append([]sdk.Content{out.Content[0], &sdk.TextContent{Text: string(b)}}, out.Content[2:]...)
	return &out
}

// submitAndReply submits the run and answers in the requested mode.
func (s *Server) submitAndReply(ctx context.Context, req *sdk.CallToolRequest, raw json.RawMessage) *sdk.CallToolResult {
	var a runTemplateArgs
	if err := decodeArgs(raw, &a); err != nil {
		return errorResult(err)
	}
	// The engine checks the options (a sync timeout above syncTimeoutMs
	// too) and resolves the mode ("" is auto) into sub.Mode.
	sub, err := s.eng.Submit(ctx, engine.SubmitRequest{
		TemplateID:     a.TemplateID,
		SessionID:      a.SessionID,
		Profile:        a.Profile,
		Inputs:         a.Inputs,
		Mode:           a.Options.Mode,
		TimeoutMs:      a.Options.TimeoutMs,
		IdempotencyKey: a.Options.IdempotencyKey,
		OutputSchema:   a.Options.OutputSchema,
		ClientSampling: samplesDuring(req, a.Options.Mode),
	})
	if err != nil {
		return s.errorResultLogged("run_task_template", err)
	}
	switch sub.Mode {
	case engine.ModeAsync:
		offerTask(ctx, sub.Run, sub.Deduplicated)
		return asyncReply(sub.Run, dedupOf(sub))
	case engine.ModeSync:
		return s.waitReply(ctx, req, sub, 0)
	default:
		return s.waitReply(ctx, req, sub, autoBudget(s.eng.Profile()))
	}
}

// syncRunReply is a Run as run_task_template returns it in sync mode: the
// embedded Run's mode is shadowed by the mode actually used.
type syncRunReply struct {
	*engine.Run
	Mode         engine.Mode `json:"mode"`
	Deduplicated bool        `json:"deduplicated"`
	// InputsMatch is set only when Deduplicated (v1.1).
	InputsMatch *bool `json:"inputsMatch,omitempty"`
}

// asyncHandle is run_task_template's async reply.
type asyncHandle struct {
	RunID        string           `json:"runId"`
	SessionID    string           `json:"sessionId"`
	Status       engine.RunStatus `json:"status"`
	Mode         engine.Mode      `json:"mode"`
	Deduplicated bool             `json:"deduplicated"`
	// InputsMatch is set only when Deduplicated (v1.1).
	InputsMatch *bool `json:"inputsMatch,omitempty"`
	// Question is set when the run waits for a person (a sync or auto
	// call answers at once then, rather than hang until its timeout).
	Question *engine.WaitingQuestion `json:"inputRequest,omitempty"`
}

// syncReply is the full run with mode "sync". A run that ended failed or
// canceled is an isError result (its error object is inside the run), which
// is also what tasks/result will return for a task.
func (s *Server) syncReply(ctx context.Context, run *engine.Run, d dedupInfo) *sdk.CallToolResult {
	isError := run.Status == engine.StatusFailed || run.Status == engine.StatusCanceled
	return s.runReply(ctx, run, func(r *engine.Run) any {
		return syncRunReply{Run: r, Mode: engine.ModeSync, Deduplicated: d.deduplicated, InputsMatch: d.inputsMatch}
	}, isError)
}

// dedupInfo is what an answer says about idempotency: whether the key
// matched an existing run and, then only, whether the inputs did too.
type dedupInfo struct {
	deduplicated bool
	inputsMatch  *bool
}

// dedupOf reads dedupInfo from a submission.
func dedupOf(sub *engine.SubmitResult) dedupInfo {
	if !sub.Deduplicated {
		return dedupInfo{}
	}
	match := sub.InputsMatch
	return dedupInfo{deduplicated: true, inputsMatch: &match}
}

// asyncReply is the handle {runId, sessionId, status, mode:"async", deduplicated}.
func asyncReply(run *engine.Run, d dedupInfo) *sdk.CallToolResult {
	return jsonResult(asyncHandle{
		RunID:        run.RunID,
		SessionID:    run.SessionID,
		Status:       run.Status,
		Mode:         engine.ModeAsync,
		Deduplicated: d.deduplicated,
		InputsMatch:  d.inputsMatch,
		Question:     run.Question,
	}, false)
}
