package mcp

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/browsertask/browsertask/engine"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// The SDK's types have no field for the Tasks capability, for
// Tool.execution or for a CreateTaskResult answer to tools/call, so a
// receiving middleware adds them: it rewrites the encoded initialize and
// tools/list results and answers task-augmented tools/call itself.

// taskLayer is the Tasks state of a Server.
type taskLayer struct {
	// toolNames are every registered tool, to tell "no task support" (-32601)
	// from "unknown tool" (left to the SDK).
	toolNames map[string]bool
	// runTool is run_task_template's definition and compiled input schema,
	// to validate task-augmented calls exactly like ordinary ones.
	runTool   toolDef
	validator *engine.Schema
	// sessions tracks live sessions for task watchers and notifications.
	sessions *sessionHub
}

// tasksCapability is capabilities.tasks of MCP 2025-11-25.
var tasksCapability = json.RawMessage(`{"list":{},"cancel":{},"requests":{"tools":{"call":{}}}}`)

// taskExecution is Tool.execution of run_task_template.
var taskExecution = json.RawMessage(`{"taskSupport":"optional"}`)

// installTasks wires the Tasks layer into s: the middleware and the four
// tasks/* methods. It is called once by NewServer, after the tools.
func (s *Server) installTasks(tools []toolDef) error {
	tl := &taskLayer{toolNames: map[string]bool{}, sessions: newSessionHub()}
	for _, t := range tools {
		tl.toolNames[t.name] = true
		if t.name == taskToolName {
			tl.runTool = t
		}
	}
	in, err := json.Marshal(tl.runTool.input)
	if err != nil {
		return fmt.Errorf("encode %s input schema: %w", taskToolName, err)
	}
	if tl.validator, err = engine.CompileSchema(in); err != nil {
		return fmt.Errorf("compile %s input schema: %w", taskToolName, err)
	}
	s.tasks = tl
	s.sdk.AddReceivingMiddleware(s.tasksMiddleware)
	return s.addTaskMethods()
}

// tasksMiddleware adds the Tasks capability, marks run_task_template as
// task-capable and diverts task-augmented tools/call to callAsTask. Every
// request's context also ends with its session (the SDK does not cancel
// waiting handlers when a session is closed), so a blocked tasks/result
// or sync call never holds up a shutdown.
func (s *Server) tasksMiddleware(next sdk.MethodHandler) sdk.MethodHandler {
	return func(ctx context.Context, method string, req sdk.Request) (sdk.Result, error) {
		if ss, ok := req.GetSession().(*sdk.ServerSession); ok && ss != nil {
			var release func()
			ctx, release = s.tasks.sessions.bind(ctx, ss)
			defer release()
		}
		switch method {
		case "initialize":
			res, err := next(ctx, method, req)
			if err != nil {
				return res, err
			}
			return reshapeResult(res, addTasksCapability)
		case "tools/list":
			res, err := next(ctx, method, req)
			if err != nil || modernRequest(req) {
				return res, err // 2026-07-28 has no Tool.execution
			}
			return reshapeResult(res, markTaskTools)
		case "prompts/list", "prompts/get":
			if s.servesPrompts {
				break
			}
			// The server has no prompts (only a Plugin adds any) and does
			// not declare the capability; the SDK would answer an empty
			// list anyway.
			return nil, &jsonrpc.Error{Code: jsonrpc.CodeMethodNotFound, Message: fmt.Sprintf("Method not found: %s (this server has no prompts)", method)}
		case methodToolsCall:
			call, ok := req.(*sdk.CallToolRequest)
			if !ok || call.Params == nil {
				break
			}
			task, ok := takeTaskParams(call.Params)
			if modernMeta(call.Params.Meta) {
				// 2026-07-28 ignores the legacy params.task: the server
				// decides per call whether to answer with a task.
				return s.callModern(ctx, next, call)
			}
			if !ok {
				break
			}
			if call.Params.Name != taskToolName {
				if s.tasks.toolNames[call.Params.Name] {
					return nil, &jsonrpc.Error{Code: jsonrpc.CodeMethodNotFound, Message: fmt.Sprintf(
						"Tool %s does not support task-augmented calls (no execution.taskSupport); call it without params.task", call.Params.Name)}
				}
				break // unknown tool: the SDK answers as for any call
			}
			return s.callAsTask(ctx, call, task)
		}
		return next(ctx, method, req)
	}
}

// takeTaskParams removes the lifted params.task from the call's _meta and
// returns it (raw JSON).
func takeTaskParams(p *sdk.CallToolParamsRaw) (any, bool) {
	if p.Meta == nil {
		return nil, false
	}
	task, ok := p.Meta[taskMetaKey]
	if !ok {
		return nil, false
	}
	delete(p.Meta, taskMetaKey)
	return task, true
}

// addTasksCapability sets capabilities.tasks in an encoded InitializeResult.
func addTasksCapability(obj map[string]json.RawMessage) error {
	caps := map[string]json.RawMessage{}
	if raw, ok := obj["capabilities"]; ok && string(raw) != "null" {
		if err := json.Unmarshal(raw, &caps); err != nil {
			return err
		}
	}
	caps["tasks"] = tasksCapability
	b, err := json.Marshal(caps)
	if err != nil {
		return err
	}
	obj["capabilities"] = b
	return nil
}

// markTaskTools sets execution.taskSupport "optional" on run_task_template
// in an encoded ListToolsResult; every other tool keeps no execution
// (forbidden by default).
func markTaskTools(obj map[string]json.RawMessage) error {
	var tools []map[string]json.RawMessage
	if err := json.Unmarshal(obj["tools"], &tools); err != nil {
		return err
	}
	for _, t := range tools {
		var name string
		if json.Unmarshal(t["name"], &name) == nil && name == taskToolName {
			t["execution"] = taskExecution
		}
	}
	b, err := json.Marshal(tools)
	if err != nil {
		return err
	}
	obj["tools"] = b
	return nil
}

// reshapeResult encodes res, lets edit change the JSON object and returns
// it as a Result that encodes to exactly that object.
func reshapeResult(res sdk.Result, edit func(map[string]json.RawMessage) error) (sdk.Result, error) {
	b, err := json.Marshal(res)
	if err != nil {
		return nil, err
	}
	var obj map[string]json.RawMessage
	if err := json.Unmarshal(b, &obj); err != nil {
		return nil, err
	}
	if err := edit(obj); err != nil {
		return nil, err
	}
	return &rawResult{fields: obj}, nil
}

// rawResult is a Result given as encoded fields; _meta set through SetMeta
// (by the SDK) wins over the encoded one.
type rawResult struct {
	sdk.ResultBase
	fields map[string]json.RawMessage
}

// MarshalJSON implements json.Marshaler.
func (r *rawResult) MarshalJSON() ([]byte, error) {
	if len(r.Meta) > 0 {
		m, err := json.Marshal(r.Meta)
		if err != nil {
			return nil, err
		}
		out := make(map[string]json.RawMessage, len(r.fields)+1)
		for k, v := range r.fields {
			out[k] = v
		}
		out["_meta"] = m
		return json.Marshal(out)
	}
	return json.Marshal(r.fields)
}
