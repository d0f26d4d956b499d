package mcp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strings"
	"testing"

	"github.com/browsertask/browsertask/engine"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

func TestToolsListHasSevenDescribedTools(t *testing.T) {
	tc := newTestClient(t, newEngine(t, engine.Config{}))
	var names []string
	for name, tool := range tc.tools {
		names = append(names, name)
		if len(tool.Description) < 100 {
			t.Errorf("%s: description too short for a model: %q", name, tool.Description)
		}
		in, _ := json.Marshal(tool.InputSchema)
		var inMap map[string]any
		_ = json.Unmarshal(in, &inMap)
		if inMap["type"] != "object" {
			t.Errorf("%s: inputSchema type = %v", name, inMap["type"])
		}
		if _, ok := inMap["additionalProperties"]; ok {
			t.Errorf("%s: inputSchema must not restrict additional properties (forward compatibility)", name)
		}
		out, _ := json.Marshal(tool.OutputSchema)
		var outMap map[string]any
		_ = json.Unmarshal(out, &outMap)
		if outMap["type"] != "object" || outMap["anyOf"] == nil {
			t.Errorf("%s: outputSchema must be an object with anyOf, got %s", name, out)
		}
		if !strings.Contains(string(out), "errorCode") {
			t.Errorf("%s: outputSchema does not admit the error object", name)
		}
		if _, err := engine.CompileSchema(in); err != nil {
			t.Errorf("%s: inputSchema: %v", name, err)
		}
		if _, err := engine.CompileSchema(out); err != nil {
			t.Errorf("%s: outputSchema: %v", name, err)
		}
	}
	sort.Strings(names)
	want := []string{"answer_task_run", "cancel_task_run", "close_browser_session", "create_browser_session", "export_session_state",
		"get_artifact", "get_runtime_profile", "get_task_run", "get_task_run_events", "list_browser_sessions",
		"list_profiles", "list_task_runs", "list_task_templates", "run_task_template", "sign_in_profile", "subscribe_task_run_events"}
	if strings.Join(names, ",") != strings.Join(want, ",") {
		t.Fatalf("tools = %v, want %v", names, want)
	}
	// The SDK client's default: server/discover, then stateless requests.
	if v := tc.cs.InitializeResult().ProtocolVersion; v != "2026-07-28" {
		t.Fatalf("negotiated protocol %q, want 2026-07-28 (the go-sdk client's modern mode)", v)
	}
}

func TestArgumentProblemsAreInvalidParameterResults(t *testing.T) {
	eng := newEngine(t, engine.Config{})
	tc := newTestClient(t, eng)
	ctx := context.Background()
	run := func(opts map[string]any) map[string]any {
		return map[string]any{"templateId": "dev_echo", "options": opts}
	}
	cases := []struct {
		name  string
		tool  string
		args  map[string]any
		field string
	}{
		{"mode fast", "run_task_template", run(map[string]any{"mode": "fast"}), "options.mode"},
		{"timeout 0", "run_task_template", run(map[string]any{"timeoutMs": 0}), "options.timeoutMs"},
		{"timeout 600001", "run_task_template", run(map[string]any{"timeoutMs": 600001}), "options.timeoutMs"},
		{"timeout abc", "run_task_template", run(map[string]any{"timeoutMs": "abc"}), "options.timeoutMs"},
		{"timeout fraction", "run_task_template", run(map[string]any{"timeoutMs": 1.5}), "options.timeoutMs"},
		{"sync above syncTimeoutMs", "run_task_template", run(map[string]any{"mode": "sync", "timeoutMs": 300001}), "options.timeoutMs"},
		{"key too long", "run_task_template", run(map[string]any{"idempotencyKey": strings.Repeat("k", 201)}), "options.idempotencyKey"},
		{"missing templateId", "run_task_template", map[string]any{"inputs": map[string]any{}}, "templateId"},
		{"inputs not object", "run_task_template", map[string]any{"templateId": "dev_echo", "inputs": []any{1}}, "inputs"},
		{"limit 0", "list_task_runs", map[string]any{"limit": 0}, "limit"},
		{"limit 1001", "list_task_runs", map[string]any{"limit": 1001}, "limit"},
		{"offset -1", "list_task_runs", map[string]any{"offset": -1}, "offset"},
		{"status bogus", "list_task_runs", map[string]any{"status": "bogus"}, "status"},
		{"length 0", "get_artifact", map[string]any{"artifactId": "art_1", "length": 0}, "length"},
		{"offset -1 artifact", "get_artifact", map[string]any{"artifactId": "art_1", "offset": -1}, "offset"},
		{"missing runId", "get_task_run", map[string]any{}, "runId"},
		{"runId number", "cancel_task_run", map[string]any{"runId": 7}, "runId"},
		{"includeSchemas string", "list_task_templates", map[string]any{"includeSchemas": "yes"}, "includeSchemas"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			res, sc := tc.call(t, ctx, c.tool, c.args)
			msg := wantError(t, res, sc, engine.InvalidParameter)
			if !strings.HasPrefix(msg, c.field+" ") {
				t.Fatalf("message %q does not start with the field %s", msg, c.field)
			}
			if d, _ := sc["details"].(map[string]any); d["field"] != c.field {
				t.Fatalf("details.field = %v, want %s", d["field"], c.field)
			}
		})
	}
	res, sc := tc.call(t, ctx, "run_task_template", run(map[string]any{"timeoutMs": 0}))
	if msg := wantError(t, res, sc, engine.InvalidParameter); msg != "options.timeoutMs must be an integer in 1..600000, got 0" {
		t.Fatalf("message = %q", msg)
	}
	if l, err := eng.List(ctx, engine.ListQuery{}); err != nil || l.Total != 0 {
		t.Fatalf("invalid run_task_template calls created runs: %+v %v", l, err)
	}
}

func TestUnknownFieldsIgnoredButUnknownInputsRejected(t *testing.T) {
	tc := newTestClient(t, newEngine(t, engine.Config{}))
	ctx := context.Background()
	res, sc := tc.call(t, ctx, "run_task_template", map[string]any{
		"templateId": "dev_echo", "futureField": 1, "options": map[string]any{"mode": "sync", "futureOption": true},
	})
	if res.IsError || sc["status"] != "succeeded" || sc["mode"] != "sync" {
		t.Fatalf("unknown top-level/options fields must be ignored, got %v", sc)
	}
	// ...but not silently (issue 9, defect 12): the answer names them.
	if got := fmt.Sprint(sc["ignoredArguments"]); got != "[futureField options.futureOption]" {
		t.Fatalf("ignoredArguments = %s, want [futureField options.futureOption]", got)
	}
	res, sc = tc.call(t, ctx, "run_task_template", map[string]any{"templateId": "dev_echo", "options": map[string]any{"mode": "async"}})
	if res.IsError || sc["ignoredArguments"] != nil {
		t.Fatalf("a request without unknown arguments: %v", sc)
	}
	res, sc = tc.call(t, ctx, "run_task_template", map[string]any{
		"templateId": "dev_echo", "inputs": map[string]any{"urlz": []string{"x"}},
	})
	if msg := wantError(t, res, sc, engine.InvalidParameter); !strings.Contains(msg, "urlz") {
		t.Fatalf("message %q does not name urlz", msg)
	}
}

func TestProtocolProblemsAreJSONRPCErrors(t *testing.T) {
	tc := newTestClient(t, newEngine(t, engine.Config{}))
	ctx := context.Background()
	for _, c := range []struct {
		name string
		args any
	}{{"no_such_tool", map[string]any{}}, {"get_task_run", "run_1"}, {"get_task_run", []any{1}}} {
		_, err := tc.cs.CallTool(ctx, &sdk.CallToolParams{Name: c.name, Arguments: c.args})
		var werr *jsonrpc.Error
		if !errors.As(err, &werr) || werr.Code != jsonrpc.CodeInvalidParams {
			t.Fatalf("%s(%v): want JSON-RPC -32602, got %v", c.name, c.args, err)
		}
	}
}

func TestDomainErrorsAndMalformedIDs(t *testing.T) {
	tc := newTestClient(t, newEngine(t, engine.Config{}))
	ctx := context.Background()
	_, run := tc.call(t, ctx, "run_task_template", runArgs(instantRun, "sync", nil))
	art := run["artifactIds"].([]any)[0]
	res, sc := tc.call(t, ctx, "get_task_run", map[string]any{"runId": "run_nope"})
	wantError(t, res, sc, engine.RunNotFound)
	res, sc = tc.call(t, ctx, "cancel_task_run", map[string]any{"runId": "nope"})
	wantError(t, res, sc, engine.RunNotFound)
	res, sc = tc.call(t, ctx, "get_artifact", map[string]any{"artifactId": "art_nope"})
	wantError(t, res, sc, engine.ArtifactNotFound)
	res, sc = tc.call(t, ctx, "get_artifact", map[string]any{"artifactId": art, "offset": 99})
	wantError(t, res, sc, engine.InvalidParameter)
	res, sc = tc.call(t, ctx, "run_task_template", map[string]any{"templateId": "nope"})
	wantError(t, res, sc, engine.TemplateNotFound)
}

func TestReadToolsAnswerTheEngine(t *testing.T) {
	tc := newTestClient(t, newEngine(t, engine.Config{}))
	ctx := context.Background()

	_, sc := tc.call(t, ctx, "list_task_templates", nil)
	tpls := sc["templates"].([]any)
	if len(tpls) != 3 || tpls[0].(map[string]any)["inputSchema"] == nil {
		t.Fatalf("templates with schemas: %v", sc)
	}
	_, sc = tc.call(t, ctx, "list_task_templates", map[string]any{"includeSchemas": false})
	if tpl := sc["templates"].([]any)[0].(map[string]any); tpl["inputSchema"] != nil || tpl["templateId"] != "dev_echo" {
		t.Fatalf("includeSchemas=false: %v", tpl)
	}

	_, sc = tc.call(t, ctx, "get_runtime_profile", map[string]any{})
	for _, k := range []string{"maxConcurrentRuns", "maxUrls", "maxTabsPerSession", "syncTimeoutMs", "asyncTimeoutMs",
		"artifactMaxChunkSize", "artifactTtlMs", "runTtlMs", "supportedModes", "trustLevel", "isRemote", "protocolVersions"} {
		if _, ok := sc[k]; !ok {
			t.Errorf("profile lacks %s", k)
		}
	}
	if pv := sc["protocolVersions"].([]any); len(pv) != 5 || pv[0] != "2026-07-28" || pv[1] != "2025-11-25" {
		t.Errorf("protocolVersions = %v", pv)
	}

	_, run := tc.call(t, ctx, "run_task_template", runArgs(instantRun, "sync", nil))
	id := run["runId"].(string)
	res, sc := tc.call(t, ctx, "get_task_run", map[string]any{"runId": id})
	if res.IsError || sc["status"] != "succeeded" || sc["runId"] != id {
		t.Fatalf("get_task_run: %v", sc)
	}
	_, sc = tc.call(t, ctx, "cancel_task_run", map[string]any{"runId": id})
	if sc["success"] != false || sc["status"] != "succeeded" || sc["reason"] == nil {
		t.Fatalf("cancel of a terminal run: %v", sc)
	}
	_, sc = tc.call(t, ctx, "list_task_runs", map[string]any{})
	if sc["total"] != float64(1) || sc["limit"] != float64(50) || sc["offset"] != float64(0) {
		t.Fatalf("list_task_runs: %v", sc)
	}
	_, sc = tc.call(t, ctx, "list_task_runs", map[string]any{"status": "succeeded", "limit": 1000, "offset": 1})
	if sc["total"] != float64(1) || sc["limit"] != float64(1000) || sc["offset"] != float64(1) || len(sc["runs"].([]any)) != 0 {
		t.Fatalf("list_task_runs status succeeded, offset 1: %v", sc)
	}
	_, sc = tc.call(t, ctx, "list_task_runs", map[string]any{"status": "queued"})
	if sc["total"] != float64(0) {
		t.Fatalf("list_task_runs status queued: %v", sc)
	}
	_, sc = tc.call(t, ctx, "get_artifact", map[string]any{"artifactId": run["artifactIds"].([]any)[0], "offset": 6})
	if sc["data"] != "world" || sc["complete"] != true || sc["length"] != float64(5) {
		t.Fatalf("get_artifact: %v", sc)
	}
}
