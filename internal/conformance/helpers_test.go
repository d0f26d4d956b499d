package conformance

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/browsertask/browsertask/db"
	"github.com/browsertask/browsertask/engine"
	"github.com/browsertask/browsertask/internal/devtpl"
	"github.com/browsertask/browsertask/mcp"
)

// The fixtures are tested as the suite meets them: the real engine on a
// temporary SQLite file with the dev templates (dev_tool_job is the body
// of the task tools), the real MCP server with the fixtures plugged in,
// and raw 2026-07-28 requests over HTTP.

// modernVersion is the protocol version of the requests.
const modernVersion = "2026-07-28"

// startEngine runs the real engine with the dev templates on the database
// file path ("" for a new one) until the test ends.
func startEngine(t *testing.T, path string) *engine.Engine {
	t.Helper()
	if path == "" {
		path = filepath.Join(t.TempDir(), "bt.db")
	}
	store, err := db.Open(context.Background(), path)
	if err != nil {
		t.Fatal(err)
	}
	eng, err := engine.New(engine.Options{Store: store,
		Templates: []engine.Template{devtpl.Echo{}, devtpl.ToolJob{}},
		Config:    engine.Config{PollInterval: 20 * time.Millisecond, ShutdownGrace: 100 * time.Millisecond},
		Logger:    slog.New(slog.DiscardHandler), Version: "test", ProtocolVersions: mcp.ProtocolVersions()})
	if err != nil {
		store.Close()
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { _ = eng.Run(ctx); close(done) }()
	t.Cleanup(func() {
		cancel()
		<-done
		store.Close()
	})
	return eng
}

// client sends raw 2026-07-28 requests to the /mcp endpoint of a server
// with the fixtures.
type client struct {
	t   *testing.T
	url string
	ids atomic.Int64
}

// newServer serves eng with the fixtures plugged in over HTTP.
func newServer(t *testing.T, eng *engine.Engine) *client {
	t.Helper()
	srv := mcp.NewServer(eng, mcp.ServerOptions{Version: "test", Plugin: New()})
	ts := httptest.NewServer(srv.HTTPHandler(mcp.HTTPOptions{}))
	t.Cleanup(ts.Close)
	return &client{t: t, url: ts.URL + "/mcp"}
}

// reply is a decoded answer.
type reply struct {
	status int
	result map[string]any
	err    map[string]any
	raw    string
}

// code is the JSON-RPC error code of r (0 without error).
func (r reply) code() int {
	n, _ := r.err["code"].(float64)
	return int(n)
}

// allCaps are the client capabilities of a client that declared
// elicitation, sampling and the Tasks extension.
func allCaps() map[string]any {
	return map[string]any{"elicitation": map[string]any{}, "sampling": map[string]any{},
		"extensions": map[string]any{"io.modelcontextprotocol/tasks": map[string]any{}}}
}

// call sends method with params, _meta carrying caps as the client
// capabilities, and the headers of a 2026-07-28 request.
func (c *client) call(method string, params, caps map[string]any) reply {
	c.t.Helper()
	if params == nil {
		params = map[string]any{}
	}
	params["_meta"] = map[string]any{
		"io.modelcontextprotocol/protocolVersion":    modernVersion,
		"io.modelcontextprotocol/clientInfo":         map[string]any{"name": "conformance-test", "version": "1"},
		"io.modelcontextprotocol/clientCapabilities": caps,
	}
	id := c.ids.Add(1)
	body, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": id, "method": method, "params": params})
	req, _ := http.NewRequest(http.MethodPost, c.url, strings.NewReader(string(body)))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("MCP-Protocol-Version", modernVersion)
	req.Header.Set("Mcp-Method", method)
	for _, key := range []string{"name", "taskId", "uri"} {
		if v, ok := params[key].(string); ok {
			req.Header.Set("Mcp-Name", v)
		}
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		c.t.Fatalf("%s: %v", method, err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	r := reply{status: resp.StatusCode, raw: string(b)}
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

// task is tasks/get of id, after eng saw the run terminal (or, with
// orInput, waiting for input): the engine's wait wakes on the run's own
// changes, so nothing here polls on a clock.
func (c *client) task(eng *engine.Engine, id string, orInput bool) map[string]any {
	c.t.Helper()
	wait := eng.Wait
	if orInput {
		wait = eng.WaitSettled
	}
	if _, err := wait(c.t.Context(), id, nil); err != nil {
		c.t.Fatalf("wait for run %s: %v", id, err)
	}
	r := c.call("tasks/get", map[string]any{"taskId": id}, allCaps())
	if r.result == nil {
		c.t.Fatalf("tasks/get %s: %d %s", id, r.status, r.raw)
	}
	return r.result
}

// taskID is the taskId of a CreateTaskResult, failing the test otherwise.
func taskID(t *testing.T, r reply) string {
	t.Helper()
	id, _ := r.result["taskId"].(string)
	if r.result["resultType"] != "task" || !strings.HasPrefix(id, "run_") {
		t.Fatalf("want a CreateTaskResult, got %d %s", r.status, r.raw)
	}
	return id
}
