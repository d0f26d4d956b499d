package cli

import (
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/browsertask/browsertask/internal/rawmcp"
)

// TestOneOriginRuleForMCPAndDashboard sends each Origin header value (and
// a few Host and Sec-Fetch-Site headers) both to /mcp (initialize) and to a dashboard POST
// (cancel of a run that does not exist) of one in-process serve: for every
// value both endpoints give the same answer. Accepted is 200 on /mcp and
// 404 on the dashboard (the guard let the request through to the handler,
// which found no such run); refused is 403 on both.
func TestOneOriginRuleForMCPAndDashboard(t *testing.T) {
	addr := startInprocServe(t, defaultHTTPTimeouts(), "--allowed-origins", "https://app.example:8443, http://[::1]:9000")
	port := addr[strings.LastIndexByte(addr, ':')+1:]
	own := "http://127.0.0.1:" + port
	for _, c := range []struct {
		name, origin, host string
		accept             bool
		site               string // Sec-Fetch-Site, as a browser sends it
	}{
		{"missing", "", "", true, ""},
		{"own", own, "", true, ""},
		{"own, scheme in capitals", "HTTP://127.0.0.1:" + port, "", true, ""},
		{"LOCALHOST with Host localhost", "http://LOCALHOST:" + port, "localhost:" + port, true, ""},
		{"[::1] with Host [::1]", "http://[::1]:" + port, "[::1]:" + port, true, ""},
		{"allowed extra", "https://app.example:8443", "", true, ""},
		{"allowed extra, host in capitals", "https://APP.Example:8443", "", true, ""},
		{"allowed extra IPv6", "http://[::1]:9000", "", true, ""},
		{"null", "null", "", false, ""},
		{"LOCALHOST for 127.0.0.1", "http://LOCALHOST:" + port, "", false, ""},
		{"localhost for 127.0.0.1", "http://localhost:" + port, "", false, ""},
		{"[::1] for 127.0.0.1", "http://[::1]:" + port, "", false, ""},
		{"127.0.0.1 for Host localhost", own, "localhost:" + port, false, ""},
		{"wrong port", "http://127.0.0.1:1", "", false, ""},
		{"default port", "http://127.0.0.1", "", false, ""},
		{"other host", "http://evil.example", "", false, ""},
		{"other host, our port", "http://evil.example:" + port, "", false, ""},
		{"https", "https://127.0.0.1:" + port, "", false, ""},
		{"allowed extra, other port", "https://app.example", "", false, ""},
		{"allowed extra, http", "http://app.example:8443", "", false, ""},
		{"trailing slash", own + "/", "", false, ""},
		{"path", own + "/runs", "", false, ""},
		{"query", own + "?x=1", "", false, ""},
		{"fragment", own + "#x", "", false, ""},
		{"userinfo", "http://user@127.0.0.1:" + port, "", false, ""},
		{"userinfo with password", "http://user:pw@127.0.0.1:" + port, "", false, ""},
		{"no scheme", "127.0.0.1:" + port, "", false, ""},
		{"other scheme", "ftp://127.0.0.1:" + port, "", false, ""},
		{"empty port", "http://127.0.0.1:", "", false, ""},
		{"port out of range", "http://127.0.0.1:99999", "", false, ""},
		{"scheme only", "http://", "", false, ""},
		{"garbage", "::nonsense", "", false, ""},
		{"two origins", own + " " + own, "", false, ""},
		{"opaque", "http:127.0.0.1:" + port, "", false, ""},
		// As a browser sends them: Sec-Fetch-Site with the Origin.
		{"own, as a browser sends it", own, "", true, "same-origin"},
		{"allowed extra, as a browser sends it", "https://app.example:8443", "", true, "cross-site"},
		{"other host, as a browser sends it", "http://evil.example", "", false, "cross-site"},
		{"another local port, as a browser sends it", "http://127.0.0.1:3000", "", false, "same-site"},
	} {
		t.Run(c.name, func(t *testing.T) {
			hdr := map[string]string{}
			if c.origin != "" {
				hdr["Origin"] = c.origin
			}
			if c.site != "" {
				hdr["Sec-Fetch-Site"] = c.site
			}
			mcpCode, body := rawmcp.Initialize(t, "http://"+addr+"/mcp", c.host, hdr)
			dashCode := dashboardPost(t, addr, c.host, hdr)
			wantMCP, wantDash := http.StatusForbidden, http.StatusForbidden
			if c.accept {
				wantMCP, wantDash = http.StatusOK, http.StatusNotFound
			}
			if mcpCode != wantMCP || dashCode != wantDash {
				t.Fatalf("Origin %q Host %q Sec-Fetch-Site %q: /mcp %d (want %d), dashboard %d (want %d); /mcp said %.200s",
					c.origin, c.host, c.site, mcpCode, wantMCP, dashCode, wantDash, body)
			}
		})
	}
}

// dashboardPost posts the cancel of a run that does not exist with hdr
// (and host as Host, when set) and returns the status.
func dashboardPost(t *testing.T, addr, host string, hdr map[string]string) int {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, "http://"+addr+"/runs/run_00000000-0000-4000-8000-000000000000/cancel", nil)
	if err != nil {
		t.Fatal(err)
	}
	for k, v := range hdr {
		req.Header.Set(k, v)
	}
	if host != "" {
		req.Host = host
	}
	client := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	resp, err := client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	_, _ = io.Copy(io.Discard, resp.Body)
	return resp.StatusCode
}

// TestAllowedOriginsFlagRefusesNonOrigins: an --allowed-origins entry that
// is not scheme://host[:port] stops the command with the flag and the
// reason, instead of being dropped silently.
func TestAllowedOriginsFlagRefusesNonOrigins(t *testing.T) {
	env := func(string) string { return "" }
	for _, c := range []struct{ value, want string }{
		{"http://localhost:3000/", "--allowed-origins: \"http://localhost:3000/\" has a path, query or fragment"},
		{"localhost:3000", "--allowed-origins: \"localhost:3000\": the scheme must be http or https"},
		{"https://ok.example, null", "--allowed-origins: \"null\" is an opaque origin"},
	} {
		_, err := parseFlags("serve", []string{"--allowed-origins", c.value}, env, nil)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("--allowed-origins %q: %v, want %q", c.value, err, c.want)
		}
	}
	if _, err := parseFlags("serve", []string{"--allowed-origins", "https://ok.example, http://[::1]:9000"}, env, nil); err != nil {
		t.Fatalf("valid origins refused: %v", err)
	}
}
