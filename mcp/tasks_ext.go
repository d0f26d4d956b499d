package mcp

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/browsertask/browsertask/engine"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// The Tasks extension of MCP 2026-07-28 (io.modelcontextprotocol/tasks,
// SEP-2663) on top of runs, beside the 2025-11-25 Tasks of tasks.go. A
// task is still a run (taskId == runId, stored in SQLite before the answer
// is sent), so both dialects read the same tasks, every process on the
// database answers for every task, and a task survives a crash as its run
// does. What differs is the wire: the server decides per tools/call
// whether to answer with a task ({resultType: "task", ...}); tasks/get
// inlines the result once the task is terminal; tasks/update delivers
// input; tasks/cancel is an empty acknowledgement; tasks/result and
// tasks/list do not exist.

// Result types of MCP 2026-07-28 results.
const (
	resultComplete = "complete"
	resultTask     = "task"
)

// taskInputRequired is the extension's status of a task waiting for input.
const taskInputRequired = "input_required"

// extTask is the extension's Task: integer milliseconds, no legacy ttl or
// pollInterval.
type extTask struct {
	TaskID         string `json:"taskId"`
	Status         string `json:"status"`
	StatusMessage  string `json:"statusMessage,omitempty"`
	CreatedAt      string `json:"createdAt"`
	LastUpdatedAt  string `json:"lastUpdatedAt"`
	TTLMs          int64  `json:"ttlMs"`
	PollIntervalMs int64  `json:"pollIntervalMs,omitempty"`
}

// extTaskOf is the extension's view of a run, from the 2025-11-25 Task
// (one mapping of statuses, ttl and poll interval for both dialects).
func extTaskOf(run *engine.Run, prof engine.Profile) extTask {
	t := taskOf(run, prof)
	return extTask{
		TaskID: t.TaskID, Status: t.Status, StatusMessage: t.StatusMessage,
		CreatedAt: t.CreatedAt, LastUpdatedAt: t.LastUpdatedAt,
		TTLMs: t.TTL, PollIntervalMs: t.PollInterval,
	}
}

// createExtTaskResult is the extension's CreateTaskResult.
type createExtTaskResult struct {
	sdk.ResultBase
	ResultType string `json:"resultType"`
	extTask
}

// detailedTaskResult answers tasks/get (and is the payload of
// notifications/tasks): the task with what its status carries: the
// tool's result once completed, the JSON-RPC error once failed, the
// outstanding input requests while input_required.
type detailedTaskResult struct {
	sdk.ResultBase
	ResultType string `json:"resultType,omitempty"`
	extTask
	InputRequests map[string]json.RawMessage `json:"inputRequests,omitempty"`
	// Result is the tool's CallToolResult with resultType "complete", as
	// 2026-07-28 requires of every result.
	Result json.RawMessage `json:"result,omitempty"`
	Error  *jsonrpc.Error  `json:"error,omitempty"`
}

// completeResult is the empty acknowledgement of tasks/update and
// tasks/cancel.
type completeResult struct {
	sdk.ResultBase
	ResultType string `json:"resultType"`
}

// updateTaskParams are the params of tasks/update.
type updateTaskParams struct {
	sdk.ParamsBase
	TaskID         string                     `json:"taskId"`
	InputResponses map[string]json.RawMessage `json:"inputResponses"`
}

// taskSlot receives the run a modern tools/call turned into a task: the
// tool's handler fills it instead of answering with an async handle, and
// callModern answers CreateTaskResult.
type taskSlot struct {
	run   *engine.Run
	dedup bool
}

type taskSlotKey struct{}

// taskSlotFrom is the slot of a call whose client declared the Tasks
// extension, nil otherwise.
func taskSlotFrom(ctx context.Context) *taskSlot {
	s, _ := ctx.Value(taskSlotKey{}).(*taskSlot)
	return s
}

// offerTask hands run to the request's task slot. It reports false when
// the client did not declare the extension (the caller answers as before).
func offerTask(ctx context.Context, run *engine.Run, dedup bool) bool {
	slot := taskSlotFrom(ctx)
	if slot == nil || run == nil || run.Status.Terminal() {
		return false
	}
	slot.run, slot.dedup = run, dedup
	return true
}

// callModern answers a 2026-07-28 tools/call. For a client that declared
// the Tasks extension, a tool whose work outlives the request (a run of
// run_task_template that does not end within the auto budget, or was
// submitted async) answers CreateTaskResult instead of a run handle.
func (s *Server) callModern(ctx context.Context, next sdk.MethodHandler, call *sdk.CallToolRequest) (sdk.Result, error) {
	if !declaresTasks(call.Params.Meta) {
		return next(ctx, methodToolsCall, call)
	}
	slot := &taskSlot{}
	res, err := next(context.WithValue(ctx, taskSlotKey{}, slot), methodToolsCall, call)
	if err != nil || slot.run == nil {
		return res, err
	}
	run := slot.run
	t := extTaskOf(run, s.eng.Profile())
	s.log.Info("task created", "taskId", run.RunID, "template", run.TemplateID, "ttlMs", t.TTLMs, "deduplicated", slot.dedup, "dialect", modernVersion)
	out := &createExtTaskResult{ResultType: resultTask, extTask: t}
	out.Meta = sdk.Meta{metaImmediateResponse: fmt.Sprintf(
		"Run %s (template %s) goes on as a task (status %s); poll tasks/get with taskId %s every %d ms. The task is kept for %d ms.",
		run.RunID, run.TemplateID, run.Status, t.TaskID, t.PollIntervalMs, t.TTLMs)}
	return out, nil
}

// extTasksGet answers tasks/get in the extension's dialect.
func (s *Server) extTasksGet(ctx context.Context, p *taskIDParams) (*detailedTaskResult, error) {
	run, err := s.extTaskRun(ctx, p.Meta, p)
	if err != nil {
		return nil, err
	}
	res := s.detailedTask(ctx, run)
	res.ResultType = resultComplete
	return res, nil
}

// detailedTask is the DetailedTask of run: a finished run is "completed"
// with the CallToolResult its tool gives (isError for a failed run: the
// extension keeps "failed" for JSON-RPC errors), a canceled run
// "cancelled", a run waiting for input "input_required" with its
// requests.
func (s *Server) detailedTask(ctx context.Context, run *engine.Run) *detailedTaskResult {
	res := &detailedTaskResult{extTask: extTaskOf(run, s.eng.Profile())}
	switch {
	case run.Status == engine.StatusCanceled:
	case run.Status.Terminal():
		if _, rpcErr := s.pluginAnswer(run); rpcErr != nil {
			res.Status = taskFailed
			res.Error = rpcErr
			break
		}
		res.Status = taskCompleted
		res.Result = completeToolResult(s.toolResultOf(ctx, run))
	default:
		// input_required only with the requests it carries (the question
		// may have been answered since the run was read).
		res.Status = taskWorking
		if reqs := s.pendingInputs(ctx, run); len(reqs) > 0 {
			res.Status = taskInputRequired
			res.InputRequests = reqs
		}
	}
	return res
}

// completeToolResult encodes a CallToolResult with resultType "complete"
// (the SDK sets the field only on results it sends itself).
func completeToolResult(r *sdk.CallToolResult) json.RawMessage {
	if r.Content == nil {
		r.Content = []sdk.Content{}
	}
	b, err := json.Marshal(r)
	if err != nil {
		b, _ = json.Marshal(&sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: fmt.Sprintf("the task's result does not encode: %v", err)}}})
	}
	var obj map[string]json.RawMessage
	if json.Unmarshal(b, &obj) != nil {
		return b
	}
	obj["resultType"] = json.RawMessage(`"complete"`)
	out, _ := json.Marshal(obj)
	return out
}

// toolResultOf is the CallToolResult of a finished run as its tool answers
// it: a Plugin tool's own result, or run_task_template's sync reply.
func (s *Server) toolResultOf(ctx context.Context, run *engine.Run) *sdk.CallToolResult {
	if res, _ := s.pluginAnswer(run); res != nil {
		return res
	}
	return s.syncReply(ctx, run, dedupInfo{})
}

// extTasksCancel answers tasks/cancel in the extension's dialect: the
// run is cancelled when it is still working; a task already terminal is
// acknowledged the same way (the call is idempotent).
func (s *Server) extTasksCancel(ctx context.Context, p *taskIDParams) (*completeResult, error) {
	run, err := s.extTaskRun(ctx, p.Meta, p)
	if err != nil {
		return nil, err
	}
	if !run.Status.Terminal() {
		if _, err := s.eng.Cancel(ctx, run.RunID, taskCancelReason); err != nil && engine.CodeOf(err) != engine.RunNotFound {
			return nil, errInternal(err)
		}
		s.log.Info("task cancelled", "taskId", run.RunID, "dialect", modernVersion)
	}
	return &completeResult{ResultType: resultComplete}, nil
}

// tasksUpdate answers tasks/update: the responses are handed to the run
// waiting for them (any process may hold it). Errors: -32601 outside the
// extension's dialect, -32602 for a missing or unknown taskId.
func (s *Server) tasksUpdate(ctx context.Context, _ *sdk.ServerSession, p *updateTaskParams) (sdk.Result, error) {
	if p == nil || !modernMeta(p.Meta) {
		return nil, errMethodNotFound("tasks/update", "it belongs to the Tasks extension of MCP 2026-07-28")
	}
	run, err := s.extTaskRun(ctx, p.Meta, &taskIDParams{TaskID: p.TaskID})
	if err != nil {
		return nil, err
	}
	if err := s.deliverInputs(ctx, run, p.InputResponses); err != nil {
		return nil, err
	}
	return &completeResult{ResultType: resultComplete}, nil
}

// extTaskRun is the run of a task method's taskId for a client that
// declared the extension. Errors: -32021 without the declaration, then as
// taskRun.
func (s *Server) extTaskRun(ctx context.Context, meta sdk.Meta, p *taskIDParams) (*engine.Run, error) {
	if !declaresTasks(meta) {
		return nil, errMissingTasksCapability()
	}
	return s.taskRun(ctx, p)
}

// errMethodNotFound is -32601 for a method of the other dialect.
func errMethodNotFound(method, why string) *jsonrpc.Error {
	return &jsonrpc.Error{Code: jsonrpc.CodeMethodNotFound, Message: fmt.Sprintf("Method not found: %s (%s)", method, why)}
}

// errMissingTasksCapability is -32021 for a call that only works as a task
// from a client that did not declare the extension.
func errMissingTasksCapability() *jsonrpc.Error {
	data, _ := json.Marshal(map[string]any{"requiredCapabilities": map[string]any{"extensions": map[string]any{tasksExtension: map[string]any{}}}})
	return &jsonrpc.Error{Code: sdk.CodeMissingRequiredClientCapabilities, Message: "Missing required client capability: declare the io.modelcontextprotocol/tasks extension in _meta clientCapabilities.extensions", Data: data}
}
