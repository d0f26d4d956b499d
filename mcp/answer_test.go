package mcp

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/browsertask/browsertask/engine"
)

// askArgs are run_task_template arguments for a dev_tool_job run that asks
// one question of kind (text, secret, confirm) under requestId "q".
func askArgs(kind, mode string) map[string]any {
	return map[string]any{"templateId": "dev_tool_job", "options": map[string]any{"mode": mode},
		"inputs": map[string]any{"tool": "t", "ask": []any{map[string]any{"requestId": "q", "kind": kind, "message": "Enter the code from your phone"}}}}
}

// TestSyncCallAnswersWhenTheRunAsks: a sync (or auto) call whose run starts
// waiting for a person answers at once, as async, with the inputRequest;
// answer_task_run delivers the answer (refusing one of the wrong kind) and
// the run finishes with the secret masked; no answer holds the value.
func TestSyncCallAnswersWhenTheRunAsks(t *testing.T) {
	synctest.Test(t, testSyncCallAnswersWhenTheRunAsks)
}

func testSyncCallAnswersWhenTheRunAsks(t *testing.T) {
	const code = "55501234"
	eng := newEngine(t, engine.Config{})
	tc := newTestClient(t, eng)
	ctx := context.Background()
	for _, mode := range []string{"sync", "auto"} {
		_, sc := tc.call(t, ctx, "run_task_template", askArgs("secret", mode))
		ir, _ := sc["inputRequest"].(map[string]any)
		if sc["status"] != "running" || sc["mode"] != "async" || ir["requestId"] != "q" || ir["kind"] != "secret" ||
			ir["message"] != "Enter the code from your phone" {
			t.Fatalf("%s call of a run that asks = %v", mode, sc)
		}
		id := sc["runId"].(string)
		_, got := tc.call(t, ctx, "get_task_run", map[string]any{"runId": id})
		if gir, _ := got["inputRequest"].(map[string]any); gir["requestId"] != "q" || got["status"] != "running" {
			t.Fatalf("get_task_run of the waiting run = %v", got)
		}
		_, list := tc.call(t, ctx, "list_task_runs", map[string]any{"status": "running"})
		if runs := list["runs"].([]any); len(runs) != 1 || runs[0].(map[string]any)["inputRequest"] == nil {
			t.Fatalf("list_task_runs = %v", list)
		}
		res, e := tc.call(t, ctx, "answer_task_run", map[string]any{"runId": id, "requestId": "q", "confirm": true})
		if msg := wantError(t, res, e, engine.InvalidParameter); !strings.Contains(msg, "value") {
			t.Errorf("confirm for a secret question: %q", msg)
		}
		res, e = tc.call(t, ctx, "answer_task_run", map[string]any{"runId": id, "requestId": "nope", "value": code})
		wantError(t, res, e, engine.InvalidParameter)
		res, e = tc.call(t, ctx, "answer_task_run", map[string]any{"runId": "run_nope", "requestId": "q", "value": code})
		wantError(t, res, e, engine.RunNotFound)
		res, ans := tc.call(t, ctx, "answer_task_run", map[string]any{"runId": id, "requestId": "q", "value": code})
		if res.IsError || ans["answered"] != true || ans["kind"] != "secret" || ans["requestId"] != "q" {
			t.Fatalf("answer_task_run = %v", ans)
		}
		wctx, cancel := context.WithTimeout(ctx, 20*time.Second)
		run, err := eng.Wait(wctx, id, nil)
		cancel()
		if err != nil || run.Status != engine.StatusSucceeded || run.Question != nil {
			t.Fatalf("run = %+v, %v", run, err)
		}
		res, final := tc.call(t, ctx, "get_task_run", map[string]any{"runId": id})
		b, _ := json.Marshal(res)
		if strings.Contains(string(b), code) || !strings.Contains(string(b), engine.SecretMask) || final["inputRequest"] != nil {
			t.Fatalf("final run shows %s", b)
		}
	}
}

// TestLegacyTaskAsksThroughElicitation: a 2025-11-25 task whose run waits
// is input_required; tasks/result sends the question as elicitation/create
// with the related-task metadata, and the client's response answers the
// run.
func TestLegacyTaskAsksThroughElicitation(t *testing.T) {
	synctest.Test(t, testLegacyTaskAsksThroughElicitation)
}

func testLegacyTaskAsksThroughElicitation(t *testing.T) {
	eng := newEngine(t, engine.Config{})
	p := startRawPeerCaps(t, NewServer(eng, ServerOptions{Version: "test"}), false, map[string]any{"elicitation": map[string]any{}})
	args := askArgs("confirm", "async")
	created := p.mustCall("tools/call", map[string]any{"name": "run_task_template", "arguments": args, "task": map[string]any{"ttl": 60000}})
	id := created["task"].(map[string]any)["taskId"].(string)
	eventually(t, "input_required", func() bool {
		return p.mustCall("tasks/get", map[string]any{"taskId": id})["status"] == "input_required"
	})
	_, ch := p.start("tasks/result", map[string]any{"taskId": id})
	var asked note
	eventually(t, "elicitation/create", func() bool {
		if n := p.notifications("elicitation/create"); len(n) > 0 {
			asked = n[0]
			return true
		}
		return false
	})
	rel, _ := asked.params["_meta"].(map[string]any)[metaRelatedTask].(map[string]any)
	props, _ := asked.params["requestedSchema"].(map[string]any)["properties"].(map[string]any)
	if rel["taskId"] != id || asked.params["message"] != "Enter the code from your phone" || props["confirm"] == nil {
		t.Fatalf("elicitation = %v", asked.params)
	}
	p.send(map[string]any{"jsonrpc": "2.0", "id": asked.id, "result": map[string]any{"action": "accept", "content": map[string]any{"confirm": true}}})
	res, rerr := p.await(ch)
	if rerr != nil {
		t.Fatalf("tasks/result: %v", rerr)
	}
	sc, _ := res["structuredContent"].(map[string]any)
	answers, _ := sc["result"].(map[string]any)["answers"].(map[string]any)
	if sc["status"] != "succeeded" || answers["q"].(map[string]any)["confirm"] != true {
		t.Fatalf("tasks/result = %v", res)
	}
}

// TestLegacyTaskWithoutElicitation: a client without elicitation sees
// input_required and the question in the run; tasks/result waits while
// someone answers with answer_task_run.
func TestLegacyTaskWithoutElicitation(t *testing.T) {
	synctest.Test(t, testLegacyTaskWithoutElicitation)
}

func testLegacyTaskWithoutElicitation(t *testing.T) {
	eng := newEngine(t, engine.Config{})
	p := startRawPeer(t, NewServer(eng, ServerOptions{Version: "test"}))
	created := p.mustCall("tools/call", map[string]any{"name": "run_task_template", "arguments": askArgs("text", "async"), "task": map[string]any{}})
	id := created["task"].(map[string]any)["taskId"].(string)
	eventually(t, "input_required", func() bool {
		return p.mustCall("tasks/get", map[string]any{"taskId": id})["status"] == "input_required"
	})
	_, ch := p.start("tasks/result", map[string]any{"taskId": id})
	ans := p.mustCall("tools/call", map[string]any{"name": "answer_task_run", "arguments": map[string]any{"runId": id, "requestId": "q", "value": "Ada"}})
	if ans["isError"] == true {
		t.Fatalf("answer_task_run = %v", ans)
	}
	res, rerr := p.await(ch)
	if rerr != nil || res["structuredContent"].(map[string]any)["status"] != "succeeded" {
		t.Fatalf("tasks/result = %v, %v", res, rerr)
	}
	if n := p.notifications("elicitation/create"); len(n) != 0 {
		t.Fatalf("elicitation sent to a client without the capability: %v", n)
	}
}
