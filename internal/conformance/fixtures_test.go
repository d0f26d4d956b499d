package conformance

import (
	"context"
	"encoding/json"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/browsertask/browsertask/engine"
)

// TestTaskWaitsForInputAcrossProcesses: a fixture task asks for a
// confirmation; another server on the same database (another process)
// sees it input_required, delivers the answer through tasks/update, and
// the task completes with the answer.
func TestTaskWaitsForInputAcrossProcesses(t *testing.T) {
	path := filepath.Join(t.TempDir(), "bt.db")
	engA, engB := startEngine(t, path), startEngine(t, path)
	a, b := newServer(t, engA), newServer(t, engB)

	id := taskID(t, a.call("tools/call", map[string]any{"name": "confirm_delete", "arguments": map[string]any{"target": "report.pdf"}}, allCaps()))
	waiting := b.task(engB, id, true)
	reqs, _ := waiting["inputRequests"].(map[string]any)
	confirm, _ := reqs["confirm"].(map[string]any)
	if waiting["status"] != "input_required" || confirm["method"] != "elicitation/create" {
		t.Fatalf("waiting task = %v", waiting)
	}
	if msg := confirm["params"].(map[string]any)["message"]; msg != "Delete report.pdf?" {
		t.Errorf("message = %v", msg)
	}
	// An unknown key is ignored; a response that is not an object is -32602.
	if ack := b.call("tasks/update", map[string]any{"taskId": id, "inputResponses": map[string]any{"nope": map[string]any{"action": "accept"}}}, allCaps()); ack.code() != 0 {
		t.Fatalf("tasks/update with an unknown key: %s", ack.raw)
	}
	if bad := b.call("tasks/update", map[string]any{"taskId": id, "inputResponses": map[string]any{"confirm": "yes"}}, allCaps()); bad.code() != -32602 {
		t.Fatalf("tasks/update with a string response: %s", bad.raw)
	}
	ack := b.call("tasks/update", map[string]any{"taskId": id,
		"inputResponses": map[string]any{"confirm": map[string]any{"action": "accept", "content": map[string]any{"confirm": true}}}}, allCaps())
	if ack.result == nil || ack.result["resultType"] != "complete" {
		t.Fatalf("tasks/update: %s", ack.raw)
	}
	done := a.task(engA, id, false)
	content := done["result"].(map[string]any)["content"].([]any)[0].(map[string]any)
	if done["status"] != "completed" || content["text"] != "Deleted report.pdf" {
		t.Fatalf("answered task = %v", done)
	}
	// The same task, legacy view: the run succeeded.
	run, err := engB.Get(context.Background(), id)
	if err != nil || run.Status != engine.StatusSucceeded {
		t.Fatalf("run = %+v, %v", run, err)
	}
}

// TestTaskFailures: a tool error is completed with isError; a JSON-RPC
// failure is failed with the error and no result; a tool that needs a
// task, called by a client without the Tasks extension, is -32021 (HTTP
// 400) naming the extension.
func TestTaskFailures(t *testing.T) {
	eng := startEngine(t, "")
	c := newServer(t, eng)
	got := c.task(eng, taskID(t, c.call("tools/call", map[string]any{"name": "failing_job"}, allCaps())), false)
	if res, _ := got["result"].(map[string]any); got["status"] != "completed" || res["isError"] != true || got["error"] != nil {
		t.Errorf("failing_job = %v", got)
	}
	got = c.task(eng, taskID(t, c.call("tools/call", map[string]any{"name": "protocol_error_job"}, allCaps())), false)
	if e, _ := got["error"].(map[string]any); got["status"] != "failed" || e["code"] != float64(-32603) || got["result"] != nil {
		t.Errorf("protocol_error_job = %v", got)
	}
	noTasks := map[string]any{"elicitation": map[string]any{}}
	r := c.call("tools/call", map[string]any{"name": "failing_job"}, noTasks)
	if r.code() != -32021 || r.status != 400 || !strings.Contains(r.raw, `"requiredCapabilities":{"extensions":{"io.modelcontextprotocol/tasks":{}}}`) {
		t.Errorf("failing_job without the extension: %d %s", r.status, r.raw)
	}
	// slow_compute takes a task but does not need one: without the
	// extension the call waits for its run and answers the fixture's text.
	r = c.call("tools/call", map[string]any{"name": "slow_compute", "arguments": map[string]any{"seconds": 0, "label": "quick"}}, noTasks)
	if r.result["resultType"] != "complete" || !strings.Contains(r.raw, "slow_compute quick finished after 0 s") {
		t.Errorf("slow_compute without the extension: %d %s", r.status, r.raw)
	}
}

// TestRequestStateIsSigned: an input_required answer carries a
// requestState; the retry with it completes, a tampered one is -32602; a
// client is asked only through the capabilities it declared.
func TestRequestStateIsSigned(t *testing.T) {
	c := newServer(t, startEngine(t, ""))
	call := func(args map[string]any) reply {
		args["name"] = "test_input_required_result_request_state"
		return c.call("tools/call", args, allCaps())
	}
	first := call(map[string]any{})
	state, _ := first.result["requestState"].(string)
	if first.result["resultType"] != "input_required" || state == "" {
		t.Fatalf("round 1: %s", first.raw)
	}
	answer := map[string]any{"confirm": map[string]any{"action": "accept", "content": map[string]any{"ok": true}}}
	if r := call(map[string]any{"inputResponses": answer, "requestState": state + "x"}); r.code() != -32602 {
		t.Fatalf("tampered state: %s", r.raw)
	}
	r := call(map[string]any{"inputResponses": answer, "requestState": state})
	if r.result["resultType"] != "complete" || !strings.Contains(r.raw, "state-ok") {
		t.Fatalf("round 2: %s", r.raw)
	}
	caps := c.call("tools/call", map[string]any{"name": "test_input_required_result_capabilities"},
		map[string]any{"sampling": map[string]any{}})
	if reqs, _ := caps.result["inputRequests"].(map[string]any); len(reqs) != 1 || reqs["greeting"] == nil {
		t.Fatalf("sampling-only client was asked %v", caps.raw)
	}
}

// fixtureToolNames are the 23 fixture tools, in name order.
var fixtureToolNames = []string{
	"confirm_delete", "failing_job", "greet", "json_schema_2020_12_tool", "multi_input", "protocol_error_job", "slow_compute",
	"test_error_handling", "test_input_required_result_capabilities", "test_input_required_result_elicitation",
	"test_input_required_result_list_roots", "test_input_required_result_multi_round", "test_input_required_result_multiple_inputs",
	"test_input_required_result_request_state", "test_input_required_result_sampling", "test_input_required_result_tampered_state",
	"test_logging_tool", "test_missing_capability", "test_simple_text", "test_streaming_elicitation", "test_tool_with_task",
	"test_trigger_prompt_change", "test_trigger_tool_change",
}

// TestPluggedInBesideTheProductTools: the plugin adds exactly the 23
// fixture tools to the server's 16, the prompt and the resource; every
// schema is portable (engine.PortabilityFindings, the MCP Inspector's
// rules); the probe fixtures add and remove a tool and a prompt.
func TestPluggedInBesideTheProductTools(t *testing.T) {
	c := newServer(t, startEngine(t, ""))
	names := func() []string {
		r := c.call("tools/list", nil, map[string]any{})
		tools, _ := r.result["tools"].([]any)
		var out []string
		for _, raw := range tools {
			tool := raw.(map[string]any)
			out = append(out, tool["name"].(string))
			for _, kind := range []string{"inputSchema", "outputSchema"} {
				schema, ok := tool[kind]
				if !ok {
					continue
				}
				b, _ := json.Marshal(schema)
				findings, err := engine.PortabilityFindings(b)
				if err != nil {
					t.Fatalf("%s %s: %v", tool["name"], kind, err)
				}
				for _, f := range findings {
					t.Errorf("%s %s: %s", tool["name"], kind, f)
				}
			}
		}
		return out
	}
	listed := names()
	var fixtures []string
	for _, n := range listed {
		if slices.Contains(fixtureToolNames, n) {
			fixtures = append(fixtures, n)
		}
	}
	if len(listed) != 16+len(fixtureToolNames) || !slices.Equal(fixtures, fixtureToolNames) {
		t.Fatalf("tools/list: %d tools %v, want the 16 product tools and the fixtures %v", len(listed), listed, fixtureToolNames)
	}
	prompts := c.call("prompts/list", nil, map[string]any{})
	if !strings.Contains(prompts.raw, `"test_input_required_result_prompt"`) || strings.Contains(prompts.raw, "dev_probe_prompt") {
		t.Errorf("prompts/list: %s", prompts.raw)
	}
	res := c.call("resources/read", map[string]any{"uri": "test://static-text"}, map[string]any{})
	if !strings.Contains(res.raw, "This is the content of the static text resource.") {
		t.Errorf("resources/read test://static-text: %s", res.raw)
	}

	c.call("tools/call", map[string]any{"name": "test_trigger_tool_change"}, map[string]any{})
	c.call("tools/call", map[string]any{"name": "test_trigger_prompt_change"}, map[string]any{})
	if got := names(); !slices.Contains(got, "dev_probe_tool") || len(got) != len(listed)+1 {
		t.Errorf("after test_trigger_tool_change: %v", got)
	}
	if r := c.call("prompts/list", nil, map[string]any{}); !strings.Contains(r.raw, `"dev_probe_prompt"`) {
		t.Errorf("after test_trigger_prompt_change: %s", r.raw)
	}
	c.call("tools/call", map[string]any{"name": "test_trigger_tool_change"}, map[string]any{})
	if got := names(); slices.Contains(got, "dev_probe_tool") || len(got) != len(listed) {
		t.Errorf("after the second test_trigger_tool_change: %v", got)
	}
}
