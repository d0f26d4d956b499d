package mcp

import (
	"net/http"
	"strings"
	"testing"
)

// TestHTTPHostCheck: host names are case-insensitive, and /mcp answers them
// as the dashboard does (web's TestDashboardHostCheck has the same table;
// both call httpguard.HostAllowed).
func TestHTTPHostCheck(t *testing.T) {
	ts, _ := newHTTPServer(t, HTTPOptions{})
	for host, want := range map[string]int{
		"LOCALHOST":           200,
		"Localhost:7788":      200,
		"127.0.0.1":           200,
		"[::1]":               200,
		"[::1]:7788":          200,
		"evil.example":        403,
		"localhost.evil.test": 403,
	} {
		code, body, _ := post(t, ts, initBody, func(r *http.Request) { r.Host = host })
		if code != want {
			t.Errorf("POST /mcp with Host %q: %d, want %d (%s)", host, code, want, strings.TrimSpace(body))
		}
	}
}
