// Package httpguard holds the HTTP checks that the MCP endpoint (/mcp) and
// the dashboard share: the DNS-rebinding Host check, the loopback tests and
// the bearer-token comparison. They live in one place so that both
// endpoints always give the same answer for the same request (a Host that
// one accepts and the other refuses is a bug, not a policy).
package httpguard

import (
	"crypto/sha256"
	"crypto/subtle"
	"fmt"
	"net"
	"net/http"
	"strings"
)

// IsLoopbackHost reports whether host (no port; IPv6 with or without
// brackets) names the loopback interface: "localhost" in any letter case
// (host names are case-insensitive, RFC 4343) or a loopback IP.
func IsLoopbackHost(host string) bool {
	host = strings.TrimSuffix(strings.TrimPrefix(host, "["), "]")
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// IsLoopbackAddr reports whether addr (host:port, as given to --addr)
// binds only a loopback interface. An empty host means every interface,
// so it is not loopback.
func IsLoopbackAddr(addr string) bool {
	host, _, err := net.SplitHostPort(addr)
	return err == nil && IsLoopbackHost(host)
}

// HostAllowed is the DNS-rebinding check: a request that arrived on a
// loopback address must name a loopback host (localhost, 127.0.0.0/8 or
// [::1], any letter case, any port). A page on evil.example whose name was
// rebound to 127.0.0.1 sends Host: evil.example and is refused. Requests
// that arrived on another interface are not judged here: serving one needs
// a token (CheckListenAddr), and the token is their guard.
func HostAllowed(r *http.Request) bool {
	local, ok := r.Context().Value(http.LocalAddrContextKey).(net.Addr)
	if !ok || local == nil || !IsLoopbackAddr(local.String()) {
		return true
	}
	host := r.Host
	if h, _, err := net.SplitHostPort(host); err == nil {
		host = h
	}
	return IsLoopbackHost(host)
}

// BearerToken returns the token of an "Authorization: Bearer <token>"
// header (the scheme in any letter case, RFC 9110 §11.1) and whether the
// header had that form.
func BearerToken(r *http.Request) (string, bool) {
	auth := r.Header.Get("Authorization")
	const prefix = "bearer "
	if len(auth) < len(prefix) || !strings.EqualFold(auth[:len(prefix)], prefix) {
		return "", false
	}
	return strings.TrimSpace(auth[len(prefix):]), true
}

// TokenEqual reports whether got is the configured token want, in constant
// time: both are hashed first, so neither the content nor the length of
// want leaks through timing. An empty got never matches.
func TokenEqual(got, want string) bool {
	g, w := sha256.Sum256([]byte(got)), sha256.Sum256([]byte(want))
	return got != "" && subtle.ConstantTimeCompare(g[:], w[:]) == 1
}

// CheckListenAddr refuses to serve a non-loopback address unless a token
// is configured (tokenSet: --token or --token-file): the API drives a
// browser on this machine, so exposing it unauthenticated to the network is
// never what anyone wants. addr is host:port; an empty host means every
// interface.
func CheckListenAddr(addr string, tokenSet bool) error {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return fmt.Errorf("invalid listen address %q: %v (example: --addr 127.0.0.1:7788)", addr, err)
	}
	if tokenSet || IsLoopbackHost(host) {
		return nil
	}
	shown := host
	if shown == "" {
		shown = "all interfaces"
	}
	return fmt.Errorf("refusing to listen on %s (%s) without a token: a non-loopback address exposes "+
		"browser automation to the network; set --token or --token-file, or listen on 127.0.0.1", addr, shown)
}
