package mcp

import (
	"encoding/json"
	"fmt"
	"time"

	"github.com/browsertask/browsertask/engine"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// MCP 2025-11-25 Tasks on top of runs (README, "MCP Tasks"): a task IS a run,
// taskId == runId, so tasks live in SQLite, survive restarts and are seen by
// every process sharing the database. In local trust mode any local client
// that can reach the server can list, read and cancel every task.

// Task statuses of MCP 2025-11-25.
const (
	taskWorking   = "working"
	taskCompleted = "completed"
	taskFailed    = "failed"
	taskCancelled = "cancelled"
)

// Meta keys of the Tasks specification.
const (
	metaRelatedTask       = "io.modelcontextprotocol/related-task"
	metaImmediateResponse = "io.modelcontextprotocol/model-immediate-response"
)

// defaultPollIntervalMs is the suggested poll interval when the profile
// does not set taskPollIntervalMs.
const defaultPollIntervalMs = 1000

// taskToolName is the one tool that may be called as a task.
const taskToolName = "run_task_template"

// Task is the MCP Task object. TTL is always set: this server never grants
// an unlimited lifetime.
type Task struct {
	TaskID        string `json:"taskId"`
	Status        string `json:"status"`
	StatusMessage string `json:"statusMessage,omitempty"`
	CreatedAt     string `json:"createdAt"`
	LastUpdatedAt string `json:"lastUpdatedAt"`
	TTL           int64  `json:"ttl"`
	PollInterval  int64  `json:"pollInterval,omitempty"`
}

// taskStatusOf maps a run status to a task status: queued and running are
// working, succeeded and partial_success completed, failed failed and
// canceled cancelled.
func taskStatusOf(s engine.RunStatus) string {
	switch s {
	case engine.StatusSucceeded, engine.StatusPartialSuccess:
		return taskCompleted
	case engine.StatusFailed:
		return taskFailed
	case engine.StatusCanceled:
		return taskCancelled
	}
	return taskWorking
}

// runTaskStatus is the task status of run: input_required while a running
// run waits for an answer (Run.Question), otherwise taskStatusOf.
func runTaskStatus(run *engine.Run) string {
	if run.Status == engine.StatusRunning && run.Question != nil {
		return taskInputRequired
	}
	return taskStatusOf(run.Status)
}

// rfc3339 renders Unix milliseconds as an RFC 3339 UTC timestamp.
func rfc3339(ms int64) string {
	return time.UnixMilli(ms).UTC().Format("2006-01-02T15:04:05.000Z07:00")
}

// taskOf builds the Task view of a run. ttl is the run's retention (the
// granted task ttl); pollInterval comes from the profile.
func taskOf(run *engine.Run, prof engine.Profile) Task {
	ttl := run.TTLMs
	if ttl <= 0 {
		ttl = prof.RunTTLMs
	}
	if ttl <= 0 && run.ExpiresAt > run.CreatedAt {
		ttl = run.ExpiresAt - run.CreatedAt
	}
	poll := prof.TaskPollIntervalMs
	if poll <= 0 {
		poll = defaultPollIntervalMs
	}
	return Task{
		TaskID:        run.RunID,
		Status:        runTaskStatus(run),
		StatusMessage: statusMessage(run),
		CreatedAt:     rfc3339(run.CreatedAt),
		LastUpdatedAt: rfc3339(max(run.UpdatedAt, run.CreatedAt)),
		TTL:           ttl,
		PollInterval:  poll,
	}
}

// statusMessage describes a run for people: the error message of a failed
// or canceled run, otherwise its state and progress.
func statusMessage(run *engine.Run) string {
	if (run.Status == engine.StatusFailed || run.Status == engine.StatusCanceled) && run.Error != nil && run.Error.Message != "" {
		return run.Error.Message
	}
	p := run.Progress
	switch run.Status {
	case engine.StatusQueued:
		return fmt.Sprintf("Run %s is queued.", run.RunID)
	case engine.StatusRunning:
		if p.Message != "" {
			return fmt.Sprintf("Run %s is running: %s", run.RunID, p.Message)
		}
		return fmt.Sprintf("Run %s is running: %d/%d steps done.", run.RunID, p.DoneSteps, p.TotalSteps)
	case engine.StatusPartialSuccess:
		return fmt.Sprintf("Run %s ended partial_success: %d of %d steps failed.", run.RunID, p.FailedSteps, p.TotalSteps)
	}
	return fmt.Sprintf("Run %s %s.", run.RunID, run.Status)
}

// Task protocol errors (JSON-RPC). The messages follow the Tasks spec.
func errTaskNotFound(taskID string) *jsonrpc.Error {
	data, _ := json.Marshal(map[string]string{"taskId": taskID})
	return &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: "Failed to retrieve task: Task not found", Data: data}
}

func errTaskTerminal(status string) *jsonrpc.Error {
	return &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams,
		Message: fmt.Sprintf("Cannot cancel task: already in terminal status '%s'", status)}
}

func errInvalidParams(format string, args ...any) *jsonrpc.Error {
	return &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: fmt.Sprintf(format, args...)}
}

// errDomainParams is -32602 carrying the contract's error object as data,
// for a task-augmented call refused before any run exists.
func errDomainParams(err error) *jsonrpc.Error {
	e := engine.AsError(err)
	data, _ := json.Marshal(e)
	return &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: string(e.Code) + ": " + e.Message, Data: data}
}

// errInternal is -32603 for unexpected failures (storage and the like).
func errInternal(err error) *jsonrpc.Error {
	return &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: "Internal error: " + err.Error()}
}

// taskLookupError maps an engine error of Get to the Tasks spec's errors.
func taskLookupError(taskID string, err error) *jsonrpc.Error {
	if engine.CodeOf(err) == engine.RunNotFound {
		return errTaskNotFound(taskID)
	}
	return errInternal(err)
}

// createTaskResult is CreateTaskResult: {task, _meta}.
type createTaskResult struct {
	sdk.ResultBase
	Task Task `json:"task"`
}

// taskResult is the answer of tasks/get and tasks/cancel: a Task.
type taskResult struct {
	sdk.ResultBase
	Task
}

// listTasksResult is the answer of tasks/list.
type listTasksResult struct {
	sdk.ResultBase
	Tasks      []Task `json:"tasks"`
	NextCursor string `json:"nextCursor,omitempty"`
}

// taskIDParams are the params of tasks/get, tasks/result and tasks/cancel.
type taskIDParams struct {
	sdk.ParamsBase
	TaskID string `json:"taskId"`
}

// listTasksParams are the params of tasks/list.
type listTasksParams struct {
	sdk.ParamsBase
	Cursor *string `json:"cursor,omitempty"`
}
