package acceptance

// Acceptance 2 (security part): the Streamable HTTP endpoint of the built
// `browsertask serve` refuses foreign Origins and Hosts (403), requires the
// bearer token when one is set (401), and a non-loopback --addr without a
// token is refused at start.

import (
	"net/http"
	"os/exec"
	"strings"
	"testing"

	"github.com/browsertask/browsertask/internal/fixture"
	"github.com/browsertask/browsertask/internal/rawmcp"
)

func TestBlackboxHTTPGuards(t *testing.T) {
	t.Parallel()
	p := startServe(t)
	url := p.mcpURL()
	port := p.addr[strings.LastIndexByte(p.addr, ':')+1:]

	cases := []struct {
		name string
		host string
		hdr  map[string]string
		want int
	}{
		{"no origin", "", nil, http.StatusOK},
		{"own origin 127.0.0.1", "", map[string]string{"Origin": "http://127.0.0.1:" + port}, http.StatusOK},
		{"own origin localhost", "localhost:" + port, map[string]string{"Origin": "http://localhost:" + port}, http.StatusOK},
		{"localhost origin, Host 127.0.0.1", "", map[string]string{"Origin": "http://localhost:" + port}, http.StatusForbidden},
		{"evil origin", "", map[string]string{"Origin": "http://evil.example"}, http.StatusForbidden},
		{"loopback origin, other port", "", map[string]string{"Origin": "http://127.0.0.1:1"}, http.StatusForbidden},
		{"null origin", "", map[string]string{"Origin": "null"}, http.StatusForbidden},
		{"evil host", "evil.example", nil, http.StatusForbidden},
		{"evil host with port", "evil.example:" + port, nil, http.StatusForbidden},
		{"localhost host", "localhost:" + port, nil, http.StatusOK},
	}
	for _, c := range cases {
		code, body := rawmcp.Initialize(t, url, c.host, c.hdr)
		if code != c.want {
			t.Errorf("%s: want %d, got %d: %.200s", c.name, c.want, code, body)
		}
	}
	// The MCP session itself works with a client that sends no Origin.
	cs := connectHTTP(t, p, nil)
	callOK(t, cs, "get_runtime_profile", nil)
}

func TestBlackboxHTTPToken(t *testing.T) {
	t.Parallel()
	const token = "s3cret-token-for-blackbox"
	p := startServe(t, "--token", token)
	url := p.mcpURL()
	for _, c := range []struct {
		name string
		hdr  map[string]string
		want int
	}{
		{"no token", nil, http.StatusUnauthorized},
		{"wrong token", map[string]string{"Authorization": "Bearer nope"}, http.StatusUnauthorized},
		{"basic auth", map[string]string{"Authorization": "Basic " + token}, http.StatusUnauthorized},
		{"right token", map[string]string{"Authorization": "Bearer " + token}, http.StatusOK},
		// The Origin check still applies with a valid token.
		{"right token, evil origin", map[string]string{"Authorization": "Bearer " + token, "Origin": "http://evil.example"}, http.StatusForbidden},
	} {
		if code, body := rawmcp.Initialize(t, url, "", c.hdr); code != c.want {
			t.Errorf("%s: want %d, got %d: %.200s", c.name, c.want, code, body)
		}
	}
	dctx, dcancel := fixture.Context(t)
	defer dcancel()
	if _, err := dialHTTP(dctx, url, nil); err == nil {
		t.Errorf("an MCP client without the token connected")
	}
	cs := connectHTTP(t, p, http.Header{"Authorization": {"Bearer " + token}})
	run := callOK(t, cs, "run_task_template", obj{"templateId": "dev_echo", "inputs": obj{}, "options": obj{"mode": "sync"}})
	if run["status"] != "succeeded" {
		t.Fatalf("run with the token: %v", run["status"])
	}
	// A token can also come from BROWSERTASK_TOKEN; /healthz stays open.
	resp, err := http.Get("http://" + p.addr + "/healthz")
	if err != nil || resp.StatusCode != http.StatusOK {
		t.Errorf("/healthz: %v %v", err, resp)
	}
	if resp != nil {
		resp.Body.Close()
	}
}

func TestBlackboxNonLoopbackNeedsToken(t *testing.T) {
	t.Parallel()
	for _, addr := range []string{"0.0.0.0:0", ":0"} {
		ctx, cancel := fixture.Context(t)
		cmd := exec.CommandContext(ctx, bbBinary, "serve", "--addr", addr, "--db", t.TempDir()+"/x.db")
		out, err := cmd.CombinedOutput()
		timedOut := ctx.Err() != nil
		cancel()
		if timedOut {
			t.Fatalf("serve --addr %s without a token kept running instead of refusing", addr)
		}
		ee, ok := err.(*exec.ExitError)
		if !ok || ee.ExitCode() == 0 {
			t.Fatalf("serve --addr %s without a token: want a non-zero exit, got %v\n%s", addr, err, out)
		}
		if s := string(out); !strings.Contains(s, "token") || !strings.Contains(s, "refusing") {
			t.Errorf("serve --addr %s: the message should explain that a token is required, got:\n%s", addr, s)
		}
	}
	// The same address with a token starts (and reports isRemote).
	p := startServe(t, "--addr", "0.0.0.0:0", "--token", "tok")
	port := p.addr[strings.LastIndexByte(p.addr, ':')+1:]
	p.addr = "127.0.0.1:" + port
	cs := connectHTTP(t, p, http.Header{"Authorization": {"Bearer tok"}})
	prof := callOK(t, cs, "get_runtime_profile", nil)
	if prof["isRemote"] != true {
		t.Errorf("profile.isRemote with a non-loopback --addr: want true, got %v", prof["isRemote"])
	}
}
