package mcp

import (
	"crypto/sha256"
	"crypto/subtle"
	"fmt"
	"net"
	"net/http"
	"strings"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// MaxRequestBodyBytes caps an MCP HTTP request body (4 MiB).
const MaxRequestBodyBytes = 4 << 20

// HTTPOptions configure HTTPHandler.
type HTTPOptions struct {
	// Token, when set, must be presented as "Authorization: Bearer <token>".
	Token string
	// AllowedOrigins are extra browser origins (scheme://host[:port]) allowed
	// besides the daemon's own loopback origins.
	AllowedOrigins []string
	// SessionTimeout closes MCP sessions idle this long; 0 keeps them.
	SessionTimeout time.Duration
}

// HTTPHandler returns the Streamable HTTP endpoint (mount it at /mcp):
// stateful sessions (Mcp-Session-Id), POST, GET (SSE) and DELETE, served by
// the SDK. In front of it, in order: the Host check against DNS rebinding
// (403), the Origin allow-list (403), the optional bearer token (401), a
// 4 MiB body cap, and the Tasks shim lifting params.task (task_shim.go).
// The SDK's own loopback Host check stays on as well.
func (s *Server) HTTPHandler(opts HTTPOptions) http.Handler {
	h := sdk.NewStreamableHTTPHandler(func(*http.Request) *sdk.Server { return s.sdk }, &sdk.StreamableHTTPOptions{
		Logger:              s.log,
		SessionTimeout:      opts.SessionTimeout,
		MaxRequestBodyBytes: MaxRequestBodyBytes,
	})
	var next http.Handler = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Body != nil {
			r.Body = http.MaxBytesReader(w, r.Body, MaxRequestBodyBytes)
		}
		liftTaskHTTP(h).ServeHTTP(w, r)
	})
	if opts.Token != "" {
		next = bearerAuth(opts.Token, next)
	}
	return newOriginGuard(opts.AllowedOrigins, s.log).wrap(next)
}

// bearerAuth requires "Authorization: Bearer <token>", compared in constant
// time (over hashes, so the length does not leak either); else 401.
func bearerAuth(token string, next http.Handler) http.Handler {
	want := sha256.Sum256([]byte(token))
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		auth := r.Header.Get("Authorization")
		const prefix = "bearer "
		if len(auth) < len(prefix) || !strings.EqualFold(auth[:len(prefix)], prefix) {
			w.Header().Set("WWW-Authenticate", `Bearer realm="browsertask"`)
			http.Error(w, "Unauthorized: missing bearer token", http.StatusUnauthorized)
			return
		}
		got := sha256.Sum256([]byte(strings.TrimSpace(auth[len(prefix):])))
		if subtle.ConstantTimeCompare(got[:], want[:]) != 1 {
			w.Header().Set("WWW-Authenticate", `Bearer realm="browsertask", error="invalid_token"`)
			http.Error(w, "Unauthorized: invalid bearer token", http.StatusUnauthorized)
			return
		}
		next.ServeHTTP(w, r)
	})
}

// ListenAddrCheck refuses to serve a non-loopback address without a token:
// the API drives a browser on this machine, so exposing it unauthenticated
// to the network is never what anyone wants. addr is host:port; an empty
// host means every interface.
func ListenAddrCheck(addr string, token string) error {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return fmt.Errorf("invalid listen address %q: %v", addr, err)
	}
	if token != "" || isLoopbackHost(host) {
		return nil
	}
	shown := host
	if shown == "" {
		shown = "all interfaces"
	}
	return fmt.Errorf("refusing to listen on %s (%s) without a token: a non-loopback address exposes "+
		"browser automation to the network; set --token or --token-file, or listen on 127.0.0.1", addr, shown)
}

// isLoopbackHost reports whether host (no port) names the loopback
// interface: "localhost" or a loopback IP.
func isLoopbackHost(host string) bool {
	host = strings.TrimSuffix(strings.TrimPrefix(host, "["), "]")
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}
