package cli

import (
	"strings"
	"testing"
)

// TestBrowserPoolFlag: --browser (and BROWSERTASK_BROWSER) take a pool of
// endpoints with capacity=N items; a misplaced or bad capacity is refused
// at startup naming the flag and showing the syntax.
func TestBrowserPoolFlag(t *testing.T) {
	env := func(string) string { return "" }
	c, err := parseFlags("serve", []string{"--browser", "http://127.0.0.1:9222,capacity=4, ws://127.0.0.1:9333/devtools/browser/x"}, env, nil)
	if err != nil || c.browsers == "" {
		t.Fatalf("a pool with a capacity: %v", err)
	}
	for _, bad := range []struct{ value, want string }{
		{"capacity=4,http://127.0.0.1:9222", `--browser: "capacity=4" must follow the endpoint it applies to`},
		{"http://127.0.0.1:9222,capacity=0", `--browser: "capacity=0": capacity must be a whole number of tabs from 1 to 10000, e.g. http://127.0.0.1:9222,capacity=4`},
	} {
		_, err := parseFlags("serve", []string{"--browser", bad.value}, env, nil)
		if err == nil || !strings.Contains(err.Error(), bad.want) {
			t.Errorf("--browser %s: %v, want %q", bad.value, err, bad.want)
		}
	}
	envBad := func(k string) string {
		if k == "BROWSERTASK_BROWSER" {
			return "http://127.0.0.1:9222,capacity=x"
		}
		return ""
	}
	if _, err := parseFlags("serve", nil, envBad, nil); err == nil || !strings.Contains(err.Error(), "--browser: \"capacity=x\"") {
		t.Errorf("BROWSERTASK_BROWSER with capacity=x: %v", err)
	}
}
