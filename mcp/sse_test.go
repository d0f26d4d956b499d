package mcp

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/browsertask/browsertask/engine"
	"github.com/browsertask/browsertask/internal/fixture"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// newSSEServer serves SSEHandler(opts) at /sse of a test server.
func newSSEServer(t *testing.T, opts HTTPOptions) *httptest.Server {
	t.Helper()
	srv := NewServer(newEngine(t, engine.Config{}), ServerOptions{Version: "test"})
	mux := http.NewServeMux()
	mux.Handle("/sse", srv.SSEHandler(opts))
	ts := httptest.NewServer(mux)
	t.Cleanup(ts.Close)
	return ts
}

// TestSSEClientListsAndCalls: a 2024-11-05 client on the deprecated
// HTTP+SSE transport sees the same tools and gets answers.
func TestSSEClientListsAndCalls(t *testing.T) {
	ts := newSSEServer(t, HTTPOptions{})
	ctx, cancel := fixture.Context(t)
	defer cancel()
	c := sdk.NewClient(&sdk.Implementation{Name: "sse-test", Version: "1"}, nil)
	cs, err := c.Connect(ctx, &sdk.SSEClientTransport{Endpoint: ts.URL + "/sse"}, nil)
	if err != nil {
		t.Fatalf("connect over SSE: %v", err)
	}
	defer cs.Close()
	tools, err := cs.ListTools(ctx, nil)
	if err != nil {
		t.Fatalf("tools/list: %v", err)
	}
	names := map[string]bool{}
	for _, tool := range tools.Tools {
		names[tool.Name] = true
	}
	if !names["run_task_template"] || !names["get_runtime_profile"] {
		t.Fatalf("tools over SSE: %v", names)
	}
	res, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: "get_runtime_profile", Arguments: map[string]any{}})
	if err != nil || res.IsError || len(res.Content) == 0 {
		t.Fatalf("get_runtime_profile over SSE: %v %+v", err, res)
	}
	if text := res.Content[1].(*sdk.TextContent).Text; !strings.Contains(text, `"maxConcurrentRuns"`) {
		t.Fatalf("get_runtime_profile over SSE: %.200s", text)
	}
}

// TestSSEGuards: /sse refuses what /mcp refuses — a foreign Host (DNS
// rebinding), a foreign Origin, a missing or wrong token — before any
// stream opens.
func TestSSEGuards(t *testing.T) {
	open := func(ts *httptest.Server, mutate func(*http.Request)) int {
		t.Helper()
		ctx, cancel := fixture.Context(t)
		defer cancel()
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, ts.URL+"/sse", nil)
		req.Header.Set("Accept", "text/event-stream")
		mutate(req)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	ts := newSSEServer(t, HTTPOptions{})
	for name, c := range map[string]struct {
		mutate func(*http.Request)
		want   int
	}{
		"own":            {func(*http.Request) {}, http.StatusOK},
		"foreign host":   {func(r *http.Request) { r.Host = "evil.example" }, http.StatusForbidden},
		"foreign origin": {func(r *http.Request) { r.Header.Set("Origin", "http://evil.example") }, http.StatusForbidden},
	} {
		if got := open(ts, c.mutate); got != c.want {
			t.Errorf("%s: GET /sse answered %d, want %d", name, got, c.want)
		}
	}
	tok := newSSEServer(t, HTTPOptions{Token: "s3cret"})
	if got := open(tok, func(*http.Request) {}); got != http.StatusUnauthorized {
		t.Errorf("without the token: %d, want 401", got)
	}
	if got := open(tok, func(r *http.Request) { r.Header.Set("Authorization", "Bearer wrong") }); got != http.StatusUnauthorized {
		t.Errorf("with a wrong token: %d, want 401", got)
	}
	if got := open(tok, func(r *http.Request) { r.Header.Set("Authorization", "Bearer s3cret") }); got != http.StatusOK {
		t.Errorf("with the token: %d, want 200", got)
	}
}
