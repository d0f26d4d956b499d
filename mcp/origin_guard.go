package mcp

import (
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"strings"
)

// originGuard rejects cross-site and DNS-rebinding requests before they
// reach the MCP handler. The SDK checks Host but not Origin; a web page
// (including one opened by our own Chromium) must not be able to drive the
// API from the user's browser.
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
		if !HostAllowed(r) {
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

// HostAllowed is the DNS-rebinding check the MCP endpoint and the
// dashboard share: a request that arrived on a loopback address must name a
// loopback host. (Requests on other interfaces need a token, see
// ListenAddrCheck.)
func HostAllowed(r *http.Request) bool {
	local, ok := r.Context().Value(http.LocalAddrContextKey).(net.Addr)
	if !ok || local == nil {
		return true
	}
	lhost, _, err := net.SplitHostPort(local.String())
	if err != nil || !isLoopbackHost(lhost) {
		return true
	}
	host := r.Host
	if h, _, err := net.SplitHostPort(host); err == nil {
		host = h
	}
	return isLoopbackHost(host)
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
	if u.Scheme != "http" || !isLoopbackHost(u.Hostname()) {
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
