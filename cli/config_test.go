package cli

import (
	"strings"
	"testing"
	"time"
)

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
	if _, err := parseFlags("serve", []string{"--input-timeout-ms", "0"}, env, nil); err == nil || !strings.Contains(err.Error(), "--input-timeout-ms must be >= 1") {
		t.Fatalf("--input-timeout-ms 0: %v", err)
	}
	if c, err := parseFlags("serve", []string{"--input-timeout-ms", "5000"}, env, nil); err != nil || c.engine.QuestionTimeout != 5*time.Second {
		t.Fatalf("--input-timeout-ms 5000: %v", err)
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
