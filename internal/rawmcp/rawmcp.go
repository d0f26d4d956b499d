// Package rawmcp speaks MCP's Streamable HTTP transport byte by byte for
// tests that check what an SDK client would hide: status codes, session
// headers, timeouts and guards.
package rawmcp

import (
	"context"
	"io"
	"net/http"
	"strings"
	"testing"
)

// InitializeBody is a 2025-11-25 initialize request.
const InitializeBody = `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}`

// Post sends one JSON-RPC body to http://addr/mcp on session sid ("" for
// none) and returns the status, the body and the Mcp-Session-Id header.
func Post(ctx context.Context, addr, sid, body string) (int, string, string, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, "http://"+addr+"/mcp", strings.NewReader(body))
	if err != nil {
		return 0, "", "", err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	if sid != "" {
		req.Header.Set("Mcp-Session-Id", sid)
		req.Header.Set("Mcp-Protocol-Version", "2025-11-25")
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0, "", "", err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b), resp.Header.Get("Mcp-Session-Id"), err
}

// OpenSession initializes an MCP session at addr and returns its id.
func OpenSession(t testing.TB, addr string) string {
	t.Helper()
	code, body, sid, err := Post(context.Background(), addr, "", InitializeBody)
	if err != nil || code != 200 || sid == "" {
		t.Fatalf("initialize: %d %v %.200s", code, err, body)
	}
	if code, body, _, err := Post(context.Background(), addr, sid, `{"jsonrpc":"2.0","method":"notifications/initialized"}`); err != nil || code != 202 {
		t.Fatalf("initialized: %d %v %.200s", code, err, body)
	}
	return sid
}

// Initialize posts InitializeBody to url with Host host ("" for the URL's)
// and the given headers, and returns the status code and body.
func Initialize(t testing.TB, url string, host string, hdr map[string]string) (int, string) {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, url, strings.NewReader(InitializeBody))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	for k, v := range hdr {
		req.Header.Set(k, v)
	}
	if host != "" {
		req.Host = host
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("POST %s: %v", url, err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<16))
	return resp.StatusCode, string(b)
}
