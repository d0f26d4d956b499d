package mcp

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/browsertask/browsertask/engine"
)

// The tools' schemas are portable in the sense of the MCP Inspector's
// schema check (engine.PortabilityFindings mirrors its rules): no type
// arrays, no subschema that accepts any value, no bare boolean schemas and
// no remote $ref. Checked on the schemas as a client receives them. The
// conformance fixtures' schemas are checked in internal/conformance, the
// templates' own schemas in package templates.
func TestToolSchemasArePortable(t *testing.T) {
	tc := connectClient(t, NewServer(newEngine(t, engine.Config{}), ServerOptions{Version: "test"}))
	if len(tc.tools) != 16 {
		t.Fatalf("%d tools listed, want 16", len(tc.tools))
	}
	for name, tool := range tc.tools {
		for kind, schema := range map[string]any{"inputSchema": tool.InputSchema, "outputSchema": tool.OutputSchema} {
			if schema == nil {
				continue
			}
			for _, f := range lintAdvertised(t, schema) {
				t.Errorf("%s %s: %s", name, kind, f)
			}
		}
	}
}

// lintAdvertised runs engine.PortabilityFindings on a schema as decoded by
// the client.
func lintAdvertised(t *testing.T, schema any) []engine.SchemaFinding {
	t.Helper()
	raw, err := json.Marshal(schema)
	if err != nil {
		t.Fatal(err)
	}
	fs, err := engine.PortabilityFindings(raw)
	if err != nil {
		t.Fatal(err)
	}
	return fs
}

// Making the schemas portable narrowed nothing they accepted except where
// the contract says more than the old schema did (a run's result and an
// event's data are objects or null), and loosened nothing: every
// subschema that was rewritten still takes and refuses what it did.
func TestPortableSchemasKeepTheirChecks(t *testing.T) {
	tc := newTestClient(t, newEngine(t, engine.Config{}))
	ts := []any{0, 1739188800000, nil}
	notTS := []any{"x", 1.5, true, map[string]any{}, []any{}}
	free := []any{nil, map[string]any{}, map[string]any{"status": "running", "n": 1}}
	notFree := []any{"x", 1, true, []any{}}
	cases := []struct {
		tool, kind string
		path       []any // keys and indexes from the schema's root
		accept     []any
		reject     []any
	}{
		{"get_task_run", "output", []any{"anyOf", 0, "properties", "startedAt"}, ts, notTS},
		{"get_task_run", "output", []any{"anyOf", 0, "properties", "finishedAt"}, ts, notTS},
		{"get_task_run", "output", []any{"anyOf", 0, "properties", "expiresAt"}, ts, notTS},
		{"get_task_run", "output", []any{"anyOf", 0, "properties", "result"}, free, notFree},
		{"run_task_template", "output", []any{"anyOf", 0, "properties", "startedAt"}, ts, notTS},
		{"run_task_template", "output", []any{"anyOf", 0, "properties", "result"}, free, notFree},
		{"list_task_runs", "output", []any{"anyOf", 0, "properties", "runs", "items", "properties", "finishedAt"}, ts, notTS},
		{"create_browser_session", "output", []any{"anyOf", 0, "properties", "closedAt"}, ts, notTS},
		{"close_browser_session", "output", []any{"anyOf", 0, "properties", "closedAt"}, ts, notTS},
		{"list_browser_sessions", "output", []any{"anyOf", 0, "properties", "sessions", "items", "properties", "closedAt"}, ts, notTS},
		{"get_runtime_profile", "output", []any{"anyOf", 0, "properties", "browser"},
			[]any{nil, map[string]any{}, map[string]any{"mode": "local", "product": "Chrome/1"}}, notFree},
		{"get_task_run_events", "output", []any{"anyOf", 0, "properties", "events", "items", "properties", "data"}, free, notFree},
		{"subscribe_task_run_events", "output", []any{"anyOf", 0, "properties", "events", "items", "properties", "data"}, free, notFree},
		{"run_task_template", "input", []any{"properties", "options", "properties", "outputSchema"},
			[]any{map[string]any{"type": "object"}, map[string]any{}, true, false}, []any{nil, "x", 1, []any{}}},
	}
	for _, c := range cases {
		name := c.tool + " " + c.kind + " " + fmt.Sprint(c.path)
		tool := tc.tools[c.tool]
		if tool == nil {
			t.Fatalf("%s: tool not listed", c.tool)
		}
		var root any = tool.OutputSchema
		if c.kind == "input" {
			root = tool.InputSchema
		}
		sub := compileAt(t, name, root, c.path)
		if sub == nil {
			continue
		}
		for _, v := range c.accept {
			if err := sub.Validate(mustJSON(t, v), "value"); err != nil {
				t.Errorf("%s: %s rejected: %v", name, mustJSON(t, v), err)
			}
		}
		for _, v := range c.reject {
			if err := sub.Validate(mustJSON(t, v), "value"); err == nil {
				t.Errorf("%s: %s accepted", name, mustJSON(t, v))
			}
		}
	}
}

// compileAt compiles the subschema of root at path (the schema's own
// keywords and indexes, from the root).
func compileAt(t *testing.T, name string, root any, path []any) *engine.Schema {
	t.Helper()
	raw, _ := json.Marshal(root)
	var node any
	_ = json.Unmarshal(raw, &node)
	for i, step := range path {
		switch k := step.(type) {
		case int:
			list, _ := node.([]any)
			if k >= len(list) {
				t.Errorf("%s: no [%d] at step %d", name, k, i)
				return nil
			}
			node = list[k]
		case string:
			m, _ := node.(map[string]any)
			next, ok := m[k]
			if !ok {
				t.Errorf("%s: no %q at step %d", name, k, i)
				return nil
			}
			node = next
		}
	}
	sub, err := engine.CompileSchema(mustJSON(t, node))
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	return sub
}

func mustJSON(t *testing.T, v any) json.RawMessage {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// validRun is a Run object as get_task_run answers it (queued, so result
// and error are null).
func validRun() map[string]any {
	return map[string]any{
		"runId": "run_1", "templateId": "dev_echo", "templateVersion": 1, "sessionId": "sess_1", "ownsSession": true,
		"status": "queued", "mode": "async",
		"progress": map[string]any{"doneSteps": 0, "totalSteps": 0}, "metrics": map[string]any{"elapsedMs": 0},
		"result": nil, "error": nil, "artifactIds": []any{}, "createdAt": 1739188800000, "updatedAt": 1739188800000,
		"startedAt": nil, "finishedAt": nil, "expiresAt": 1739190600000, "inputRequest": nil,
	}
}

// with returns a copy of m with the given fields set (the value drop
// removes the field).
func with(m map[string]any, kv ...any) map[string]any {
	out := map[string]any{}
	for k, v := range m {
		out[k] = v
	}
	for i := 0; i+1 < len(kv); i += 2 {
		if kv[i+1] == drop {
			delete(out, kv[i].(string))
			continue
		}
		out[kv[i].(string)] = kv[i+1]
	}
	return out
}

// drop is with's marker for a field to remove.
const drop = "\x00drop"

// Whole answers against the tools' advertised output schemas: a run still
// fails on a malformed timestamp, status or error and passes with nulls;
// every output schema still admits the error object; a list_task_runs row
// is runRowSchema (no result, resultBytes >= 0).
func TestOutputSchemasValidateWholeAnswers(t *testing.T) {
	tc := newTestClient(t, newEngine(t, engine.Config{}))
	compile := func(tool string) *engine.Schema {
		t.Helper()
		s, err := engine.CompileSchema(mustJSON(t, tc.tools[tool].OutputSchema))
		if err != nil {
			t.Fatalf("%s: %v", tool, err)
		}
		return s
	}
	errObj := map[string]any{"errorCode": "RUN_NOT_FOUND", "message": "no run run_x", "recovery": "check the runId"}
	for name := range tc.tools {
		if err := compile(name).Validate(mustJSON(t, errObj), ""); err != nil {
			t.Errorf("%s: the error object is rejected: %v", name, err)
		}
	}
	run := validRun()
	succeeded := with(run, "status", "succeeded", "startedAt", 1739188800001, "finishedAt", 1739188800002,
		"result", map[string]any{"items": 1})
	failed := with(run, "status", "failed", "error", errObj)
	row := with(run, "result", drop, "resultBytes", 0)
	cases := []struct {
		tool string
		doc  any
		ok   bool
	}{
		{"get_task_run", run, true},
		{"get_task_run", succeeded, true},
		{"get_task_run", failed, true},
		{"get_task_run", with(run, "startedAt", "x"), false},
		{"get_task_run", with(run, "finishedAt", 1.5), false},
		{"get_task_run", with(run, "expiresAt", "soon"), false},
		{"get_task_run", with(run, "status", "done"), false},
		{"get_task_run", with(run, "error", "boom"), false},
		{"get_task_run", with(run, "result", "text"), false},
		{"get_task_run", with(run, "result", drop), false},
		{"get_task_run", with(run, "startedAt", drop), true}, // optional, as before
		{"run_task_template", with(succeeded, "mode", "sync", "deduplicated", false), true},
		{"run_task_template", with(succeeded, "mode", "sync", "deduplicated", false, "startedAt", "x"), false},
		{"list_task_runs", map[string]any{"runs": []any{row}, "total": 1, "limit": 50, "offset": 0}, true},
		{"list_task_runs", map[string]any{"runs": []any{with(row, "resultBytes", 123, "status", "succeeded")}, "total": 1, "limit": 50, "offset": 0}, true},
		{"list_task_runs", map[string]any{"runs": []any{with(row, "resultBytes", -1)}, "total": 1, "limit": 50, "offset": 0}, false},
		{"list_task_runs", map[string]any{"runs": []any{with(row, "resultBytes", drop)}, "total": 1, "limit": 50, "offset": 0}, false},
		{"list_task_runs", map[string]any{"runs": []any{with(row, "startedAt", "x")}, "total": 1, "limit": 50, "offset": 0}, false},
		{"create_browser_session", map[string]any{"sessionId": "sess_1", "createdAt": 1, "expiresAt": 2, "closedAt": nil}, true},
		{"create_browser_session", map[string]any{"sessionId": "sess_1", "createdAt": 1, "expiresAt": 2, "closedAt": "x"}, false},
		{"get_task_run_events", map[string]any{"events": []any{
			map[string]any{"runId": "run_1", "seq": 1, "at": 1, "type": "created", "data": map[string]any{"templateId": "dev_echo"}},
			map[string]any{"runId": "run_1", "seq": 2, "at": 2, "type": "kept", "data": nil},
			map[string]any{"runId": "run_1", "seq": 3, "at": 3, "type": "progress"},
		}, "nextSeq": 3, "terminal": false}, true},
		{"get_task_run_events", map[string]any{"events": []any{
			map[string]any{"runId": "run_1", "seq": 1, "at": 1, "type": "log", "data": "text"},
		}, "nextSeq": 1, "terminal": false}, false},
	}
	for i, c := range cases {
		err := compile(c.tool).Validate(mustJSON(t, c.doc), "")
		if (err == nil) != c.ok {
			t.Errorf("case %d %s %s: accepted %v, want %v (%v)", i, c.tool, mustJSON(t, c.doc), err == nil, c.ok, err)
		}
	}
}

// runRowSchema is runSchema without result, with resultBytes required, and
// nothing else changed.
func TestRunRowSchemaIsRunWithoutResult(t *testing.T) {
	run, row := runSchema(), runRowSchema()
	runProps, rowProps := run["properties"].(map[string]any), row["properties"].(map[string]any)
	if _, ok := rowProps["result"]; ok {
		t.Fatal("runRowSchema still has result")
	}
	rb, _ := json.Marshal(rowProps["resultBytes"])
	if string(rb) != `{"description":"size in bytes of the run's result JSON; fetch it with get_task_run","minimum":0,"type":"integer"}` {
		t.Fatalf("resultBytes = %s", rb)
	}
	if len(rowProps) != len(runProps) {
		t.Fatalf("row has %d properties, run %d (want result swapped for resultBytes)", len(rowProps), len(runProps))
	}
	for k, v := range runProps {
		if k == "result" {
			continue
		}
		a, _ := json.Marshal(v)
		b, _ := json.Marshal(rowProps[k])
		if string(a) != string(b) {
			t.Errorf("%s differs: run %s, row %s", k, a, b)
		}
	}
	wantReq := strings.Replace(strings.Join(run["required"].([]string), ","), "result,", "", 1) + ",resultBytes"
	if got := strings.Join(row["required"].([]string), ","); got != wantReq {
		t.Fatalf("row required = %s, want %s", got, wantReq)
	}
	// runSchema itself is untouched by building the row.
	if _, ok := runSchema()["properties"].(map[string]any)["result"]; !ok {
		t.Fatal("runSchema lost result")
	}
}
