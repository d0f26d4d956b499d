package acceptance

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/browsertask/browsertask/internal/rawmcp"
)

// TestBlackboxHTTPIdleSessionClosed: `serve --mcp-session-idle-ms` closes
// an MCP session its client left without DELETE; the client's next request
// gets 404 (and a client re-initializes, as the MCP spec says).
func TestBlackboxHTTPIdleSessionClosed(t *testing.T) {
	t.Parallel()
	// 2 s: far longer than any pause between the pings below, even on a
	// loaded machine.
	p := startServe(t, "--mcp-session-idle-ms", "2000")
	kept := rawmcp.OpenSession(t, p.addr)
	left := rawmcp.OpenSession(t, p.addr)
	// kept is used more often than the timeout, left not at all.
	deadline := time.Now().Add(30 * time.Second)
	for !p.logLine("closed idle MCP HTTP session", left) {
		if time.Now().After(deadline) {
			t.Fatalf("no log of session %s closing in 30 s", left)
		}
		if code, body, _, err := rawmcp.Post(context.Background(), p.addr, kept, `{"jsonrpc":"2.0","id":3,"method":"ping"}`); err != nil || code != 200 {
			t.Fatalf("ping on the session in use: %d %v %.200s", code, err, body)
		}
		time.Sleep(100 * time.Millisecond)
	}
	if code, body, _, err := rawmcp.Post(context.Background(), p.addr, left, `{"jsonrpc":"2.0","id":4,"method":"tools/list"}`); err != nil || code != 404 {
		t.Fatalf("request on the idle-closed session: %d %v %.200s, want 404", code, err, body)
	}
	if code, body, _, err := rawmcp.Post(context.Background(), p.addr, kept, `{"jsonrpc":"2.0","id":5,"method":"tools/list"}`); err != nil || code != 200 || !strings.Contains(body, "run_task_template") {
		t.Fatalf("session in use: %d %v %.200s", code, err, body)
	}
	if p.logLine("closed idle MCP HTTP session", kept) {
		t.Fatal("the session in use was closed")
	}
}
