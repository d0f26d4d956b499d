package cli

import (
	"io"
	"testing"
)

// TestUserAgentFlag: --user-agent sets the engine's default User-Agent
// for page requests (the profile's userAgent), on every command that
// runs an engine; without it none is set.
func TestUserAgentFlag(t *testing.T) {
	getenv := func(string) string { return "" }
	for _, cmd := range []string{"serve", "mcp", "run"} {
		c, err := parseFlags(cmd, []string{"--user-agent", "ExampleBot/1.0 (+https://example.com/bot)"}, getenv, io.Discard)
		if err != nil {
			t.Fatalf("%s: %v", cmd, err)
		}
		if c.engine.UserAgent != "ExampleBot/1.0 (+https://example.com/bot)" {
			t.Fatalf("%s: engine UserAgent %q", cmd, c.engine.UserAgent)
		}
	}
	c, err := parseFlags("serve", nil, getenv, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if c.engine.UserAgent != "" {
		t.Fatalf("without the flag the UserAgent is %q, want empty", c.engine.UserAgent)
	}
}
