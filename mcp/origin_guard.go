package mcp

import (
	"log/slog"
	"net/http"

	"github.com/browsertask/browsertask/internal/httpguard"
)

// originGuard rejects cross-site and DNS-rebinding requests before they
// reach the MCP handler. Host and Origin are judged by httpguard
// (HostAllowed, OriginRule), the same checks the dashboard makes, so the
// two endpoints accept exactly the same requests (the SDK's own Host
// check is off, see HTTPHandler). The SDK does not check Origin; a web
// page (including one opened by our own Chromium) must not be able to
// drive the API from the user's browser.
type originGuard struct {
	origins *httpguard.OriginRule
	log     *slog.Logger
}

// newOriginGuard builds a guard allowing a request's own origin plus
// extra. An entry of extra that is not an origin is logged and ignored
// (the command line refuses it before the server starts).
func newOriginGuard(extra []string, log *slog.Logger) *originGuard {
	rule, err := httpguard.NewOriginRule(extra)
	if err != nil {
		log.Warn("allowed origins: entries ignored", "error", err)
	}
	return &originGuard{origins: rule, log: log}
}

// wrap puts the guard in front of next.
func (g *originGuard) wrap(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !httpguard.HostAllowed(r) {
			g.log.Warn("rejected request with non-loopback Host", "host", r.Host, "remote", r.RemoteAddr)
			http.Error(w, "Forbidden: invalid Host header", http.StatusForbidden)
			return
		}
		if origin := r.Header.Get("Origin"); origin != "" && !g.origins.Allows(r, origin) {
			g.log.Warn("rejected request from a foreign Origin", "origin", origin, "remote", r.RemoteAddr)
			http.Error(w, "Forbidden: origin not allowed", http.StatusForbidden)
			return
		}
		next.ServeHTTP(w, r)
	})
}
