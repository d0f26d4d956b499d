package httpguard

import (
	"crypto/tls"
	"net/http/httptest"
	"strings"
	"testing"
)

// TestParseOrigin: every spelling of one origin parses to the same Origin
// and serialises as a browser sends it; everything that is not exactly
// scheme://host[:port] is refused with the reason.
func TestParseOrigin(t *testing.T) {
	for _, c := range []struct{ raw, want string }{
		{"http://127.0.0.1:7788", "http://127.0.0.1:7788"},
		{"HTTP://LocalHost:7788", "http://localhost:7788"},
		{"http://localhost:80", "http://localhost"},
		{"https://app.example:443", "https://app.example"},
		{"https://app.example:80", "https://app.example:80"},
		{"http://[::1]:9000", "http://[::1]:9000"},
		{"http://[::1]", "http://[::1]"},
		{"http://h:07788", "http://h:7788"},
	} {
		o, err := ParseOrigin(c.raw)
		if err != nil || o.String() != c.want {
			t.Errorf("ParseOrigin(%q) = %q, %v; want %q", c.raw, o.String(), err, c.want)
		}
	}
	for _, c := range []struct{ raw, why string }{
		{"null", "opaque origin"},
		{"", "scheme must be http or https"},
		{"http://", "no host"},
		{"http:host", "no host"},
		{"ftp://h", "scheme must be http or https"},
		{"h:80", "scheme must be http or https"},
		{"http://h/", "path, query or fragment"},
		{"http://h/x", "path, query or fragment"},
		{"http://h?", "path, query or fragment"},
		{"http://h#", "path, query or fragment"},
		{"http://u@h", "user info"},
		{"http://h:", "empty port"},
		{"http://h:0", "port must be 1..65535"},
		{"http://h:65536", "port must be 1..65535"},
		{"http://[::1", "not an origin"},
		{"http://h h", "not an origin"},
	} {
		if o, err := ParseOrigin(c.raw); err == nil || !strings.Contains(err.Error(), c.why) {
			t.Errorf("ParseOrigin(%q) = %v, %v; want an error saying %q", c.raw, o, err, c.why)
		}
	}
}

// TestOriginRule: a request's own origin is the scheme of its connection
// and the host and port of its Host header; extras are compared after
// normalising; a Referer is judged by its origin.
func TestOriginRule(t *testing.T) {
	rule, err := NewOriginRule([]string{"https://App.example", "not an origin", "http://x/"})
	if err == nil || !strings.Contains(err.Error(), `"not an origin"`) || !strings.Contains(err.Error(), `"http://x/"`) {
		t.Fatalf("NewOriginRule error %v, want both bad entries named", err)
	}
	plain := httptest.NewRequest("POST", "http://127.0.0.1:7788/mcp", nil)
	underTLS := httptest.NewRequest("POST", "https://box.example/mcp", nil)
	underTLS.TLS = &tls.ConnectionState{}
	for _, c := range []struct {
		name   string
		allows func() bool
		want   bool
	}{
		{"own", func() bool { return rule.Allows(plain, "http://127.0.0.1:7788") }, true},
		{"other loopback name", func() bool { return rule.Allows(plain, "http://localhost:7788") }, false},
		{"https on plain http", func() bool { return rule.Allows(plain, "https://127.0.0.1:7788") }, false},
		{"own under TLS, default port", func() bool { return rule.Allows(underTLS, "https://box.example") }, true},
		{"http under TLS", func() bool { return rule.Allows(underTLS, "http://box.example:443") }, false},
		{"extra, default port spelt out", func() bool { return rule.Allows(plain, "https://app.example:443") }, true},
		{"a bad extra allows nothing", func() bool { return rule.Allows(plain, "not an origin") }, false},
		{"Referer on own origin", func() bool { return rule.AllowsURL(plain, "http://127.0.0.1:7788/runs/x?y#z") }, true},
		{"Referer elsewhere", func() bool { return rule.AllowsURL(plain, "http://127.0.0.1:1/runs") }, false},
		{"Referer with user info", func() bool { return rule.AllowsURL(plain, "http://u@127.0.0.1:7788/") }, false},
		{"extra is listed", func() bool { return rule.Listed("https://APP.example:443") }, true},
		{"own origin is not listed", func() bool { return rule.Listed("http://127.0.0.1:7788") }, false},
		{"no Origin is not listed", func() bool { return rule.Listed("") }, false},
	} {
		if got := c.allows(); got != c.want {
			t.Errorf("%s: %v, want %v", c.name, got, c.want)
		}
	}
}
