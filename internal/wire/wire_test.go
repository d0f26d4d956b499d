package wire

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/browsertask/browsertask/engine"
	"github.com/browsertask/browsertask/internal/devtpl"
)

// TestOpenAndHandler: one Open gives the browser the engine's trust level
// and file-URL switch, registers the eight templates with the extra ones,
// and Handler serves /healthz, /mcp, /sse and the dashboard behind the
// token, refusing the listener's own address to the browser.
func TestOpenAndHandler(t *testing.T) {
	cfg := engine.DefaultConfig()
	cfg.TrustLevel = "restricted"
	p, err := Open(context.Background(), Options{DBPath: filepath.Join(t.TempDir(), "bt.db"), Engine: cfg,
		ExtraTemplates: []engine.Template{devtpl.Echo{}}, Version: "test", Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	if pol := p.Browser.Policy(); pol.TrustLevel != "restricted" || pol.AllowFileURLs {
		t.Fatalf("browser policy %+v, want the engine's trust level restricted and no file URLs", pol)
	}
	var ids []string
	for _, info := range p.Engine.Templates() {
		ids = append(ids, info.TemplateID)
	}
	if len(ids) != 11 || !slices.Contains(ids, "agent_task") || !slices.Contains(ids, "extract_structured") || !slices.Contains(ids, "map_site") || !slices.Contains(ids, "profile_sign_in") || !slices.Contains(ids, "dev_echo") {
		t.Fatalf("templates %v, want the ten and dev_echo", ids)
	}

	ts := httptest.NewUnstartedServer(nil)
	addr := ts.Listener.Addr().String()
	ts.Config.Handler = p.Handler(addr, HTTPOptions{Token: "s3cret"})
	ts.Start()
	defer ts.Close()
	if !slices.Contains(p.Browser.DenyHosts(), addr) {
		t.Fatalf("the browser may reach the listener %s: deny list %v", addr, p.Browser.DenyHosts())
	}
	get := func(path, token string) int {
		t.Helper()
		req, err := http.NewRequest(http.MethodGet, ts.URL+path, nil)
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("Accept", "text/event-stream, application/json")
		if token != "" {
			req.Header.Set("Authorization", "Bearer "+token)
		}
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		resp, err := http.DefaultClient.Do(req.WithContext(ctx))
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	for _, c := range []struct {
		path, token string
		want        int
	}{
		{"/healthz", "", http.StatusOK},
		{"/mcp", "", http.StatusUnauthorized},
		{"/sse", "", http.StatusUnauthorized},
		{"/sse", "s3cret", http.StatusOK},
		{"/templates", "s3cret", http.StatusOK},
		{"/templates", "", http.StatusUnauthorized},
	} {
		if got := get(c.path, c.token); got != c.want {
			t.Errorf("GET %s (token %q): %d, want %d", c.path, c.token, got, c.want)
		}
	}
	if !strings.HasPrefix(ts.URL, "http://127.0.0.1:") {
		t.Fatalf("listener %s is not loopback", ts.URL)
	}
}
