package mcp

import (
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"strings"

	"github.com/browsertask/browsertask/internal/httpguard"
)

// originGuard rejects cross-site and DNS-rebinding requests before they
// reach the MCP handler. The Host check is httpguard.HostAllowed, the one
// the dashboard uses too (the SDK's own copy is off, see HTTPHandler). The
// SDK does not check Origin; a web page (including one opened by our own
// Chromium) must not be able to drive the API from the user's browser.
type originGuard struct {
	allowed map[string]bool
	log     *slog.Logger
}

// newOriginGuard builds a guard allowing the daemon's own origins plus extra.
func newOriginGuard(extra []string, log *slog.Logger) *originGuard {
	g := &originGuard{allowed: map[string]bool{}, log: log}
	for _, o := range extra {
		if n, ok := normalizeOrigin(o); ok {
			g.allowed[n] = true
		}
	}
	return g
}

// wrap puts the guard in front of next.
func (g *originGuard) wrap(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !httpguard.HostAllowed(r) {
			g.log.Warn("rejected request with non-loopback Host", "host", r.Host, "remote", r.RemoteAddr)
			http.Error(w, "Forbidden: invalid Host header", http.StatusForbidden)
			return
		}
		if origin := r.Header.Get("Origin"); origin != "" && !g.originAllowed(r, origin) {
			g.log.Warn("rejected request from a foreign Origin", "origin", origin, "remote", r.RemoteAddr)
			http.Error(w, "Forbidden: origin not allowed", http.StatusForbidden)
			return
		}
		next.ServeHTTP(w, r)
	})
}

// originAllowed accepts the daemon's own origins - http on 127.0.0.1,
// localhost or [::1] at the port the request arrived on - and the
// configured extra origins. Anything else, including "null", is refused.
func (g *originGuard) originAllowed(r *http.Request, origin string) bool {
	n, ok := normalizeOrigin(origin)
	if !ok {
		return false
	}
	if g.allowed[n] {
		return true
	}
	u, _ := url.Parse(n)
	if u.Scheme != "http" || !httpguard.IsLoopbackHost(u.Hostname()) {
		return false
	}
	local, ok := r.Context().Value(http.LocalAddrContextKey).(net.Addr)
	if !ok || local == nil {
		return false
	}
	_, port, err := net.SplitHostPort(local.String())
	want := u.Port()
	if want == "" {
		want = "80"
	}
	return err == nil && want == port
}

// normalizeOrigin lower-cases scheme and host and drops a default port, so
// "HTTP://LocalHost:80" and "http://localhost" compare equal.
func normalizeOrigin(o string) (string, bool) {
	u, err := url.Parse(strings.TrimSpace(o))
	if err != nil || u.Scheme == "" || u.Host == "" {
		return "", false
	}
	scheme := strings.ToLower(u.Scheme)
	host := strings.ToLower(u.Hostname())
	port := u.Port()
	if (scheme == "http" && port == "80") || (scheme == "https" && port == "443") {
		port = ""
	}
	if strings.Contains(host, ":") {
		host = "[" + host + "]"
	}
	if port != "" {
		host += ":" + port
	}
	return scheme + "://" + host, true
}
