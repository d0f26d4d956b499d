package engine

import (
	"errors"
	"net/netip"
	"strings"
	"testing"
)

// fakeResolve resolves a few fixed names without touching DNS.
func fakeResolve(host string) ([]netip.Addr, error) {
	switch host {
	case "intranet.example":
		return []netip.Addr{netip.MustParseAddr("10.1.2.3")}, nil
	case "public.example":
		return []netip.Addr{netip.MustParseAddr("93.184.216.34")}, nil
	case "empty.example":
		return nil, nil
	}
	return nil, errors.New("no such host")
}

func TestCheckURL(t *testing.T) {
	local := URLPolicy{TrustLevel: "local", Resolve: fakeResolve}
	restricted := URLPolicy{TrustLevel: "restricted", Resolve: fakeResolve}
	files := URLPolicy{TrustLevel: "local", AllowFileURLs: true}
	deny := URLPolicy{DenyHosts: []string{"127.0.0.1:8765"}, Resolve: fakeResolve}
	wild := URLPolicy{DenyHosts: []string{"0.0.0.0:8765"}, Resolve: fakeResolve}
	cases := []struct {
		url  string
		p    URLPolicy
		want ErrorCode // "" = allowed
	}{
		{"https://example.com/a?b=c", local, ""},
		{"http://127.0.0.1:8080/x", local, ""},
		{"HTTP://Example.COM", local, ""},
		{"http://localhost:3000/", URLPolicy{}, ""},
		{"javascript:alert(1)", local, InvalidParameter},
		{"data:text/html,hi", local, InvalidParameter},
		{"chrome://settings", local, InvalidParameter},
		{"devtools://devtools/bundled/inspector.html", local, InvalidParameter},
		{"view-source:https://example.com", local, InvalidParameter},
		{"chrome-extension://abc/page.html", local, InvalidParameter},
		{"about:blank", local, InvalidParameter},
		{"ftp://example.com/f", local, InvalidParameter},
		{"example.com/no-scheme", local, InvalidParameter},
		{"http://", local, InvalidParameter},
		{"http://[::1", local, InvalidParameter},
		{"file:///etc/hosts", local, InvalidParameter},
		{"file:///tmp/page.html", files, ""},
		{"file:///tmp/page.html", URLPolicy{TrustLevel: "restricted", AllowFileURLs: true}, TrustLevelNotAllowed},
		{"http://127.0.0.1:8765/mcp", deny, InvalidParameter},
		{"http://localhost:8765/mcp", deny, InvalidParameter},
		{"http://127.0.0.1:8766/", deny, ""},
		{"http://[::1]:8765/", wild, InvalidParameter},
		{"http://localhost:8765/", wild, InvalidParameter},
		{"http://127.0.0.1:8765/", wild, InvalidParameter},
		{"https://public.example/", restricted, ""},
		{"https://unknown.example/", restricted, TrustLevelNotAllowed}, // fails closed
		{"https://empty.example/", restricted, TrustLevelNotAllowed},   // no addresses
		{"https://unknown.example/", local, ""},
		{"http://127.0.0.1/", restricted, TrustLevelNotAllowed},
		{"http://localhost/", restricted, TrustLevelNotAllowed},
		{"http://LOCALHOST./", restricted, TrustLevelNotAllowed},
		{"http://app.localhost/", restricted, TrustLevelNotAllowed},
		{"http://10.0.0.1/", restricted, TrustLevelNotAllowed},
		{"http://192.168.1.1/", restricted, TrustLevelNotAllowed},
		{"http://172.16.5.4/", restricted, TrustLevelNotAllowed},
		{"http://169.254.169.254/latest/meta-data", restricted, TrustLevelNotAllowed},
		{"http://[::1]/", restricted, TrustLevelNotAllowed},
		{"http://[fe80::1]/", restricted, TrustLevelNotAllowed},
		{"http://[fc00::1]/", restricted, TrustLevelNotAllowed},
		{"http://[::ffff:127.0.0.1]/", restricted, TrustLevelNotAllowed},
		{"http://0.0.0.0/", restricted, TrustLevelNotAllowed},
		{"http://2130706433/", restricted, TrustLevelNotAllowed}, // 127.0.0.1
		{"http://0x7f.1/", restricted, TrustLevelNotAllowed},
		{"http://0177.0.0.1/", restricted, TrustLevelNotAllowed},
		{"http://intranet.example/", restricted, TrustLevelNotAllowed},
		{"http://8.8.8.8/", restricted, ""},
	}
	for _, c := range cases {
		got := AsError(CheckURL(c.url, c.p))
		switch {
		case c.want == "" && got != nil:
			t.Errorf("AsError(CheckURL(%q)) = %v, want allowed", c.url, got)
		case c.want != "" && got == nil:
			t.Errorf("AsError(CheckURL(%q)) allowed, want %s", c.url, c.want)
		case c.want != "" && got.Code != c.want:
			t.Errorf("AsError(CheckURL(%q)) = %s, want %s", c.url, got.Code, c.want)
		case got != nil && (got.Recovery == "" || got.Details["url"] == nil):
			t.Errorf("AsError(CheckURL(%q)) = %+v lacks recovery or details.url", c.url, got)
		}
	}
}

func TestCheckURLMessageNamesURLAndFix(t *testing.T) {
	e := AsError(CheckURL("javascript:alert(1)", URLPolicy{}))
	if e == nil || !strings.Contains(e.Message, "javascript:alert(1)") || !strings.Contains(e.Message, "https://") {
		t.Fatalf("message = %v", e)
	}
	long := "ftp://example.com/" + strings.Repeat("a", 5000)
	if e := AsError(CheckURL(long, URLPolicy{})); e == nil || len(e.Message) > 600 {
		t.Fatalf("long URL message not bounded: %d", len(e.Message))
	}
}

// TestCheckURLUnresolvableFailsClosed: under trust restricted a host the
// daemon cannot resolve is refused (the browser might resolve it to
// loopback), with a message naming the URL and the fix and
// details.reason "unresolvable"; under trust local it is allowed.
func TestCheckURLUnresolvableFailsClosed(t *testing.T) {
	calls := 0
	p := URLPolicy{TrustLevel: "restricted", Resolve: func(string) ([]netip.Addr, error) {
		calls++
		return nil, errors.New("no such host")
	}}
	for i := 0; i < 2; i++ { // no cached "allowed" answer on the second try
		e := AsError(CheckURL("http://onlychromium.test:8080/x", p))
		if e == nil || e.Code != TrustLevelNotAllowed || e.Details["reason"] != ReasonUnresolvable ||
			e.Details["url"] != "http://onlychromium.test:8080/x" {
			t.Fatalf("try %d: CheckURL = %+v, want TRUST_LEVEL_NOT_ALLOWED with reason unresolvable", i, e)
		}
		if !strings.Contains(e.Message, "http://onlychromium.test:8080/x") || !strings.Contains(e.Message, "trust level local") {
			t.Fatalf("message does not name the URL and the fix: %s", e.Message)
		}
	}
	if calls != 2 {
		t.Fatalf("resolver called %d times, want 2", calls)
	}
	p.TrustLevel = "local"
	if e := AsError(CheckURL("http://onlychromium.test:8080/x", p)); e != nil {
		t.Fatalf("local trust: %v", e)
	}
}

// TestCheckAddr: the connect-time check refuses internal addresses under
// trust restricted (whatever the name) and the daemon's own listener
// always; public addresses pass.
func TestCheckAddr(t *testing.T) {
	restricted := URLPolicy{TrustLevel: "restricted", DenyHosts: []string{"203.0.113.5:8765"}}
	local := URLPolicy{TrustLevel: "local", DenyHosts: []string{"127.0.0.1:8765"}}
	cases := []struct {
		p    URLPolicy
		host string
		ap   string
		want ErrorCode
	}{
		{restricted, "site-a.test", "203.0.113.10:80", ""},
		{restricted, "site-a.test", "127.0.0.1:80", TrustLevelNotAllowed},
		{restricted, "rebind.test", "10.0.0.7:443", TrustLevelNotAllowed},
		{restricted, "x.test", "[::1]:80", TrustLevelNotAllowed},
		{restricted, "x.test", "[::ffff:127.0.0.1]:80", TrustLevelNotAllowed},
		{restricted, "x.test", "169.254.169.254:80", TrustLevelNotAllowed},
		{restricted, "x.test", "0.0.0.0:80", TrustLevelNotAllowed},
		{restricted, "daemon.test", "203.0.113.5:8765", InvalidParameter},
		{restricted, "daemon.test", "203.0.113.5:8766", ""},
		{local, "localhost", "127.0.0.1:8765", InvalidParameter},
		{local, "localhost", "127.0.0.1:3000", ""},
		{local, "Site-A.test.", "10.0.0.7:80", ""},
	}
	for _, c := range cases {
		got := AsError(CheckAddr(c.p, c.host, netip.MustParseAddrPort(c.ap)))
		switch {
		case c.want == "" && got != nil:
			t.Errorf("AsError(CheckAddr(%s, %s)) = %v, want allowed", c.host, c.ap, got)
		case c.want != "" && (got == nil || got.Code != c.want):
			t.Errorf("AsError(CheckAddr(%s, %s)) = %v, want %s", c.host, c.ap, got, c.want)
		case got != nil && (got.Details["addr"] == nil || !strings.Contains(got.Message, c.ap)):
			t.Errorf("AsError(CheckAddr(%s, %s)) = %+v lacks details.addr or the address in the message", c.host, c.ap, got)
		}
	}
}

func FuzzCheckURL(f *testing.F) {
	for _, s := range []string{
		"https://example.com", "http://127.0.0.1:8765/", "javascript:x", "file:///x", "http://[::1]/",
		"http://0x7f.0.0.1/", "http://4294967295/", "http://1.2.3.4.5/", "http://%zz/", "", ":", "http://a:b@c:1/",
	} {
		f.Add(s, false, true)
	}
	f.Fuzz(func(t *testing.T, raw string, allowFiles, restricted bool) {
		p := URLPolicy{AllowFileURLs: allowFiles, DenyHosts: []string{"127.0.0.1:8765", "0.0.0.0:9"},
			Resolve: func(string) ([]netip.Addr, error) { return nil, errors.New("offline") }}
		if restricted {
			p.TrustLevel = "restricted"
		}
		e := AsError(CheckURL(raw, p))
		if e == nil {
			return
		}
		if e.Code != InvalidParameter && e.Code != TrustLevelNotAllowed {
			t.Fatalf("AsError(CheckURL(%q)) = %s", raw, e.Code)
		}
		if e.Message == "" || e.Recovery == "" {
			t.Fatalf("AsError(CheckURL(%q)) error without message or recovery", raw)
		}
	})
}
