//lint:file-ignore SA1019 the conformance fixtures ask through sampling and roots: deprecated by SEP-2577, still part of MCP 2026-07-28 and of the suite's scenarios.

// Package conformance holds the fixture tools, resource and prompt the
// official MCP conformance suite names (`conformance list` describes
// each). They are not product tools, so they live outside the MCP server
// and plug into it as an mcp.Plugin, only with browsertask
// --dev-templates, as the go-sdk keeps its conformance server
// (conformance/everything-server) outside the SDK. Tools that answer with
// a task run their work as durable runs of the dev_tool_job template
// (internal/devtpl), through the engine like every run, so the suite
// exercises the real task machinery; the ephemeral multi round-trip tools
// keep their rounds in an HMAC-signed requestState (state.go).
package conformance

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"

	"github.com/browsertask/browsertask/engine"
	"github.com/browsertask/browsertask/internal/devtpl"
	"github.com/browsertask/browsertask/mcp"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// Task support of a fixture tool.
const (
	taskNone     = ""
	taskOptional = "optional"
	taskRequired = "required"
)

// fixtureTool is one fixture tool. Exactly one of call and job is set.
type fixtureTool struct {
	name, description string
	input             map[string]any
	// task is the tool's task support; with job set it is optional or
	// required.
	task string
	// call answers a call at once (ephemeral tools, MRTR rounds).
	call func(ctx context.Context, c fixtureCall) (*sdk.CallToolResult, error)
	// before, when set, gathers input through input_required before a
	// task tool's job starts (the answers are in c.answers for job).
	before func(c fixtureCall) sdk.InputRequestMap
	// job describes the durable work of a task tool from its arguments;
	// it may add to c.args what the result should show.
	job func(c fixtureCall) toolJob
	// render turns the finished job (its arguments and answers) into the
	// tool's CallToolResult.
	render func(args map[string]any, answers map[string]json.RawMessage) *sdk.CallToolResult
}

// toolJob is the work of a dev_tool_job run.
type toolJob struct {
	SleepMs  int64      `json:"sleepMs,omitempty"`
	Ask      []jobAsk   `json:"ask,omitempty"`
	RPCError *rpcFailed `json:"rpcError,omitempty"`
}

// jobAsk is one question of a job.
type jobAsk struct {
	RequestID string          `json:"requestId"`
	Message   string          `json:"message"`
	Request   json.RawMessage `json:"request"`
}

// rpcFailed is the JSON-RPC error a job ends with.
type rpcFailed struct {
	Code    int64  `json:"code"`
	Message string `json:"message"`
}

// fixtureCall is one call of a fixture tool.
type fixtureCall struct {
	req  *sdk.CallToolRequest
	args map[string]any
	// answers are the inputResponses gathered so far: from the verified
	// requestState and this round's inputResponses.
	answers map[string]json.RawMessage
	round   int
}

// str reads a string argument.
func (c fixtureCall) str(name, def string) string {
	if v, ok := c.args[name].(string); ok {
		return v
	}
	return def
}

// num reads a number argument.
func (c fixtureCall) num(name string, def float64) float64 {
	if v, ok := c.args[name].(float64); ok {
		return v
	}
	return def
}

// caps are the calling client's capabilities: the request's own for
// 2026-07-28, the session's before.
func (c fixtureCall) caps() *sdk.ClientCapabilities {
	if caps := c.req.ClientCapabilities(); caps != nil {
		return caps
	}
	return &sdk.ClientCapabilities{}
}

// Fixtures is the conformance suite's fixtures as an mcp.Plugin: the
// fixture tools by name, the key of their requestState, and what the list
// changed probes toggle. Make one with New per server; it is safe for
// concurrent use once installed.
type Fixtures struct {
	tools map[string]fixtureTool
	state *stateSigner
	// srv and host are the server the fixtures are installed on (Install).
	srv  *sdk.Server
	host *mcp.PluginHost

	mu          sync.Mutex
	probeTool   bool
	probePrompt bool
}

// The fixtures plug into the MCP server.
var _ mcp.Plugin = (*Fixtures)(nil)

// New returns the fixtures, ready to be passed as mcp.ServerOptions.Plugin
// of one server.
func New() *Fixtures {
	return &Fixtures{tools: map[string]fixtureTool{}, state: newStateSigner()}
}

// Capabilities declares listChanged for tools and prompts: the
// test_trigger_*_change fixtures add and remove a probe of each.
func (fs *Fixtures) Capabilities(caps *sdk.ServerCapabilities) {
	if caps.Tools == nil {
		caps.Tools = &sdk.ToolCapabilities{}
	}
	caps.Tools.ListChanged = true
	caps.Prompts = &sdk.PromptCapabilities{ListChanged: true}
}

// Install registers the fixture tools, prompt and resource on srv.
func (fs *Fixtures) Install(srv *sdk.Server, host *mcp.PluginHost) {
	fs.srv, fs.host = srv, host
	for _, f := range fs.fixtureTools() {
		fs.tools[f.name] = f
		fs.addTool(f)
	}
	srv.AddPrompt(&sdk.Prompt{Name: "test_input_required_result_prompt",
		Description: "Conformance fixture: asks for context through input_required, then returns a prompt using it."}, fs.prompt)
	srv.AddResource(&sdk.Resource{URI: "test://static-text", Name: "static-text",
		Description: "Conformance fixture: a static text resource.", MIMEType: "text/plain"},
		func(context.Context, *sdk.ReadResourceRequest) (*sdk.ReadResourceResult, error) {
			return &sdk.ReadResourceResult{Contents: []*sdk.ResourceContents{{URI: "test://static-text", MIMEType: "text/plain",
				Text: "This is the content of the static text resource."}}}, nil
		})
}

// addTool registers one fixture tool with the SDK.
func (fs *Fixtures) addTool(f fixtureTool) {
	input := f.input
	if input == nil {
		input = map[string]any{"type": "object"}
	}
	raw, _ := json.Marshal(input)
	fs.srv.AddTool(&sdk.Tool{Name: f.name, Description: f.description, InputSchema: json.RawMessage(raw)},
		func(ctx context.Context, req *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
			args := map[string]any{}
			if len(req.Params.Arguments) > 0 && string(req.Params.Arguments) != "null" {
				if err := json.Unmarshal(req.Params.Arguments, &args); err != nil {
					return nil, errInvalidParams("arguments must be an object")
				}
			}
			c := fixtureCall{req: req, args: args, answers: map[string]json.RawMessage{}}
			if st := req.Params.RequestState; st != "" {
				prev, err := fs.state.verify(st, f.name)
				if err != nil {
					return nil, err
				}
				c.round = prev.Round
				for k, v := range prev.Answers {
					c.answers[k] = v
				}
			}
			for k, v := range req.Params.InputResponses {
				b, err := json.Marshal(v)
				if err != nil {
					return nil, errInvalidParams("inputResponses[%q] does not encode: %v", k, err)
				}
				c.answers[k] = b
			}
			if f.before != nil {
				if miss := c.missing(f.before(c)); len(miss) > 0 {
					return fs.ask(f.name, c, miss), nil
				}
			}
			if f.job != nil {
				return fs.task(ctx, f, c)
			}
			return f.call(ctx, c)
		})
}

// task runs a task tool's job as a durable run: a task for a client of
// the Tasks extension; otherwise -32021 when the tool requires a task, or
// the finished result when it can wait for it.
func (fs *Fixtures) task(ctx context.Context, f fixtureTool, c fixtureCall) (*sdk.CallToolResult, error) {
	canTask := fs.host.TaskAllowed(ctx)
	if !canTask && f.task == taskRequired {
		return nil, fs.host.ErrTaskRequired()
	}
	job := f.job(c)
	if !canTask && len(job.Ask) > 0 {
		return nil, fs.host.ErrTaskRequired() // it would wait for input nobody can give
	}
	if len(job.Ask) > 0 && c.caps().Elicitation == nil {
		return nil, requireCapability("elicitation") // ask only through what the client declared
	}
	args, _ := json.Marshal(c.args)
	inputs, err := json.Marshal(struct {
		Tool      string          `json:"tool"`
		Arguments json.RawMessage `json:"arguments"`
		toolJob
	}{f.name, args, job})
	if err != nil {
		return nil, &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: "Internal error: " + err.Error()}
	}
	return fs.host.Run(ctx, engine.SubmitRequest{TemplateID: devtpl.ToolJobID, Inputs: inputs})
}

// requireCapability is -32021 naming a client capability.
func requireCapability(name string) *jsonrpc.Error {
	data, _ := json.Marshal(map[string]any{"requiredCapabilities": map[string]any{name: map[string]any{}}})
	return &jsonrpc.Error{Code: sdk.CodeMissingRequiredClientCapabilities,
		Message: fmt.Sprintf("Missing required client capability: this tool needs %s; declare it in clientCapabilities", name), Data: data}
}

// errInvalidParams is -32602 with a message that says what to change.
func errInvalidParams(format string, args ...any) *jsonrpc.Error {
	return &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: fmt.Sprintf(format, args...)}
}

// ask answers input_required for reqs, carrying the answers gathered so
// far in a signed requestState for round+1.
func (fs *Fixtures) ask(tool string, c fixtureCall, reqs sdk.InputRequestMap) *sdk.CallToolResult {
	return &sdk.CallToolResult{InputRequests: reqs,
		RequestState: fs.state.sign(roundState{Tool: tool, Round: c.round + 1, Answers: c.answers})}
}

// missing are the keys of want without a usable answer in c: an accepted
// elicitation with content, a sampling result, a roots list.
func (c fixtureCall) missing(want sdk.InputRequestMap) sdk.InputRequestMap {
	out := sdk.InputRequestMap{}
	for k, r := range want {
		if !usableAnswer(r, c.answers[k]) {
			out[k] = r
		}
	}
	return out
}

// usableAnswer checks an answer against the kind of its request.
func usableAnswer(r sdk.InputRequest, raw json.RawMessage) bool {
	if raw == nil {
		return false
	}
	var m map[string]any
	if json.Unmarshal(raw, &m) != nil {
		return false
	}
	switch r.(type) {
	case *sdk.ElicitParams:
		_, ok := m["action"].(string)
		return ok
	case *sdk.CreateMessageParams:
		_, ok := m["content"]
		return ok
	case *sdk.ListRootsParams:
		_, ok := m["roots"].([]any)
		return ok
	}
	return false
}

// mrtrTool is a fixture that asks want (all at once) and answers with
// done once every answer is in; a retry missing some asks again for those.
func (fs *Fixtures) mrtrTool(name, description string, want func(c fixtureCall) sdk.InputRequestMap, done func(c fixtureCall) *sdk.CallToolResult) fixtureTool {
	return fixtureTool{name: name, description: description,
		call: func(_ context.Context, c fixtureCall) (*sdk.CallToolResult, error) {
			if miss := c.missing(want(c)); len(miss) > 0 {
				return fs.ask(name, c, miss), nil
			}
			return done(c), nil
		}}
}

// prompt is test_input_required_result_prompt: input_required for
// user_context, then a prompt message using it.
func (fs *Fixtures) prompt(_ context.Context, req *sdk.GetPromptRequest) (*sdk.GetPromptResult, error) {
	answer := req.Params.InputResponses["user_context"]
	b, _ := json.Marshal(answer)
	if ctxText := elicitedString(b, "context"); answer != nil && ctxText != "" {
		return &sdk.GetPromptResult{Description: "A prompt built from the context the client gave",
			Messages: []*sdk.PromptMessage{{Role: "user", Content: &sdk.TextContent{Text: "Answer using this context: " + ctxText}}}}, nil
	}
	return &sdk.GetPromptResult{InputRequests: sdk.InputRequestMap{
		"user_context": elicit("What context should the prompt use?", map[string]any{"context": stringField}, "context")}}, nil
}

// toggleProbe adds or removes the list-changed probe tool or prompt, so
// the SDK notifies list_changed (test_trigger_tool_change and
// test_trigger_prompt_change).
func (fs *Fixtures) toggleProbe(prompt bool) {
	fs.mu.Lock()
	defer fs.mu.Unlock()
	if prompt {
		if fs.probePrompt {
			fs.srv.RemovePrompts("dev_probe_prompt")
		} else {
			fs.srv.AddPrompt(&sdk.Prompt{Name: "dev_probe_prompt", Description: "Conformance fixture: appears and disappears."},
				func(context.Context, *sdk.GetPromptRequest) (*sdk.GetPromptResult, error) {
					return &sdk.GetPromptResult{Messages: []*sdk.PromptMessage{}}, nil
				})
		}
		fs.probePrompt = !fs.probePrompt
		return
	}
	if fs.probeTool {
		fs.srv.RemoveTools("dev_probe_tool")
	} else {
		fs.srv.AddTool(&sdk.Tool{Name: "dev_probe_tool", Description: "Conformance fixture: appears and disappears.", InputSchema: json.RawMessage(`{"type":"object"}`)},
			func(context.Context, *sdk.CallToolRequest) (*sdk.CallToolResult, error) { return text("probe"), nil })
	}
	fs.probeTool = !fs.probeTool
}
