package mcp

import (
	"context"
	"encoding/json"
	"fmt"
	"math"

	"github.com/browsertask/browsertask/engine"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// maxRequestedTTL bounds a requested ttl before conversion to int64; the
// engine caps it at maxTaskTtlMs anyway.
const maxRequestedTTL = 1 << 53

// taskRequest is params.task of a task-augmented request.
type taskRequest struct {
	TTL *float64 `json:"ttl"`
}

// parseTaskRequest decodes the lifted params.task. Errors: -32602 when it
// is not an object or ttl is not a positive number of milliseconds.
func parseTaskRequest(v any) (int64, error) {
	b, err := json.Marshal(v)
	if err != nil {
		return 0, errInvalidParams("params.task must be an object")
	}
	var tr taskRequest
	if len(b) == 0 || b[0] != '{' || json.Unmarshal(b, &tr) != nil {
		return 0, errInvalidParams("params.task must be an object such as {\"ttl\": 60000}, got %s", b)
	}
	if tr.TTL == nil {
		return 0, nil
	}
	ttl := *tr.TTL
	if math.IsNaN(ttl) || ttl < 1 {
		return 0, errInvalidParams("params.task.ttl must be a positive number of milliseconds, got %v", ttl)
	}
	return int64(min(ttl, maxRequestedTTL)), nil
}

// callAsTask answers a task-augmented tools/call of run_task_template: it
// validates the arguments exactly like an ordinary call, submits the run in
// async mode (idempotencyKey applies: a repeat returns the same task) with
// the requested ttl, and answers CreateTaskResult at once. Problems found
// before any run exists are JSON-RPC -32602 errors whose data is the
// contract's {errorCode, message, recovery}; storage failures are -32603.
func (s *Server) callAsTask(ctx context.Context, req *sdk.CallToolRequest, task any) (sdk.Result, error) {
	ttl, err := parseTaskRequest(task)
	if err != nil {
		return nil, err
	}
	args, err := objectArguments(req.Params.Arguments)
	if err != nil {
		return nil, err
	}
	if verr := checkArgs(s.tasks.runTool.input, s.tasks.validator, args); verr != nil {
		return nil, errDomainParams(verr)
	}
	var a runTemplateArgs
	if derr := decodeArgs(args, &a); derr != nil {
		return nil, errDomainParams(derr)
	}
	sub, err := s.eng.Submit(ctx, engine.SubmitRequest{
		TemplateID:     a.TemplateID,
		SessionID:      a.SessionID,
		Profile:        a.Profile,
		Inputs:         a.Inputs,
		Mode:           engine.ModeAsync,
		TimeoutMs:      a.Options.TimeoutMs,
		IdempotencyKey: a.Options.IdempotencyKey,
		TaskTTLMs:      ttl,
		OutputSchema:   a.Options.OutputSchema,
		ClientSampling: canSample(req.Session),
	})
	if err != nil {
		if engine.CodeOf(err) == engine.ExecutionError {
			s.log.Error("task submission failed", "error", err)
			return nil, errInternal(err)
		}
		return nil, errDomainParams(err)
	}
	run := sub.Run
	t := taskOf(run, s.eng.Profile())
	s.log.Info("task created", "taskId", run.RunID, "template", run.TemplateID, "ttlMs", t.TTL, "deduplicated", sub.Deduplicated)
	var token any
	if req.Params != nil {
		token = req.Params.GetProgressToken()
	}
	s.watchTask(req.Session, run, t.Status, token)
	res := &createTaskResult{Task: t}
	res.Meta = sdk.Meta{metaImmediateResponse: immediateResponse(run, t, sub.Deduplicated)}
	return res, nil
}

// immediateResponse is the sentence a host may hand to the model while the
// task runs.
func immediateResponse(run *engine.Run, t Task, dedup bool) string {
	how := "started"
	if dedup {
		how = "already existed for this idempotencyKey"
	}
	return fmt.Sprintf("Run %s (template %s) %s as a task and is %s; poll tasks/get with taskId %s every %d ms, "+
		"or call tasks/result to wait for the finished run (get_task_run works too). The task is kept for %d ms.",
		run.RunID, run.TemplateID, how, run.Status, t.TaskID, t.PollInterval, t.TTL)
}
