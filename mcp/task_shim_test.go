package mcp

import (
	"bufio"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"reflect"
	"strings"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestSDKStillDropsTask guards task_shim.go: it fails when the SDK starts to
// keep tools/call's params.task itself. Then the shim (and takeTaskParams)
// should be replaced by the SDK's own Tasks support.
func TestSDKStillDropsTask(t *testing.T) {
	raw := []byte(`{"name":"run_task_template","arguments":{},"task":{"ttl":60000}}`)
	for _, p := range []any{&sdk.CallToolParamsRaw{}, &sdk.CallToolParams{}} {
		if err := json.Unmarshal(raw, p); err != nil {
			t.Fatal(err)
		}
		out, err := json.Marshal(p)
		if err != nil {
			t.Fatal(err)
		}
		if strings.Contains(string(out), `"task"`) {
			t.Fatalf("the SDK now keeps params.task (%T re-encodes as %s): replace task_shim.go by the SDK's Tasks support", p, out)
		}
		typ := reflect.TypeOf(p).Elem()
		for i := 0; i < typ.NumField(); i++ {
			if tag := typ.Field(i).Tag.Get("json"); strings.HasPrefix(tag, "task,") || tag == "task" {
				t.Fatalf("%s has a field %s for params.task: replace task_shim.go", typ, typ.Field(i).Name)
			}
		}
	}
}

func TestLiftTaskParams(t *testing.T) {
	cases := []struct {
		name, in string
		changed  bool
		wantTask string // JSON of _meta[taskMetaKey], "" = absent
	}{
		{"no task", `{"name":"x","arguments":{}}`, false, ""},
		{"task in arguments only", `{"name":"x","arguments":{"task":1}}`, false, ""},
		{"task", `{"name":"x","task":{"ttl":5}}`, true, `{"ttl":5}`},
		{"empty task", `{"name":"x","task":{}}`, true, `{}`},
		{"null task", `{"name":"x","task":null}`, true, ""},
		{"meta kept", `{"name":"x","_meta":{"progressToken":"p"},"task":{}}`, true, `{}`},
		{"not an object", `["task"]`, false, ""},
	}
	for _, c := range cases {
		out, changed := liftTaskParams(json.RawMessage(c.in))
		if changed != c.changed {
			t.Fatalf("%s: changed = %v", c.name, changed)
		}
		if !changed {
			if string(out) != c.in {
				t.Fatalf("%s: params changed to %s", c.name, out)
			}
			continue
		}
		var obj struct {
			Task *json.RawMessage           `json:"task"`
			Meta map[string]json.RawMessage `json:"_meta"`
		}
		if err := json.Unmarshal(out, &obj); err != nil {
			t.Fatal(err)
		}
		if obj.Task != nil {
			t.Fatalf("%s: task still in params: %s", c.name, out)
		}
		if got := string(obj.Meta[taskMetaKey]); got != c.wantTask {
			t.Fatalf("%s: lifted task = %q, want %q", c.name, got, c.wantTask)
		}
		if strings.Contains(c.in, "progressToken") && string(obj.Meta["progressToken"]) != `"p"` {
			t.Fatalf("%s: other _meta lost: %s", c.name, out)
		}
	}
}

func TestLiftTaskInBody(t *testing.T) {
	batch := `[{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"a","task":{"ttl":1}}},` +
		`{"jsonrpc":"2.0","id":2,"method":"tools/list","params":{"task":{}}}]`
	out := liftTaskInBody([]byte(batch))
	var msgs []map[string]any
	if err := json.Unmarshal(out, &msgs); err != nil || len(msgs) != 2 {
		t.Fatalf("batch rewrite: %s, %v", out, err)
	}
	p0 := msgs[0]["params"].(map[string]any)
	if _, has := p0["task"]; has || p0["_meta"].(map[string]any)[taskMetaKey] == nil {
		t.Fatalf("tools/call in batch not lifted: %v", p0)
	}
	if _, has := msgs[1]["params"].(map[string]any)["task"]; !has {
		t.Fatalf("other methods must be left alone: %v", msgs[1])
	}
	for _, body := range []string{`not json "task"`, `{"jsonrpc":"2.0","id":1,"method":"ping"}`} {
		if got := string(liftTaskInBody([]byte(body))); got != body {
			t.Fatalf("body %q rewritten to %q", body, got)
		}
	}
}

// TestTaskOverHTTP sends a raw task-augmented tools/call through the HTTP
// handler: the body shim must lift params.task.
func TestTaskOverHTTP(t *testing.T) {
	eng := newEngine(t, taskTestConfig())
	srv := NewServer(eng, ServerOptions{Version: "test"})
	ts := httptest.NewServer(srv.HTTPHandler(HTTPOptions{}))
	t.Cleanup(ts.Close)
	h := &httpPeer{t: t, url: ts.URL + "/mcp", client: ts.Client()}
	h.rpc(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}`)
	h.rpc(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	m := h.rpc(`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"run_task_template",` +
		`"arguments":{"templateId":"dev_echo","inputs":{"items":3,"sleepMs":20}},"task":{"ttl":600000}}}`)
	task, _ := m["result"].(map[string]any)["task"].(map[string]any)
	if task == nil || task["status"] != taskWorking || task["ttl"] != float64(600000) {
		t.Fatalf("CreateTaskResult over HTTP: %v", m)
	}
	m = h.rpc(`{"jsonrpc":"2.0","id":3,"method":"tasks/result","params":{"taskId":"` + task["taskId"].(string) + `"}}`)
	res := m["result"].(map[string]any)
	if res["structuredContent"].(map[string]any)["status"] != "succeeded" {
		t.Fatalf("tasks/result over HTTP: %v", m)
	}
	m = h.rpc(`{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"list_task_runs","arguments":{},"task":{}}}`)
	if e, _ := m["error"].(map[string]any); e == nil || e["code"] != float64(-32601) {
		t.Fatalf("task on list_task_runs over HTTP: %v", m)
	}
}

// httpPeer is a raw Streamable HTTP client for one session.
type httpPeer struct {
	t       *testing.T
	url     string
	client  *http.Client
	session string
}

// rpc posts one message and returns the JSON-RPC answer (nil for a
// notification), reading JSON or the first SSE message event.
func (h *httpPeer) rpc(body string) map[string]any {
	h.t.Helper()
	req, _ := http.NewRequest(http.MethodPost, h.url, strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	if h.session != "" {
		req.Header.Set("Mcp-Session-Id", h.session)
		req.Header.Set("Mcp-Protocol-Version", "2025-11-25")
	}
	h.client.Timeout = 20 * time.Second
	resp, err := h.client.Do(req)
	if err != nil {
		h.t.Fatal(err)
	}
	defer resp.Body.Close()
	if id := resp.Header.Get("Mcp-Session-Id"); id != "" {
		h.session = id
	}
	if resp.StatusCode == http.StatusAccepted {
		return nil
	}
	if resp.StatusCode != http.StatusOK {
		b, _ := io.ReadAll(resp.Body)
		h.t.Fatalf("POST %s: %d %s", body, resp.StatusCode, b)
	}
	var data string
	if strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
		sc := bufio.NewScanner(resp.Body)
		sc.Buffer(make([]byte, 1<<20), 1<<20)
		for sc.Scan() {
			if d, ok := strings.CutPrefix(sc.Text(), "data: "); ok && strings.Contains(d, `"id"`) {
				data = d
				break
			}
		}
	} else {
		b, _ := io.ReadAll(resp.Body)
		data = string(b)
	}
	var m map[string]any
	if err := json.Unmarshal([]byte(data), &m); err != nil {
		h.t.Fatalf("answer %q: %v", data, err)
	}
	return m
}
