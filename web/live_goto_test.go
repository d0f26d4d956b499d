package web

import (
	"strings"
	"testing"

	"github.com/browsertask/browsertask/engine"
)

// TestNormalizeAddress: what a person types becomes the URL a browser's
// bar would open; a scheme stays as typed for the policy to judge; bad
// input names field url.
func TestNormalizeAddress(t *testing.T) {
	for in, want := range map[string]string{
		"example.com":                "https://example.com",
		"  example.com/a?b=c  ":      "https://example.com/a?b=c",
		"localhost:8080/x":           "http://localhost:8080/x",
		"127.0.0.1:9/login":          "http://127.0.0.1:9/login",
		"[::1]:9/":                   "http://[::1]:9/",
		"app.localhost":              "http://app.localhost",
		"http://127.0.0.1:9/members": "http://127.0.0.1:9/members",
		"HTTPS://Example.com":        "HTTPS://Example.com",
		"file:///etc/passwd":         "file:///etc/passwd",
		"javascript:alert(1)":        "javascript:alert(1)",
		"about:blank":                "about:blank",
	} {
		got, err := normalizeAddress(in)
		if err != nil || got != want {
			t.Errorf("normalizeAddress(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
	for _, in := range []string{"", "   ", "http://a/\x00", strings.Repeat("a", maxAddressLen+1)} {
		_, err := normalizeAddress(in)
		e := engine.AsError(err)
		if err == nil || e.Code != engine.InvalidParameter || e.Details["field"] != "url" {
			t.Errorf("normalizeAddress(%q) error %v, want INVALID_PARAMETER on field url", in, err)
		}
	}
}

// FuzzNormalizeAddress: any typed text gives an error or a URL with a
// scheme, never a panic, and a URL it made is stable when typed again.
func FuzzNormalizeAddress(f *testing.F) {
	for _, s := range []string{"example.com", "localhost:1", "file:///x", "a:b", "[::1]", ":80", "//x", "1.2.3.4/x"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		got, err := normalizeAddress(s)
		if err != nil {
			return
		}
		if !hasScheme(got) {
			t.Fatalf("normalizeAddress(%q) = %q has no scheme", s, got)
		}
		if again, err := normalizeAddress(got); err != nil || again != got {
			t.Fatalf("normalizeAddress(%q) = %q, again %q %v", s, got, again, err)
		}
	})
}
