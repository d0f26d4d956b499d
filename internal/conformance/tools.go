//lint:file-ignore SA1019 the conformance fixtures ask through sampling and roots: deprecated by SEP-2577, still part of MCP 2026-07-28 and of the suite's scenarios.

package conformance

import (
	"context"
	"encoding/json"
	"fmt"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// fixtureTools lists the conformance fixture tools (see fixtures.go).
func (fs *Fixtures) fixtureTools() []fixtureTool {
	nameInput := map[string]any{"type": "object", "properties": map[string]any{"name": stringField}}
	userName := func(fixtureCall) sdk.InputRequestMap {
		return sdk.InputRequestMap{"user_name": elicit("What is your name?", map[string]any{"name": stringField}, "name")}
	}
	return []fixtureTool{
		{name: "greet", description: "Conformance fixture: returns Hello, {name}! at once.", input: nameInput,
			call: func(_ context.Context, c fixtureCall) (*sdk.CallToolResult, error) {
				return text("Hello, %s!", c.str("name", "World")), nil
			}},
		{name: "test_simple_text", description: "Conformance fixture: returns a simple text.",
			call: func(context.Context, fixtureCall) (*sdk.CallToolResult, error) {
				return text("This is a simple text response for testing."), nil
			}},
		{name: "test_error_handling", description: "Conformance fixture: always reports a tool error.",
			call: func(context.Context, fixtureCall) (*sdk.CallToolResult, error) {
				r := text("This tool intentionally returns an error for testing")
				r.IsError = true
				return r, nil
			}},
		{name: "json_schema_2020_12_tool", description: "Conformance fixture: an input schema with JSON Schema 2020-12 keywords.", input: jsonSchemaFixture,
			call: func(context.Context, fixtureCall) (*sdk.CallToolResult, error) { return text("ok"), nil }},
		{name: "test_logging_tool", description: "Conformance fixture: logs only when the request asks for a log level.",
			call: func(context.Context, fixtureCall) (*sdk.CallToolResult, error) { return text("done"), nil }},
		{name: "test_missing_capability", description: "Conformance fixture: needs the client's sampling capability (-32021 without it).",
			call: func(_ context.Context, c fixtureCall) (*sdk.CallToolResult, error) {
				if c.caps().Sampling == nil {
					return nil, requireCapability("sampling")
				}
				return text("the client declared sampling"), nil
			}},
		{name: "test_streaming_elicitation", description: "Conformance fixture: asks for a name through input_required (never a request on the response stream).",
			call: func(_ context.Context, c fixtureCall) (*sdk.CallToolResult, error) {
				if c.caps().Elicitation == nil {
					return nil, requireCapability("elicitation")
				}
				if miss := c.missing(userName(c)); len(miss) > 0 {
					return fs.ask("test_streaming_elicitation", c, miss), nil
				}
				return text("Hello, %s!", elicitedString(c.answers["user_name"], "name")), nil
			}},
		{name: "test_trigger_tool_change", description: "Conformance fixture: adds or removes a probe tool (tools list_changed).",
			call: func(context.Context, fixtureCall) (*sdk.CallToolResult, error) {
				fs.toggleProbe(false)
				return text("tools changed"), nil
			}},
		{name: "test_trigger_prompt_change", description: "Conformance fixture: adds or removes a probe prompt (prompts list_changed).",
			call: func(context.Context, fixtureCall) (*sdk.CallToolResult, error) {
				fs.toggleProbe(true)
				return text("prompts changed"), nil
			}},

		// Multi round-trip requests (SEP-2322), ephemeral.
		fs.mrtrTool("test_input_required_result_elicitation", "Conformance fixture: asks for a name (input_required), then greets.", userName,
			func(c fixtureCall) *sdk.CallToolResult {
				return text("Hello, %s!", elicitedString(c.answers["user_name"], "name"))
			}),
		fs.mrtrTool("test_input_required_result_sampling", "Conformance fixture: asks the client's model a question (input_required).",
			func(fixtureCall) sdk.InputRequestMap {
				return sdk.InputRequestMap{"capital_question": sampling("What is the capital of France?", 100)}
			},
			func(c fixtureCall) *sdk.CallToolResult {
				return text("The model said: %s", sampledText(c.answers["capital_question"]))
			}),
		fs.mrtrTool("test_input_required_result_list_roots", "Conformance fixture: asks for the client's roots (input_required).",
			func(fixtureCall) sdk.InputRequestMap {
				return sdk.InputRequestMap{"client_roots": &sdk.ListRootsParams{}}
			},
			func(c fixtureCall) *sdk.CallToolResult {
				return text("Roots: %s", joinRoots(rootURIs(c.answers["client_roots"])))
			}),
		fs.mrtrTool("test_input_required_result_request_state", "Conformance fixture: asks for a confirmation, with a signed requestState.",
			func(fixtureCall) sdk.InputRequestMap {
				return sdk.InputRequestMap{"confirm": elicit("Please confirm", map[string]any{"ok": map[string]any{"type": "boolean"}}, "ok")}
			},
			func(c fixtureCall) *sdk.CallToolResult {
				return text("state-ok: the requestState of round %d was verified", c.round)
			}),
		fs.mrtrTool("test_input_required_result_tampered_state", "Conformance fixture: a signed requestState; a tampered one is refused (-32602).",
			func(fixtureCall) sdk.InputRequestMap {
				return sdk.InputRequestMap{"confirm": elicit("Please confirm", map[string]any{"ok": map[string]any{"type": "boolean"}}, "ok")}
			},
			func(fixtureCall) *sdk.CallToolResult { return text("state-ok") }),
		fs.mrtrTool("test_input_required_result_multiple_inputs", "Conformance fixture: asks for a name, a model greeting and the roots at once.",
			func(fixtureCall) sdk.InputRequestMap {
				return sdk.InputRequestMap{
					"user_name":    elicit("What is your name?", map[string]any{"name": stringField}, "name"),
					"greeting":     sampling("Generate a greeting", 50),
					"client_roots": &sdk.ListRootsParams{},
				}
			},
			func(c fixtureCall) *sdk.CallToolResult {
				return text("%s, %s! Roots: %s", sampledText(c.answers["greeting"]), elicitedString(c.answers["user_name"], "name"),
					joinRoots(rootURIs(c.answers["client_roots"])))
			}),
		{name: "test_input_required_result_multi_round", description: "Conformance fixture: two rounds of input_required (name, then colour), then a result.",
			call: func(_ context.Context, c fixtureCall) (*sdk.CallToolResult, error) {
				step1 := sdk.InputRequestMap{"step1": elicit("Step 1: What is your name?", map[string]any{"name": stringField}, "name")}
				if miss := c.missing(step1); len(miss) > 0 {
					return fs.ask("test_input_required_result_multi_round", c, miss), nil
				}
				step2 := sdk.InputRequestMap{"step2": elicit("Step 2: What is your favorite color?", map[string]any{"color": stringField}, "color")}
				if miss := c.missing(step2); len(miss) > 0 {
					return fs.ask("test_input_required_result_multi_round", c, miss), nil
				}
				return text("%s likes %s", elicitedString(c.answers["step1"], "name"), elicitedString(c.answers["step2"], "color")), nil
			}},
		{name: "test_input_required_result_capabilities", description: "Conformance fixture: asks only through the capabilities the client declared.",
			call: func(_ context.Context, c fixtureCall) (*sdk.CallToolResult, error) {
				caps, want := c.caps(), sdk.InputRequestMap{}
				if caps.Elicitation != nil {
					want["user_name"] = elicit("What is your name?", map[string]any{"name": stringField}, "name")
				}
				if caps.Sampling != nil {
					want["greeting"] = sampling("Generate a greeting", 50)
				}
				if caps.RootsV2 != nil {
					want["client_roots"] = &sdk.ListRootsParams{}
				}
				if len(want) == 0 {
					return text("the client declared none of elicitation, sampling, roots: nothing to ask"), nil
				}
				if miss := c.missing(want); len(miss) > 0 {
					return fs.ask("test_input_required_result_capabilities", c, miss), nil
				}
				return text("answered: %v", sortedKeys(c.answers)), nil
			}},

		// Task tools (the Tasks extension): durable dev_tool_job runs.
		{name: "slow_compute", task: taskOptional,
			description: "Conformance fixture: works for `seconds` seconds (a durable run), then returns a result; a task for clients of the Tasks extension.",
			input: map[string]any{"type": "object", "properties": map[string]any{
				"seconds": map[string]any{"type": "number", "minimum": 0, "maximum": 600}, "label": stringField}},
			job: func(c fixtureCall) toolJob { return toolJob{SleepMs: int64(c.num("seconds", 1) * 1000)} },
			render: func(args map[string]any, _ map[string]json.RawMessage) *sdk.CallToolResult {
				return text("slow_compute %v finished after %v s", orString(args["label"], "(no label)"), orNumber(args["seconds"], 1))
			}},
		{name: "failing_job", task: taskRequired, description: "Conformance fixture: a task that ends with a tool error after about 1 s.",
			job: func(fixtureCall) toolJob { return toolJob{SleepMs: 1000} },
			render: func(map[string]any, map[string]json.RawMessage) *sdk.CallToolResult {
				r := text("failing_job failed, as it always does")
				r.IsError = true
				return r
			}},
		{name: "protocol_error_job", task: taskRequired, description: "Conformance fixture: a task that ends with a JSON-RPC error.",
			job: func(fixtureCall) toolJob {
				return toolJob{SleepMs: 200, RPCError: &rpcFailed{Code: -32603, Message: "Internal error: protocol_error_job fails on purpose"}}
			},
			render: func(map[string]any, map[string]json.RawMessage) *sdk.CallToolResult { return text("unreachable") }},
		{name: "confirm_delete", task: taskRequired,
			description: "Conformance fixture: a task that asks for a confirmation (input_required) before it deletes `target`.",
			input:       map[string]any{"type": "object", "properties": map[string]any{"target": stringField}},
			job: func(c fixtureCall) toolJob {
				return toolJob{Ask: []jobAsk{askJSON("confirm", fmt.Sprintf("Delete %s?", c.str("target", "the item")),
					elicit(fmt.Sprintf("Delete %s?", c.str("target", "the item")), map[string]any{"confirm": map[string]any{"type": "boolean"}}, "confirm"))}}
			},
			render: func(args map[string]any, answers map[string]json.RawMessage) *sdk.CallToolResult {
				if elicitedAccept(answers["confirm"]) {
					return text("Deleted %v", orString(args["target"], "the item"))
				}
				return text("Kept %v: not confirmed", orString(args["target"], "the item"))
			}},
		{name: "multi_input", task: taskRequired, description: "Conformance fixture: a task that asks two questions at once.",
			job: func(fixtureCall) toolJob {
				return toolJob{Ask: []jobAsk{
					askJSON("first", "First value?", elicit("First value?", map[string]any{"value": stringField}, "value")),
					askJSON("second", "Second value?", elicit("Second value?", map[string]any{"value": stringField}, "value")),
				}}
			},
			render: func(_ map[string]any, answers map[string]json.RawMessage) *sdk.CallToolResult {
				return text("first=%s second=%s", elicitedString(answers["first"], "value"), elicitedString(answers["second"], "value"))
			}},
		{name: "test_tool_with_task", task: taskRequired,
			description: "Conformance fixture: asks for user_name (input_required), then goes on as a task whose result greets that name.",
			before:      userName,
			job: func(c fixtureCall) toolJob {
				c.args["user_name"] = elicitedString(c.answers["user_name"], "name")
				return toolJob{SleepMs: 200}
			},
			render: func(args map[string]any, _ map[string]json.RawMessage) *sdk.CallToolResult {
				return text("Hello, %v! (gathered before the task started)", orString(args["user_name"], "?"))
			}},
	}
}

// askJSON encodes an input request for a job.
func askJSON(id, message string, r sdk.InputRequest) jobAsk {
	b, _ := json.Marshal(sdk.InputRequestMap{id: r})
	var m map[string]json.RawMessage
	_ = json.Unmarshal(b, &m)
	return jobAsk{RequestID: id, Message: message, Request: m[id]}
}

// elicitedAccept reports an accepted elicitation whose content confirms.
func elicitedAccept(raw json.RawMessage) bool {
	var r struct {
		Action  string         `json:"action"`
		Content map[string]any `json:"content"`
	}
	if json.Unmarshal(raw, &r) != nil || r.Action != "accept" {
		return false
	}
	v, ok := r.Content["confirm"].(bool)
	return !ok || v
}

func orString(v any, def string) any {
	if s, ok := v.(string); ok && s != "" {
		return s
	}
	return def
}

func orNumber(v any, def float64) any {
	if n, ok := v.(float64); ok {
		return n
	}
	return def
}
