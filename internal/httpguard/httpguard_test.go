package httpguard

import (
	"context"
	"net"
	"net/http"
	"strings"
	"testing"
)

// requestOn is a request with Host host that arrived on local.
func requestOn(local, host string) *http.Request {
	r, _ := http.NewRequest(http.MethodGet, "http://placeholder/", nil)
	r.Host = host
	addr, err := net.ResolveTCPAddr("tcp", local)
	if err != nil {
		panic(err)
	}
	return r.WithContext(context.WithValue(r.Context(), http.LocalAddrContextKey, net.Addr(addr)))
}

func TestHostAllowed(t *testing.T) {
	for _, c := range []struct {
		local, host string
		want        bool
	}{
		{"127.0.0.1:7788", "LOCALHOST", true},
		{"127.0.0.1:7788", "Localhost:7788", true},
		{"127.0.0.1:7788", "localhost", true},
		{"127.0.0.1:7788", "127.0.0.1", true},
		{"127.0.0.1:7788", "127.0.0.1:7788", true},
		{"127.0.0.1:7788", "127.0.0.2:1", true},
		{"127.0.0.1:7788", "[::1]", true},
		{"127.0.0.1:7788", "[::1]:7788", true},
		{"[::1]:7788", "localhost:7788", true},
		{"127.0.0.1:7788", "evil.example", false},
		{"127.0.0.1:7788", "evil.example:7788", false},
		{"127.0.0.1:7788", "localhost.evil.example", false},
		{"127.0.0.1:7788", "LOCALHOST.evil.example:7788", false},
		{"127.0.0.1:7788", "192.168.1.5:7788", false},
		{"127.0.0.1:7788", "", false},
		// Not on a loopback listener: the token guards it, not the Host.
		{"192.168.1.5:7788", "evil.example", true},
	} {
		if got := HostAllowed(requestOn(c.local, c.host)); got != c.want {
			t.Errorf("HostAllowed(Host %q on %s) = %v, want %v", c.host, c.local, got, c.want)
		}
	}
	// No local address in the context (a handler called directly): allowed.
	r, _ := http.NewRequest(http.MethodGet, "http://evil.example/", nil)
	if !HostAllowed(r) {
		t.Error("HostAllowed without a local address = false, want true")
	}
}

func TestIsLoopbackAddr(t *testing.T) {
	for addr, want := range map[string]bool{
		"127.0.0.1:7788": true, "LocalHost:7788": true, "[::1]:7788": true, "127.0.0.2:0": true,
		":7788": false, "0.0.0.0:7788": false, "[::]:7788": false, "example.com:7788": false, "127.0.0.1": false,
	} {
		if got := IsLoopbackAddr(addr); got != want {
			t.Errorf("IsLoopbackAddr(%q) = %v, want %v", addr, got, want)
		}
	}
}

func TestBearerTokenAndTokenEqual(t *testing.T) {
	for hdr, want := range map[string]string{"Bearer s3cret": "s3cret", "bearer  s3cret ": "s3cret", "BEARER s3cret": "s3cret"} {
		r, _ := http.NewRequest(http.MethodGet, "/", nil)
		r.Header.Set("Authorization", hdr)
		if got, ok := BearerToken(r); !ok || got != want {
			t.Errorf("BearerToken(%q) = %q, %v; want %q, true", hdr, got, ok, want)
		}
	}
	for _, hdr := range []string{"", "Basic czNjcmV0", "Bearer", "Bearers3cret"} {
		r, _ := http.NewRequest(http.MethodGet, "/", nil)
		r.Header.Set("Authorization", hdr)
		if got, ok := BearerToken(r); ok {
			t.Errorf("BearerToken(%q) = %q, true; want no token", hdr, got)
		}
	}
	if !TokenEqual("s3cret", "s3cret") || TokenEqual("s3cre", "s3cret") || TokenEqual("", "") || TokenEqual("S3CRET", "s3cret") {
		t.Error("TokenEqual: wrong answer")
	}
}

func TestCheckListenAddr(t *testing.T) {
	for _, c := range []struct {
		addr  string
		token bool
		ok    bool
	}{
		{"127.0.0.1:7788", false, true},
		{"localhost:7788", false, true},
		{"[::1]:7788", false, true},
		{"127.0.0.2:7788", false, true},
		{"0.0.0.0:7788", false, false},
		{":7788", false, false},
		{"192.168.1.5:7788", false, false},
		{"[::]:7788", false, false},
		{"example.com:7788", false, false},
		{"0.0.0.0:7788", true, true},
		{"nonsense", false, false},
	} {
		err := CheckListenAddr(c.addr, c.token)
		if (err == nil) != c.ok {
			t.Errorf("CheckListenAddr(%q, %v) = %v, want ok=%v", c.addr, c.token, err, c.ok)
		}
		if err != nil && c.addr != "nonsense" && !strings.Contains(err.Error(), "token") {
			t.Errorf("message does not say how to fix it: %v", err)
		}
	}
}
