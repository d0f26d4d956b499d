package mcp

import (
	"context"
	"encoding/base64"
	"strconv"
	"strings"

	"github.com/browsertask/browsertask/engine"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// taskPageSize is the number of tasks per tasks/list page.
const taskPageSize = 50

// taskCancelReason is the run's cancel reason for tasks/cancel.
const taskCancelReason = "cancelled through tasks/cancel"

// addTaskMethods registers tasks/get, tasks/result, tasks/list,
// tasks/cancel and tasks/update with the SDK (they then pass its checks
// and middleware). tasks/get and tasks/cancel answer in the dialect of the
// request's protocol version; tasks/result and tasks/list exist only
// before 2026-07-28, tasks/update only from it on.
func (s *Server) addTaskMethods() error {
	if err := sdk.AddReceivingCustomMethod(s.sdk, "tasks/get", s.tasksGet); err != nil {
		return err
	}
	if err := sdk.AddReceivingCustomMethod(s.sdk, "tasks/result", s.tasksResult); err != nil {
		return err
	}
	if err := sdk.AddReceivingCustomMethod(s.sdk, "tasks/list", s.tasksList); err != nil {
		return err
	}
	if err := sdk.AddReceivingCustomMethod(s.sdk, "tasks/update", s.tasksUpdate); err != nil {
		return err
	}
	return sdk.AddReceivingCustomMethod(s.sdk, "tasks/cancel", s.tasksCancel)
}

// legacyOnly refuses a 2025-11-25 Tasks method asked in the extension's
// dialect (-32601).
func legacyOnly(method string, meta sdk.Meta) error {
	if modernMeta(meta) {
		return errMethodNotFound(method, "the Tasks extension of MCP 2026-07-28 has tasks/get, tasks/update and tasks/cancel only")
	}
	return nil
}

// requireTaskID checks params.taskId. Errors: -32602.
func requireTaskID(p *taskIDParams) (string, error) {
	if p == nil || strings.TrimSpace(p.TaskID) == "" {
		return "", errInvalidParams("params.taskId is required")
	}
	return p.TaskID, nil
}

// taskRun loads the run of params.taskId. Errors: -32602 for a missing
// taskId, and "Failed to retrieve task: Task not found" for unknown,
// expired or purged tasks.
func (s *Server) taskRun(ctx context.Context, p *taskIDParams) (*engine.Run, error) {
	id, err := requireTaskID(p)
	if err != nil {
		return nil, err
	}
	run, err := s.eng.Get(ctx, id)
	if err != nil {
		return nil, taskLookupError(id, err)
	}
	return run, nil
}

// tasksGet answers tasks/get with the Task. Errors: as taskRun.
func (s *Server) tasksGet(ctx context.Context, _ *sdk.ServerSession, p *taskIDParams) (sdk.Result, error) {
	if p != nil && modernMeta(p.Meta) {
		return s.extTasksGet(ctx, p)
	}
	run, err := s.taskRun(ctx, p)
	if err != nil {
		return nil, err
	}
	return &taskResult{Task: taskOf(run, s.eng.Profile())}, nil
}

// tasksResult blocks until the task is terminal, then answers exactly the
// CallToolResult a sync run_task_template call returns for that run
// (isError for failed and canceled runs), with the related-task meta. It
// waits through the engine's change notifications: no transaction is held
// and no poll loop of its own runs. While it waits, the questions the run
// asks go to a client that declared elicitation (tasks_elicit.go). Errors:
// -32602 for unknown tasks; the request's own cancellation ends the wait,
// not the run.
func (s *Server) tasksResult(ctx context.Context, ss *sdk.ServerSession, p *taskIDParams) (*sdk.CallToolResult, error) {
	if p != nil {
		if err := legacyOnly("tasks/result", p.Meta); err != nil {
			return nil, err
		}
	}
	id, err := requireTaskID(p)
	if err != nil {
		return nil, err
	}
	run, err := s.waitRelayingInput(ctx, ss, id)
	if err != nil {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		return nil, taskLookupError(id, err)
	}
	res := s.syncReply(ctx, run, dedupInfo{})
	res.Meta = sdk.Meta{metaRelatedTask: map[string]any{"taskId": id}}
	return res, nil
}

// tasksList answers a page of at most 50 tasks, newest first. Every run is
// a task, including runs started by ordinary tools/call. The cursor is
// an opaque keyset position, so pages neither repeat nor skip tasks while
// new ones are created. Errors: -32602 for a cursor that does not decode.
func (s *Server) tasksList(ctx context.Context, _ *sdk.ServerSession, p *listTasksParams) (*listTasksResult, error) {
	if p != nil {
		if err := legacyOnly("tasks/list", p.Meta); err != nil {
			return nil, err
		}
	}
	q := engine.ListQuery{Limit: taskPageSize + 1}
	if p != nil && p.Cursor != nil {
		at, runID, ok := decodeTaskCursor(*p.Cursor)
		if !ok {
			return nil, errInvalidParams("Invalid cursor: %q is not a cursor returned by tasks/list", *p.Cursor)
		}
		q.BeforeCreatedAt, q.BeforeRunID = at, runID
	}
	list, err := s.eng.List(ctx, q)
	if err != nil {
		return nil, errInternal(err)
	}
	runs := list.Runs
	res := &listTasksResult{Tasks: []Task{}}
	if len(runs) > taskPageSize {
		runs = runs[:taskPageSize]
		last := runs[len(runs)-1]
		res.NextCursor = encodeTaskCursor(last.CreatedAt, last.RunID)
	}
	prof := s.eng.Profile()
	for _, r := range runs {
		res.Tasks = append(res.Tasks, taskOf(r, prof))
	}
	return res, nil
}

// tasksCancel cancels a working task's run (as cancel_task_run does) and
// answers the Task, now cancelled. Errors: -32602 for unknown tasks and for
// tasks already terminal ("Cannot cancel task: already in terminal status
// 'completed'").
func (s *Server) tasksCancel(ctx context.Context, _ *sdk.ServerSession, p *taskIDParams) (sdk.Result, error) {
	if p != nil && modernMeta(p.Meta) {
		return s.extTasksCancel(ctx, p)
	}
	run, err := s.taskRun(ctx, p)
	if err != nil {
		return nil, err
	}
	id := run.RunID
	if run.Status.Terminal() {
		return nil, errTaskTerminal(taskStatusOf(run.Status))
	}
	cr, err := s.eng.Cancel(ctx, id, taskCancelReason)
	if err != nil {
		return nil, taskLookupError(id, err)
	}
	if !cr.Success && cr.Status.Terminal() {
		return nil, errTaskTerminal(taskStatusOf(cr.Status)) // it ended meanwhile
	}
	run, err = s.eng.Get(ctx, id)
	if err != nil {
		return nil, taskLookupError(id, err)
	}
	s.log.Info("task cancelled", "taskId", id)
	return &taskResult{Task: taskOf(run, s.eng.Profile())}, nil
}

// taskCursorPrefix versions the cursor format.
const taskCursorPrefix = "t1:"

// encodeTaskCursor encodes the keyset position after (createdAt, runId).
func encodeTaskCursor(createdAt int64, runID string) string {
	return base64.RawURLEncoding.EncodeToString([]byte(taskCursorPrefix + strconv.FormatInt(createdAt, 10) + ":" + runID))
}

// decodeTaskCursor reverses encodeTaskCursor; ok is false for anything else.
func decodeTaskCursor(c string) (int64, string, bool) {
	b, err := base64.RawURLEncoding.DecodeString(c)
	if err != nil {
		return 0, "", false
	}
	rest, ok := strings.CutPrefix(string(b), taskCursorPrefix)
	if !ok {
		return 0, "", false
	}
	at, runID, ok := strings.Cut(rest, ":")
	if !ok || runID == "" {
		return 0, "", false
	}
	n, err := strconv.ParseInt(at, 10, 64)
	if err != nil || n < 0 {
		return 0, "", false
	}
	return n, runID, true
}
