package main

import (
	"context"
	"strings"
	"testing"
	"time"
)

// TestBlackboxHTTPIdleSessionClosed: `serve --mcp-session-idle-ms` closes
// an MCP session its client left without DELETE; the client's next request
// gets 404 (and a client re-initializes, as the MCP spec says).
func TestBlackboxHTTPIdleSessionClosed(t *testing.T) {
	t.Parallel()
	// 2 s: far longer than any pause between the pings below, even on a
	// loaded machine.
	p := startServe(t, "--mcp-session-idle-ms", "2000")
	kept := openMCPSession(t, p.addr)
	left := openMCPSession(t, p.addr)
	// kept is used more often than the timeout, left not at all.
	deadline := time.Now().Add(30 * time.Second)
	for !p.logLine("closed idle MCP HTTP session", left) {
		if time.Now().After(deadline) {
			t.Fatalf("no log of session %s closing in 30 s", left)
		}
		if code, body, _, err := mcpPost(context.Background(), p.addr, kept, `{"jsonrpc":"2.0","id":3,"method":"ping"}`); err != nil || code != 200 {
			t.Fatalf("ping on the session in use: %d %v %.200s", code, err, body)
		}
		time.Sleep(100 * time.Millisecond)
	}
	if code, body, _, err := mcpPost(context.Background(), p.addr, left, `{"jsonrpc":"2.0","id":4,"method":"tools/list"}`); err != nil || code != 404 {
		t.Fatalf("request on the idle-closed session: %d %v %.200s, want 404", code, err, body)
	}
	if code, body, _, err := mcpPost(context.Background(), p.addr, kept, `{"jsonrpc":"2.0","id":5,"method":"tools/list"}`); err != nil || code != 200 || !strings.Contains(body, "run_task_template") {
		t.Fatalf("session in use: %d %v %.200s", code, err, body)
	}
	if p.logLine("closed idle MCP HTTP session", kept) {
		t.Fatal("the session in use was closed")
	}
}

func TestMCPSessionIdleFlag(t *testing.T) {
	env := func(string) string { return "" }
	for _, c := range []struct {
		args []string
		want time.Duration
	}{
		{nil, 30 * time.Minute},
		{[]string{"--mcp-session-idle-ms", "1500"}, 1500 * time.Millisecond},
		{[]string{"--mcp-session-idle-ms", "0"}, -1},
	} {
		cfg, err := parseFlags("serve", c.args, env, nil)
		if err != nil {
			t.Fatal(err)
		}
		if got := cfg.mcpSessionTimeout(); got != c.want {
			t.Errorf("%v: session timeout %v, want %v", c.args, got, c.want)
		}
	}
	_, err := parseFlags("serve", []string{"--mcp-session-idle-ms", "-1"}, env, nil)
	if err == nil || !strings.Contains(err.Error(), "--mcp-session-idle-ms must be >= 0") {
		t.Fatalf("negative value: %v", err)
	}
	cfg, err := parseFlags("mcp", nil, func(k string) string {
		if k == "BROWSERTASK_MCP_SESSION_IDLE_MS" {
			return "60000"
		}
		return ""
	}, nil)
	if err != nil || cfg.mcpSessionTimeout() != time.Minute {
		t.Fatalf("from the environment: %v %v", err, cfg)
	}
}
