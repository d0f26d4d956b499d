//lint:file-ignore SA1019 the conformance fixtures ask through sampling and roots: deprecated by SEP-2577, still part of MCP 2026-07-28 and of the suite's scenarios.

package mcp

import (
	"context"
	"encoding/json"
	"fmt"
	"sort"
	"strings"
	"sync"

	"github.com/browsertask/browsertask/engine"
	"github.com/browsertask/browsertask/internal/devtpl"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// The fixture tools, resource and prompt the official conformance suite
// names (`conformance list` describes each), served only with
// ServerOptions.Fixtures (browsertask --dev-templates). Tools that answer
// with a task run their work as durable runs of the dev_tool_job template,
// through the engine like every run, so the suite exercises the real task
// machinery; the ephemeral multi round-trip tools keep their rounds in an
// HMAC-signed requestState (fixtures_state.go).

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

// fixtureSet is the Server's fixture tools by name, and what the list
// changed probes toggle.
type fixtureSet struct {
	tools map[string]fixtureTool
	state *stateSigner

	mu          sync.Mutex
	probeTool   bool
	probePrompt bool
}

// installFixtures registers the fixture tools, prompt and resource.
func (s *Server) installFixtures() {
	fs := &fixtureSet{tools: map[string]fixtureTool{}, state: newStateSigner()}
	s.fixtures = fs
	for _, f := range s.fixtureTools() {
		fs.tools[f.name] = f
		s.addFixtureTool(f)
	}
	s.sdk.AddPrompt(&sdk.Prompt{Name: "test_input_required_result_prompt",
		Description: "Conformance fixture: asks for context through input_required, then returns a prompt using it."}, s.fixturePrompt)
	s.sdk.AddResource(&sdk.Resource{URI: "test://static-text", Name: "static-text",
		Description: "Conformance fixture: a static text resource.", MIMEType: "text/plain"},
		func(context.Context, *sdk.ReadResourceRequest) (*sdk.ReadResourceResult, error) {
			return &sdk.ReadResourceResult{Contents: []*sdk.ResourceContents{{URI: "test://static-text", MIMEType: "text/plain",
				Text: "This is the content of the static text resource."}}}, nil
		})
}

// addFixtureTool registers one fixture tool with the SDK.
func (s *Server) addFixtureTool(f fixtureTool) {
	input := f.input
	if input == nil {
		input = map[string]any{"type": "object"}
	}
	raw, _ := json.Marshal(input)
	s.sdk.AddTool(&sdk.Tool{Name: f.name, Description: f.description, InputSchema: json.RawMessage(raw)},
		func(ctx context.Context, req *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
			args := map[string]any{}
			if len(req.Params.Arguments) > 0 && string(req.Params.Arguments) != "null" {
				if err := json.Unmarshal(req.Params.Arguments, &args); err != nil {
					return nil, errInvalidParams("arguments must be an object")
				}
			}
			c := fixtureCall{req: req, args: args, answers: map[string]json.RawMessage{}}
			if st := req.Params.RequestState; st != "" {
				prev, err := s.fixtures.state.verify(st, f.name)
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
					return s.ask(f.name, c, miss), nil
				}
			}
			if f.job != nil {
				return s.fixtureTask(ctx, f, c)
			}
			return f.call(ctx, c)
		})
}

// fixtureTask runs a task tool's job as a durable run: a task for a
// client of the Tasks extension; otherwise -32021 when the tool requires
// a task, or the finished result when it can wait for it.
func (s *Server) fixtureTask(ctx context.Context, f fixtureTool, c fixtureCall) (*sdk.CallToolResult, error) {
	slot := taskSlotFrom(ctx)
	if slot == nil && f.task == taskRequired {
		return nil, errMissingTasksCapability()
	}
	job := f.job(c)
	if slot == nil && len(job.Ask) > 0 {
		return nil, errMissingTasksCapability() // it would wait for input nobody can give
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
		return nil, errInternal(err)
	}
	sub, err := s.eng.Submit(ctx, engine.SubmitRequest{TemplateID: devtpl.ToolJobID, Inputs: inputs, Mode: engine.ModeAsync})
	if err != nil {
		return nil, errDomainParams(err)
	}
	if offerTask(ctx, sub.Run, false) {
		return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: "task " + sub.Run.RunID}}}, nil
	}
	run, err := s.eng.Wait(ctx, sub.Run.RunID, nil)
	if err != nil {
		return nil, errInternal(err)
	}
	if rpcErr := s.fixtureRPCError(run); rpcErr != nil {
		return nil, rpcErr
	}
	return s.toolResultOf(ctx, run), nil
}

// text is a CallToolResult of one text block.
func text(format string, args ...any) *sdk.CallToolResult {
	return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: fmt.Sprintf(format, args...)}}}
}

// elicit is an elicitation/create input request for one string field.
func elicit(message string, props map[string]any, required ...string) sdk.InputRequest {
	return &sdk.ElicitParams{Mode: "form", Message: message,
		RequestedSchema: map[string]any{"type": "object", "properties": props, "required": required}}
}

// stringField is a string property of a requested schema.
var stringField = map[string]any{"type": "string"}

// sampling is a sampling/createMessage input request.
func sampling(prompt string, maxTokens int64) sdk.InputRequest {
	return &sdk.CreateMessageParams{MaxTokens: maxTokens,
		Messages: []*sdk.SamplingMessage{{Role: "user", Content: &sdk.TextContent{Text: prompt}}}}
}

// ask answers input_required for reqs, carrying the answers gathered so
// far in a signed requestState for round+1.
func (s *Server) ask(tool string, c fixtureCall, reqs sdk.InputRequestMap) *sdk.CallToolResult {
	return &sdk.CallToolResult{InputRequests: reqs,
		RequestState: s.fixtures.state.sign(roundState{Tool: tool, Round: c.round + 1, Answers: c.answers})}
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

// elicitedString is the string field of an accepted elicitation answer.
func elicitedString(raw json.RawMessage, field string) string {
	var r struct {
		Action  string         `json:"action"`
		Content map[string]any `json:"content"`
	}
	if json.Unmarshal(raw, &r) != nil || r.Action != "accept" {
		return ""
	}
	v, _ := r.Content[field].(string)
	return v
}

// sampledText is the text of a sampling answer.
func sampledText(raw json.RawMessage) string {
	var r struct {
		Content struct {
			Text string `json:"text"`
		} `json:"content"`
	}
	_ = json.Unmarshal(raw, &r)
	return r.Content.Text
}

// rootURIs lists the roots of a roots/list answer.
func rootURIs(raw json.RawMessage) []string {
	var r struct {
		Roots []struct {
			URI string `json:"uri"`
		} `json:"roots"`
	}
	_ = json.Unmarshal(raw, &r)
	var out []string
	for _, root := range r.Roots {
		out = append(out, root.URI)
	}
	return out
}

// mrtrTool is a fixture that asks want (all at once) and answers with
// done once every answer is in; a retry missing some asks again for those.
func (s *Server) mrtrTool(name, description string, want func(c fixtureCall) sdk.InputRequestMap, done func(c fixtureCall) *sdk.CallToolResult) fixtureTool {
	return fixtureTool{name: name, description: description,
		call: func(_ context.Context, c fixtureCall) (*sdk.CallToolResult, error) {
			if miss := c.missing(want(c)); len(miss) > 0 {
				return s.ask(name, c, miss), nil
			}
			return done(c), nil
		}}
}

// requireCapability is -32021 naming a client capability.
func requireCapability(name string) *jsonrpc.Error {
	data, _ := json.Marshal(map[string]any{"requiredCapabilities": map[string]any{name: map[string]any{}}})
	return &jsonrpc.Error{Code: sdk.CodeMissingRequiredClientCapabilities,
		Message: fmt.Sprintf("Missing required client capability: this tool needs %s; declare it in clientCapabilities", name), Data: data}
}

// jsonSchemaFixture is json_schema_2020_12_tool's input schema: 2020-12
// keywords the server must pass through untouched.
var jsonSchemaFixture = map[string]any{
	"$schema": "https://json-schema.org/draft/2020-12/schema",
	"type":    "object",
	"$defs": map[string]any{"address": map[string]any{"$anchor": "addressDef", "type": "object",
		"properties": map[string]any{"street": stringField, "city": stringField}}},
	"properties": map[string]any{
		"name": stringField, "address": map[string]any{"$ref": "#/$defs/address"},
		"contactMethod": map[string]any{"type": "string", "enum": []string{"phone", "email"}},
		"phone":         stringField, "email": stringField,
	},
	"allOf":                []any{map[string]any{"anyOf": []any{map[string]any{"required": []string{"phone"}}, map[string]any{"required": []string{"email"}}}}},
	"if":                   map[string]any{"properties": map[string]any{"contactMethod": map[string]any{"const": "phone"}}, "required": []string{"contactMethod"}},
	"then":                 map[string]any{"required": []string{"phone"}},
	"else":                 map[string]any{"required": []string{"email"}},
	"additionalProperties": false,
}

// fixturePrompt is test_input_required_result_prompt: input_required for
// user_context, then a prompt message using it.
func (s *Server) fixturePrompt(_ context.Context, req *sdk.GetPromptRequest) (*sdk.GetPromptResult, error) {
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
func (s *Server) toggleProbe(prompt bool) {
	fs := s.fixtures
	fs.mu.Lock()
	defer fs.mu.Unlock()
	if prompt {
		if fs.probePrompt {
			s.sdk.RemovePrompts("dev_probe_prompt")
		} else {
			s.sdk.AddPrompt(&sdk.Prompt{Name: "dev_probe_prompt", Description: "Conformance fixture: appears and disappears."},
				func(context.Context, *sdk.GetPromptRequest) (*sdk.GetPromptResult, error) {
					return &sdk.GetPromptResult{Messages: []*sdk.PromptMessage{}}, nil
				})
		}
		fs.probePrompt = !fs.probePrompt
		return
	}
	if fs.probeTool {
		s.sdk.RemoveTools("dev_probe_tool")
	} else {
		s.sdk.AddTool(&sdk.Tool{Name: "dev_probe_tool", Description: "Conformance fixture: appears and disappears.", InputSchema: json.RawMessage(`{"type":"object"}`)},
			func(context.Context, *sdk.CallToolRequest) (*sdk.CallToolResult, error) { return text("probe"), nil })
	}
	fs.probeTool = !fs.probeTool
}

// sortedKeys lists a map's keys in order (deterministic result texts).
func sortedKeys(m map[string]json.RawMessage) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// joinRoots renders root URIs for a result text.
func joinRoots(uris []string) string {
	if len(uris) == 0 {
		return "(none)"
	}
	return strings.Join(uris, ", ")
}
