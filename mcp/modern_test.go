package mcp

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/browsertask/browsertask/engine"
	"github.com/browsertask/browsertask/internal/fixture"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// MCP 2026-07-28 beside 2025-11-25 on one endpoint (versionRouter), the
// Tasks extension on runs (tasks_ext.go), runs waiting for input
// (tasks_input.go), driven with raw HTTP requests as a 2026-07-28 client
// sends them. The conformance fixtures' own tools (multi round-trip,
// tasks that ask) are tested in internal/conformance.

// modernClient sends raw 2026-07-28 requests to one /mcp endpoint.
type modernClient struct {
	t     *testing.T
	url   string
	ids   atomic.Int64
	token string
}

// modernOpts adjust one request.
type modernOpts struct {
	// noTasks leaves the Tasks extension out of the client capabilities.
	noTasks bool
	// caps replaces the client capabilities.
	caps map[string]any
	// header overrides or adds headers ("" deletes).
	header map[string]string
}

// modernReply is a decoded answer.
type modernReply struct {
	status int
	result map[string]any
	err    map[string]any
	raw    string
}

// meta is the per-request _meta of a 2026-07-28 request.
func (o modernOpts) meta() map[string]any {
	caps := o.caps
	if caps == nil {
		caps = map[string]any{"elicitation": map[string]any{}, "sampling": map[string]any{}}
		if !o.noTasks {
			caps["extensions"] = map[string]any{tasksExtension: map[string]any{}}
		}
	}
	return map[string]any{
		"io.modelcontextprotocol/protocolVersion":    modernVersion,
		"io.modelcontextprotocol/clientInfo":         map[string]any{"name": "modern-test", "version": "1"},
		"io.modelcontextprotocol/clientCapabilities": caps,
	}
}

// call sends method with params (plus _meta) and the SEP-2243 headers.
func (c *modernClient) call(method string, params map[string]any, o modernOpts) modernReply {
	c.t.Helper()
	if params == nil {
		params = map[string]any{}
	}
	params["_meta"] = o.meta()
	id := c.ids.Add(1)
	body, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": id, "method": method, "params": params})
	req, _ := http.NewRequest(http.MethodPost, c.url, strings.NewReader(string(body)))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("MCP-Protocol-Version", modernVersion)
	req.Header.Set("Mcp-Method", method)
	if name, ok := params["name"].(string); ok {
		req.Header.Set("Mcp-Name", name)
	}
	if id, ok := params["taskId"].(string); ok {
		req.Header.Set("Mcp-Name", id)
	}
	if c.token != "" {
		req.Header.Set("Authorization", "Bearer "+c.token)
	}
	for k, v := range o.header {
		if v == "" {
			req.Header.Del(k)
		} else {
			req.Header.Set(k, v)
		}
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		c.t.Fatalf("%s: %v", method, err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	r := modernReply{status: resp.StatusCode, raw: string(b)}
	payload := string(b)
	if strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
		payload = ""
		sc := bufio.NewScanner(strings.NewReader(string(b)))
		sc.Buffer(make([]byte, 1<<20), 4<<20)
		for sc.Scan() {
			if d, ok := strings.CutPrefix(sc.Text(), "data:"); ok && strings.Contains(d, fmt.Sprintf(`"id":%d`, id)) {
				payload = strings.TrimSpace(d)
			}
		}
	}
	var msg struct {
		Result map[string]any `json:"result"`
		Error  map[string]any `json:"error"`
	}
	if payload != "" && json.Unmarshal([]byte(payload), &msg) == nil {
		r.result, r.err = msg.Result, msg.Error
	}
	return r
}

// code is the JSON-RPC error code of r (0 without error).
func (r modernReply) code() int {
	if r.err == nil {
		return 0
	}
	n, _ := r.err["code"].(float64)
	return int(n)
}

// newModernServer serves a server over HTTP.
func newModernServer(t *testing.T, eng Engine, opts HTTPOptions) *modernClient {
	t.Helper()
	srv := NewServer(eng, ServerOptions{Version: "test"})
	ts := httptest.NewServer(srv.HTTPHandler(opts))
	t.Cleanup(ts.Close)
	return &modernClient{t: t, url: ts.URL + "/mcp", token: opts.Token}
}

// pollTask reads tasks/get until want(status), giving up near the test's
// deadline (fixture.Context): how long the task takes is not the promise.
func (c *modernClient) pollTask(id string, want func(string) bool) map[string]any {
	c.t.Helper()
	ctx, cancel := fixture.Context(c.t)
	defer cancel()
	for {
		r := c.call("tasks/get", map[string]any{"taskId": id}, modernOpts{})
		if r.result == nil {
			c.t.Fatalf("tasks/get %s: %d %s", id, r.status, r.raw)
		}
		if want(r.result["status"].(string)) {
			return r.result
		}
		select {
		case <-ctx.Done():
			c.t.Fatalf("task %s stayed %v until near the test's deadline", id, r.result["status"])
		case <-time.After(50 * time.Millisecond):
		}
	}
}

func terminalStatus(s string) bool { return s == "completed" || s == "failed" || s == "cancelled" }

// TestModernDiscover: server/discover names both generations, the Tasks
// extension (not the legacy capabilities.tasks) and the server in _meta.
func TestModernDiscover(t *testing.T) {
	c := newModernServer(t, newEngine(t, engine.Config{}), HTTPOptions{})
	r := c.call("server/discover", nil, modernOpts{})
	if r.status != 200 || r.result == nil {
		t.Fatalf("discover: %d %s", r.status, r.raw)
	}
	versions := fmt.Sprint(r.result["supportedVersions"])
	if !strings.Contains(versions, "2026-07-28") || !strings.Contains(versions, "2025-11-25") {
		t.Errorf("supportedVersions = %s", versions)
	}
	caps := r.result["capabilities"].(map[string]any)
	if _, ok := caps["tasks"]; ok {
		t.Errorf("discover advertises the legacy capabilities.tasks: %v", caps)
	}
	if ext := caps["extensions"].(map[string]any); fmt.Sprint(ext[tasksExtension]) != "map[]" {
		t.Errorf("extensions = %v", ext)
	}
	info := r.result["_meta"].(map[string]any)["io.modelcontextprotocol/serverInfo"].(map[string]any)
	if info["name"] != "browsertask" || r.result["resultType"] != "complete" {
		t.Errorf("serverInfo = %v, resultType = %v", info, r.result["resultType"])
	}
	// Tools come in name order, whatever order they were added in.
	list := c.call("tools/list", nil, modernOpts{caps: map[string]any{}})
	tools, _ := list.result["tools"].([]any)
	var names []string
	for _, tool := range tools {
		names = append(names, tool.(map[string]any)["name"].(string))
	}
	if len(names) != 16 || !slices.IsSorted(names) || list.result["resultType"] != "complete" {
		t.Fatalf("tools/list: %d %v", list.status, names)
	}
	// Per-request _meta is required: -32602 with HTTP 400.
	body := `{"jsonrpc":"2.0","id":7,"method":"tools/list","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28"}}}`
	req, _ := http.NewRequest(http.MethodPost, c.url, strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("mcp-protocol-version", "2026-07-28") // header names are case-insensitive
	req.Header.Set("mcp-method", "tools/list")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 400 || !strings.Contains(string(b), "-32602") {
		t.Errorf("missing clientCapabilities: %d %s", resp.StatusCode, b)
	}
}

// TestModernRunAsTask: run_task_template from a client of the Tasks
// extension becomes a task (taskId = runId, integer ms, no legacy
// fields); tasks/get inlines the sync reply once completed; without the
// extension the same call answers the async handle; the task methods keep
// their rules (-32021, -32602, -32601, -32020).
func TestModernRunAsTask(t *testing.T) {
	eng := newEngine(t, engine.Config{TaskPollInterval: 100 * time.Millisecond})
	c := newModernServer(t, eng, HTTPOptions{})
	args := map[string]any{"name": "run_task_template", "arguments": map[string]any{
		"templateId": "dev_echo", "inputs": map[string]any{"items": 3, "sleepMs": 100}, "options": map[string]any{"mode": "async"}}}

	r := c.call("tools/call", args, modernOpts{})
	res := r.result
	if res == nil || res["resultType"] != "task" {
		t.Fatalf("tools/call as task: %d %s", r.status, r.raw)
	}
	id, _ := res["taskId"].(string)
	if !strings.HasPrefix(id, "run_") || res["status"] != "working" {
		t.Fatalf("CreateTaskResult = %v", res)
	}
	for _, legacy := range []string{"ttl", "pollInterval", "requestState", "task", "content"} {
		if _, ok := res[legacy]; ok {
			t.Errorf("CreateTaskResult has %q: %v", legacy, res)
		}
	}
	if ttl, ok := res["ttlMs"].(float64); !ok || ttl != float64(int64(ttl)) || ttl <= 0 {
		t.Errorf("ttlMs = %v", res["ttlMs"])
	}
	if res["pollIntervalMs"] != float64(100) {
		t.Errorf("pollIntervalMs = %v", res["pollIntervalMs"])
	}
	if _, err := eng.Get(context.Background(), id); err != nil {
		t.Fatalf("the task is not a stored run: %v", err)
	}

	done := c.pollTask(id, terminalStatus)
	if done["status"] != "completed" || done["resultType"] != "complete" {
		t.Fatalf("finished task = %v", done)
	}
	result := done["result"].(map[string]any)
	run := result["structuredContent"].(map[string]any)
	if result["resultType"] != "complete" || run["status"] != "succeeded" || run["runId"] != id || result["isError"] != nil {
		t.Fatalf("inlined result = %v", result)
	}
	if _, ok := result["_meta"]; ok {
		t.Errorf("the inlined result carries _meta (related-task is legacy): %v", result["_meta"])
	}

	// Without the extension: the async handle, no task.
	plain := c.call("tools/call", args, modernOpts{noTasks: true})
	if plain.result == nil || plain.result["resultType"] != "complete" || plain.result["taskId"] != nil {
		t.Fatalf("call without the extension: %s", plain.raw)
	}
	if sc := plain.result["structuredContent"].(map[string]any); sc["mode"] != "async" || sc["runId"] == nil {
		t.Fatalf("async handle = %v", sc)
	}

	// The task methods.
	if r := c.call("tasks/get", map[string]any{"taskId": id}, modernOpts{noTasks: true}); r.code() != -32021 || r.status != 400 {
		t.Errorf("tasks/get without the extension: %d %s", r.status, r.raw)
	} else if !strings.Contains(r.raw, `"requiredCapabilities":{"extensions":{"io.modelcontextprotocol/tasks":{}}}`) {
		t.Errorf("-32021 data: %s", r.raw)
	}
	if r := c.call("tasks/get", map[string]any{"taskId": "run_nope"}, modernOpts{}); r.code() != -32602 {
		t.Errorf("unknown task: %d %s", r.status, r.raw)
	}
	for _, m := range []string{"tasks/result", "tasks/list"} {
		if r := c.call(m, map[string]any{"taskId": id}, modernOpts{}); r.code() != -32601 || r.status != 404 {
			t.Errorf("%s on 2026-07-28: %d %s", m, r.status, r.raw)
		}
	}
	for _, h := range []map[string]string{{"Mcp-Name": "run_other"}, {"Mcp-Name": ""}} {
		if r := c.call("tasks/get", map[string]any{"taskId": id}, modernOpts{header: h}); r.code() != -32020 || r.status != 400 {
			t.Errorf("tasks/get with %v: %d %s", h, r.status, r.raw)
		}
	}
	if r := c.call("tasks/get", map[string]any{"taskId": id}, modernOpts{header: map[string]string{"mcp-name": " " + id + " "}}); r.code() != 0 {
		t.Errorf("a lower-case, padded Mcp-Name header: %d %s", r.status, r.raw)
	}

	// Cancel: an empty acknowledgement, idempotent; the task reads cancelled.
	long := c.call("tools/call", map[string]any{"name": "run_task_template", "arguments": map[string]any{
		"templateId": "dev_echo", "inputs": map[string]any{"items": 100, "sleepMs": 100}, "options": map[string]any{"mode": "async"}}}, modernOpts{})
	lid := long.result["taskId"].(string)
	for i := 0; i < 2; i++ {
		ack := c.call("tasks/cancel", map[string]any{"taskId": lid}, modernOpts{})
		if ack.result == nil || ack.result["resultType"] != "complete" || len(ack.result) > 2 {
			t.Fatalf("tasks/cancel #%d: %s", i+1, ack.raw)
		}
	}
	if got := c.pollTask(lid, terminalStatus); got["status"] != "cancelled" || got["result"] != nil {
		t.Fatalf("cancelled task = %v", got)
	}
}

// TestModernRequestsPassTheGuards: 2026-07-28 requests meet the same
// Host, Origin and token checks as the older ones.
func TestModernRequestsPassTheGuards(t *testing.T) {
	c := newModernServer(t, newEngine(t, engine.Config{}), HTTPOptions{Token: "s3cret"})
	if r := c.call("tools/list", nil, modernOpts{}); r.status != 200 {
		t.Fatalf("with the token: %d %s", r.status, r.raw)
	}
	for _, tc := range []struct {
		header map[string]string
		want   int
	}{
		{map[string]string{"Authorization": ""}, 401},
		{map[string]string{"Authorization": "Bearer wrong"}, 401},
		{map[string]string{"Origin": "https://evil.example"}, 403},
	} {
		if r := c.call("tools/list", nil, modernOpts{header: tc.header}); r.status != tc.want {
			t.Errorf("%v: %d, want %d (%s)", tc.header, r.status, tc.want, r.raw)
		}
	}
	req, _ := http.NewRequest(http.MethodPost, c.url, strings.NewReader(`{}`))
	req.Host = "evil.example"
	req.Header.Set("MCP-Protocol-Version", modernVersion)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 403 {
		t.Errorf("Host evil.example: %d", resp.StatusCode)
	}
}

// TestStdioServesBothGenerations: on stdio one session answers a
// 2025-11-25 client and 2026-07-28 requests, each in its own dialect.
func TestStdioServesBothGenerations(t *testing.T) {
	p, cancel := startStdio(t, newEngine(t, engine.Config{}))
	defer cancel()
	modern := func(id int, method string, params string) string {
		return fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":%q,"params":{%s"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{"extensions":{"io.modelcontextprotocol/tasks":{}}}}}}`, id, method, params)
	}
	p.send(t, modern(1, "server/discover", ""))
	d := p.next(t)["result"].(map[string]any)
	if d["resultType"] != "complete" || !strings.Contains(fmt.Sprint(d["supportedVersions"]), "2026-07-28") {
		t.Fatalf("discover over stdio: %v", d)
	}
	p.send(t, modern(2, "tools/call", `"name":"run_task_template","arguments":{"templateId":"dev_echo","inputs":{"items":2,"sleepMs":50},"options":{"mode":"async"}},`))
	created := p.next(t)["result"].(map[string]any)
	if created["resultType"] != "task" {
		t.Fatalf("task over stdio: %v", created)
	}
	id := created["taskId"].(string)
	// How long the task takes is not the promise: the wait ends near the
	// test's deadline (fixture.Context).
	ctx, cancelWait := fixture.Context(t)
	defer cancelWait()
	for n := 3; ; n++ {
		p.send(t, modern(n, "tasks/get", fmt.Sprintf(`"taskId":%q,`, id)))
		got := p.next(t)["result"].(map[string]any)
		if got["status"] == "completed" {
			break
		}
		select {
		case <-ctx.Done():
			t.Fatalf("task over stdio stayed %v until near the test's deadline", got["status"])
		case <-time.After(50 * time.Millisecond):
		}
	}
	p.send(t, modern(100, "tasks/list", ""))
	if e := p.next(t)["error"].(map[string]any); e["code"] != float64(-32601) {
		t.Fatalf("tasks/list on 2026-07-28 over stdio: %v", e)
	}
}

// TestGoClientModernOverHTTP: the go-sdk v1.8 client in its modern mode
// (server/discover, stateless requests) lists the tools and runs a
// template over HTTP (issue 10, acceptance 3).
func TestGoClientModernOverHTTP(t *testing.T) {
	c := newModernServer(t, newEngine(t, engine.Config{}), HTTPOptions{})
	ctx, cancel := fixture.Context(t)
	defer cancel()
	client := sdk.NewClient(&sdk.Implementation{Name: "modern-go", Version: "1"}, nil)
	cs, err := client.Connect(ctx, &sdk.StreamableClientTransport{Endpoint: c.url}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	if v := cs.InitializeResult().ProtocolVersion; v != modernVersion {
		t.Fatalf("negotiated %q, want %s", v, modernVersion)
	}
	if cs.ID() != "" {
		t.Errorf("a stateless client got session id %q", cs.ID())
	}
	list, err := cs.ListTools(ctx, nil)
	if err != nil || len(list.Tools) < 14 {
		t.Fatalf("tools/list: %v (%d tools)", err, len(list.Tools))
	}
	res, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: "run_task_template", Arguments: map[string]any{
		"templateId": "dev_echo", "inputs": map[string]any{"items": 2}, "options": map[string]any{"mode": "sync"}}})
	if err != nil || res.IsError {
		t.Fatalf("run_task_template: %v %+v", err, res)
	}
	b, _ := json.Marshal(res.StructuredContent)
	var run engine.Run
	if err := json.Unmarshal(b, &run); err != nil || run.Status != engine.StatusSucceeded || string(run.Result) != `{"items":2}` {
		t.Fatalf("run = %s (%v)", b, err)
	}
}

// TestNoFixturesWithoutAPlugin: without ServerOptions.Plugin (the cli
// sets one with --dev-templates) none of the conformance fixtures exists,
// and prompts are not served.
func TestNoFixturesWithoutAPlugin(t *testing.T) {
	srv := NewServer(newEngine(t, engine.Config{}), ServerOptions{Version: "test"})
	ts := httptest.NewServer(srv.HTTPHandler(HTTPOptions{}))
	t.Cleanup(ts.Close)
	c := &modernClient{t: t, url: ts.URL + "/mcp"}
	list := c.call("tools/list", nil, modernOpts{})
	tools, _ := list.result["tools"].([]any)
	if len(tools) != 16 {
		t.Fatalf("tools without fixtures: %d (%s)", len(tools), list.raw)
	}
	for _, name := range []string{"greet", "slow_compute", "test_simple_text"} {
		if r := c.call("tools/call", map[string]any{"name": name}, modernOpts{}); r.code() != -32602 {
			t.Errorf("%s without fixtures: %s", name, r.raw)
		}
	}
	if r := c.call("prompts/list", nil, modernOpts{}); r.code() != -32601 {
		t.Errorf("prompts/list without fixtures: %s", r.raw)
	}
	if r := c.call("resources/read", map[string]any{"uri": "test://static-text"}, modernOpts{header: map[string]string{"Mcp-Name": "test://static-text"}}); r.code() == 0 {
		t.Errorf("the fixture resource exists without fixtures: %s", r.raw)
	}
}
