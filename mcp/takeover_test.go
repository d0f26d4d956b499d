package mcp

import (
	"testing"

	"github.com/browsertask/browsertask/engine"
	"github.com/browsertask/browsertask/internal/fixture"
)

// TestTakeoverOverMCP: a run that asks for a takeover is, for a 2026-07-28
// client with the Tasks extension, input_required with a URL-mode
// elicitation pointing at the live view; accepting it does not end the
// takeover (the person only agreed to go there). A 2025-11-25 client sees
// the task input_required and the URL in the run's inputRequest, and
// answer_task_run {confirm: true} (Done) lets the run finish.
func TestTakeoverOverMCP(t *testing.T) {
	const base = "http://127.0.0.1:7788"
	eng := newEngine(t, engine.Config{})
	eng.SetLiveBase(base)
	modern := newModernServer(t, eng, HTTPOptions{})
	args := map[string]any{"templateId": "dev_tool_job", "options": map[string]any{"mode": "async"},
		"inputs": map[string]any{"tool": "t", "ask": []any{map[string]any{"requestId": "t1", "kind": "takeover", "message": "Solve the CAPTCHA"}}}}
	r := modern.call("tools/call", map[string]any{"name": "run_task_template", "arguments": args}, modernOpts{})
	if r.result == nil || r.result["resultType"] != "task" {
		t.Fatalf("run_task_template: %s", r.raw)
	}
	id := r.result["taskId"].(string)
	live := base + "/runs/" + id + "#live"
	waiting := modern.pollTask(id, func(s string) bool { return s == "input_required" || terminalStatus(s) })
	req, _ := waiting["inputRequests"].(map[string]any)["t1"].(map[string]any)
	params, _ := req["params"].(map[string]any)
	if waiting["status"] != "input_required" || req["method"] != "elicitation/create" || params["mode"] != "url" ||
		params["url"] != live || params["elicitationId"] != "t1" || params["message"] != "Solve the CAPTCHA" {
		t.Fatalf("waiting task = %v", waiting)
	}
	ack := modern.call("tasks/update", map[string]any{"taskId": id, "inputResponses": map[string]any{"t1": map[string]any{"action": "accept"}}}, modernOpts{})
	if ack.result == nil || ack.result["resultType"] != "complete" {
		t.Fatalf("tasks/update: %s", ack.raw)
	}
	if again := modern.call("tasks/get", map[string]any{"taskId": id}, modernOpts{}); again.result["status"] != "input_required" {
		t.Fatalf("an accepted URL elicitation ended the takeover: %s", again.raw)
	}

	p := startRawPeer(t, NewServer(eng, ServerOptions{Version: "test"}))
	if st := p.mustCall("tasks/get", map[string]any{"taskId": id})["status"]; st != "input_required" {
		t.Fatalf("legacy tasks/get status %v, want input_required", st)
	}
	got := p.mustCall("tools/call", map[string]any{"name": "get_task_run", "arguments": map[string]any{"runId": id}})
	ir, _ := got["structuredContent"].(map[string]any)["inputRequest"].(map[string]any)
	if ir["kind"] != "takeover" || ir["url"] != live {
		t.Fatalf("get_task_run inputRequest %v, want kind takeover and url %s", ir, live)
	}
	ans := p.mustCall("tools/call", map[string]any{"name": "answer_task_run", "arguments": map[string]any{"runId": id, "requestId": "t1", "confirm": true}})
	if ans["isError"] == true || ans["structuredContent"].(map[string]any)["kind"] != "takeover" {
		t.Fatalf("answer_task_run = %v", ans)
	}
	ctx, cancel := fixture.Context(t)
	defer cancel()
	if run, err := eng.Wait(ctx, id, nil); err != nil || run.Status != engine.StatusSucceeded {
		t.Fatalf("run %+v %v", run, err)
	}
}
