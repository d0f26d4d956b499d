package mcp

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/browsertask/browsertask/engine"
)

// rawModern posts body as a 2026-07-28 request with the method's
// SEP-2243 headers and name as Mcp-Name, and returns the HTTP status and
// the decoded JSON-RPC error (nil when none) with the raw answer.
func rawModern(t *testing.T, url, method, name, body string) (int, map[string]any, string) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodPost, url, strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("MCP-Protocol-Version", modernVersion)
	req.Header.Set("Mcp-Method", method)
	req.Header.Set("Mcp-Name", name)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	var msg struct {
		Error map[string]any `json:"error"`
	}
	_ = json.Unmarshal(b, &msg)
	return resp.StatusCode, msg.Error, string(b)
}

// TestModernKeysCheckedAsActedOn: a check of Mcp-Name against the body
// and the handler must read the same key (issue 26, item 9). A
// tasks/cancel of run A with a second key TASKID naming run B and
// Mcp-Name: B passed the check on bfdb840 (encoding/json read TASKID)
// and canceled A (the SDK read taskId). Now a key that appears twice or
// spells a known field in another case is refused, naming the key, in
// the params of every request with an Mcp-Name header, in the message
// itself, and in a tool's arguments; no run is canceled.
func TestModernKeysCheckedAsActedOn(t *testing.T) {
	eng := newEngine(t, engine.Config{TaskPollInterval: 100 * time.Millisecond})
	c := newModernServer(t, eng, HTTPOptions{})
	start := func() string {
		r := c.call("tools/call", map[string]any{"name": "run_task_template", "arguments": map[string]any{
			"templateId": "dev_echo", "inputs": map[string]any{"items": 100, "sleepMs": 100}, "options": map[string]any{"mode": "async"}}}, modernOpts{})
		id, _ := r.result["taskId"].(string)
		if id == "" {
			t.Fatalf("run_task_template as a task: %d %s", r.status, r.raw)
		}
		return id
	}
	a, b := start(), start()
	meta, _ := json.Marshal(modernOpts{}.meta())

	for _, tc := range []struct {
		name, method, header, body string
		code                       float64
		wantMsg                    string
	}{
		{"case variant of taskId", "tasks/cancel", b,
			`{"jsonrpc":"2.0","id":1,"method":"tasks/cancel","params":{"taskId":"` + a + `","TASKID":"` + b + `","_meta":` + string(meta) + `}}`,
			-32602, `params.TASKID is not a field (keys are case-sensitive): send it once, spelled "taskId"`},
		{"duplicate taskId", "tasks/cancel", b,
			`{"jsonrpc":"2.0","id":2,"method":"tasks/cancel","params":{"taskId":"` + a + `","taskId":"` + b + `","_meta":` + string(meta) + `}}`,
			-32602, "params.taskId appears more than once"},
		{"escaped duplicate taskId", "tasks/cancel", b,
			`{"jsonrpc":"2.0","id":3,"method":"tasks/cancel","params":{"taskId":"` + a + `","task\u0049d":"` + b + `","_meta":` + string(meta) + `}}`,
			-32602, "params.taskId appears more than once"},
		{"case variant of method", "tasks/cancel", b,
			`{"jsonrpc":"2.0","id":4,"method":"tasks/cancel","METHOD":"tools/list","params":{"taskId":"` + a + `","_meta":` + string(meta) + `}}`,
			-32600, `METHOD is not a field (keys are case-sensitive): send it once, spelled "method"`},
		{"case variant of a tool name", "tools/call", "cancel_task_run",
			`{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"get_task_run","NAME":"cancel_task_run","arguments":{"runId":"` + a + `"},"_meta":` + string(meta) + `}}`,
			-32602, `params.NAME is not a field (keys are case-sensitive): send it once, spelled "name"`},
	} {
		status, rpcErr, raw := rawModern(t, c.url, tc.method, tc.header, tc.body)
		if status != http.StatusBadRequest || rpcErr == nil || rpcErr["code"] != tc.code || !strings.Contains(rpcErr["message"].(string), tc.wantMsg) {
			t.Errorf("%s: %d %s; want HTTP 400, code %v, message with %q", tc.name, status, raw, tc.code, tc.wantMsg)
		}
	}

	// A tool's arguments: the schema and decodeArgs must read one runId.
	r := c.call("tools/call", map[string]any{"name": "cancel_task_run", "arguments": map[string]any{"runId": a, "RUNID": b}}, modernOpts{})
	sc, _ := r.result["structuredContent"].(map[string]any)
	if r.result["isError"] != true || sc["errorCode"] != string(engine.InvalidParameter) ||
		!strings.Contains(sc["message"].(string), `arguments.RUNID is not a field (keys are case-sensitive): send it once, spelled "runId"`) {
		t.Errorf("cancel_task_run with runId and RUNID: %d %s", r.status, r.raw)
	}

	for _, id := range []string{a, b} {
		run, err := eng.Get(context.Background(), id)
		if err != nil {
			t.Fatal(err)
		}
		if run.Status.Terminal() {
			t.Errorf("run %s is %s: a refused request acted on it", id, run.Status)
		}
	}
	// The well-formed request still works.
	if ack := c.call("tasks/cancel", map[string]any{"taskId": b}, modernOpts{}); ack.result == nil || ack.result["resultType"] != "complete" {
		t.Fatalf("tasks/cancel of B: %d %s", ack.status, ack.raw)
	}
	if got := c.pollTask(b, terminalStatus); got["status"] != "cancelled" {
		t.Fatalf("B after its cancel: %v", got["status"])
	}
	if run, _ := eng.Get(context.Background(), a); run.Status.Terminal() {
		t.Fatalf("A is %s after B's cancel", run.Status)
	}
}

// TestFindKeyClash: top-level keys only, compared unescaped; anything
// not an object is left to the decoder.
func TestFindKeyClash(t *testing.T) {
	for _, tc := range []struct {
		raw       string
		key, want string
		clash     bool
	}{
		{`{"taskId":"a","_meta":{}}`, "", "", false},
		{`{"taskId":"a","TaskId":"b"}`, "TaskId", "taskId", true},
		{`{"taskid":"a"}`, "taskid", "taskId", true},
		{`{"taskId":"a","taskId":"b"}`, "taskId", "", true},
		{`{"taskId":"a","task\u0049d":"b"}`, "taskId", "", true},
		{`{"other":"a","OTHER":"b"}`, "", "", false},
		{`{"other":"a","other":"b"}`, "other", "", true},
		{`{"_meta":{"taskId":"a","TASKID":"b"}}`, "", "", false},
		{`[{"taskId":"a","TASKID":"b"}]`, "", "", false},
		{`not json`, "", "", false},
		{``, "", "", false},
	} {
		c := findKeyClash([]byte(tc.raw), "taskId", "_meta")
		if (c != nil) != tc.clash || (c != nil && (c.Key != tc.key || c.Want != tc.want)) {
			t.Errorf("findKeyClash(%s) = %+v, want clash %v key %q want %q", tc.raw, c, tc.clash, tc.key, tc.want)
		}
	}
	type embedded struct {
		Limit int `json:"limit"`
	}
	type args struct {
		embedded
		RunID  string `json:"runId,omitempty"`
		Skip   string `json:"-"`
		Plain  string
		hidden string
	}
	_ = args{}.hidden
	if got := strings.Join(jsonFieldNames(&args{}), ","); got != "limit,runId,Plain" {
		t.Errorf("jsonFieldNames = %s, want limit,runId,Plain", got)
	}
}
