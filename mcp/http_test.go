package mcp

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"

	"github.com/browsertask/browsertask/engine"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

const initBody = `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}`

func newHTTPServer(t *testing.T, opts HTTPOptions) (*httptest.Server, string) {
	t.Helper()
	return newHTTPServerFor(t, newEngine(t, engine.Config{}), opts)
}

func newHTTPServerFor(t *testing.T, eng Engine, opts HTTPOptions) (*httptest.Server, string) {
	t.Helper()
	srv := NewServer(eng, ServerOptions{Version: "test"})
	ts := httptest.NewServer(srv.HTTPHandler(opts))
	t.Cleanup(ts.Close)
	u, _ := url.Parse(ts.URL)
	return ts, u.Port()
}

// post sends an initialize request with the given header tweaks and returns
// the status code and body.
func post(t *testing.T, ts *httptest.Server, body string, mutate func(*http.Request)) (int, string, http.Header) {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, ts.URL+"/mcp", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	if mutate != nil {
		mutate(req)
	}
	resp, err := ts.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b), resp.Header
}

func TestHTTPOriginAndHostGuard(t *testing.T) {
	ts, port := newHTTPServer(t, HTTPOptions{AllowedOrigins: []string{"https://app.example"}})
	cases := []struct {
		name   string
		mutate func(*http.Request)
		want   int
	}{
		{"no origin", nil, 200},
		{"own origin 127.0.0.1", func(r *http.Request) { r.Header.Set("Origin", "http://127.0.0.1:"+port) }, 200},
		{"own origin localhost", func(r *http.Request) { r.Host = "localhost:" + port; r.Header.Set("Origin", "http://localhost:"+port) }, 200},
		{"own origin [::1]", func(r *http.Request) { r.Host = "[::1]:" + port; r.Header.Set("Origin", "http://[::1]:"+port) }, 200},
		// Another loopback name than the request's Host is another origin
		// to a browser (httpguard.OriginRule; the dashboard agrees).
		{"localhost origin, Host 127.0.0.1", func(r *http.Request) { r.Header.Set("Origin", "http://localhost:"+port) }, 403},
		{"allowed origin", func(r *http.Request) { r.Header.Set("Origin", "https://app.example") }, 200},
		{"evil origin", func(r *http.Request) { r.Header.Set("Origin", "http://evil.example") }, 403},
		{"null origin", func(r *http.Request) { r.Header.Set("Origin", "null") }, 403},
		{"loopback other port", func(r *http.Request) { r.Header.Set("Origin", "http://127.0.0.1:1") }, 403},
		{"https own host", func(r *http.Request) { r.Header.Set("Origin", "https://127.0.0.1:"+port) }, 403},
		{"evil host", func(r *http.Request) { r.Host = "evil.example" }, 403},
		{"evil host with port", func(r *http.Request) { r.Host = "evil.example:" + port }, 403},
		{"localhost host", func(r *http.Request) { r.Host = "localhost:" + port }, 200},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			code, body, _ := post(t, ts, initBody, c.mutate)
			if code != c.want {
				t.Fatalf("status %d, want %d (%s)", code, c.want, body)
			}
			if c.want == 200 && !strings.Contains(body, `"protocolVersion":"2025-11-25"`) {
				t.Fatalf("initialize answer: %s", body)
			}
		})
	}
}

func TestHTTPBearerToken(t *testing.T) {
	ts, _ := newHTTPServer(t, HTTPOptions{Token: "s3cret"})
	code, _, h := post(t, ts, initBody, nil)
	if code != 401 || !strings.HasPrefix(h.Get("WWW-Authenticate"), "Bearer") {
		t.Fatalf("missing token: %d %q", code, h.Get("WWW-Authenticate"))
	}
	code, _, _ = post(t, ts, initBody, func(r *http.Request) { r.Header.Set("Authorization", "Bearer wrong") })
	if code != 401 {
		t.Fatalf("wrong token: %d", code)
	}
	code, _, _ = post(t, ts, initBody, func(r *http.Request) { r.Header.Set("Authorization", "Basic czNjcmV0") })
	if code != 401 {
		t.Fatalf("basic auth: %d", code)
	}
	code, body, _ := post(t, ts, initBody, func(r *http.Request) { r.Header.Set("Authorization", "Bearer s3cret") })
	if code != 200 || !strings.Contains(body, "browsertask") {
		t.Fatalf("right token: %d %s", code, body)
	}
	// The Origin check still applies with a valid token.
	code, _, _ = post(t, ts, initBody, func(r *http.Request) {
		r.Header.Set("Authorization", "Bearer s3cret")
		r.Header.Set("Origin", "http://evil.example")
	})
	if code != 403 {
		t.Fatalf("evil origin with token: %d", code)
	}
}

func TestHTTPBodyCap(t *testing.T) {
	ts, _ := newHTTPServer(t, HTTPOptions{})
	big := `{"jsonrpc":"2.0","id":1,"method":"ping","params":{"pad":"` + strings.Repeat("x", MaxRequestBodyBytes) + `"}}`
	code, _, _ := post(t, ts, big, nil)
	if code != http.StatusRequestEntityTooLarge {
		t.Fatalf("5 MiB body: status %d, want 413", code)
	}
}

// roundTripper adds a bearer token to every request of the SDK client.
type roundTripper struct{ token string }

func (rt roundTripper) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+rt.token)
	return http.DefaultTransport.RoundTrip(r)
}

func TestHTTPClientSessionEndToEnd(t *testing.T) {
	eng := newEngine(t, engine.Config{})
	ts, _ := newHTTPServerFor(t, eng, HTTPOptions{Token: "tok"})
	ctx := context.Background()
	var progressMu sync.Mutex
	var progress []float64
	client := sdk.NewClient(&sdk.Implementation{Name: "http-test", Version: "1"}, &sdk.ClientOptions{
		ProgressNotificationHandler: func(_ context.Context, req *sdk.ProgressNotificationClientRequest) {
			progressMu.Lock()
			progress = append(progress, req.Params.Progress)
			progressMu.Unlock()
		},
	})
	cs, err := client.Connect(ctx, &sdk.StreamableClientTransport{
		Endpoint:   ts.URL + "/mcp",
		HTTPClient: &http.Client{Transport: roundTripper{"tok"}},
	}, &sdk.ClientSessionOptions{ProtocolVersion: "2025-11-25"}) // a stateful session
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	if v := cs.InitializeResult().ProtocolVersion; v != "2025-11-25" {
		t.Fatalf("protocol %q", v)
	}
	tc := &testClient{cs: cs, tools: map[string]*sdk.Tool{}}
	list, err := cs.ListTools(ctx, nil)
	// The seven v1 tools, the two v1.1 event tools, the four session tools,
	// answer_task_run and the two profile tools.
	if err != nil || len(list.Tools) != 16 {
		t.Fatalf("tools/list over HTTP: %v, %d tools", err, len(list.Tools))
	}
	for _, tool := range list.Tools {
		tc.tools[tool.Name] = tool
	}
	_, sc := tc.call(t, ctx, "run_task_template", runArgs(instantRun, "sync", nil))
	if sc["status"] != "succeeded" || sc["mode"] != "sync" {
		t.Fatalf("sync over HTTP: %v", sc)
	}
	res, sc := tc.call(t, ctx, "get_task_run", map[string]any{"runId": "run_nope"})
	wantError(t, res, sc, "RUN_NOT_FOUND")

	// Progress notifications reach the HTTP client on the request's stream:
	// three items 300 ms apart report progress 1 before the answer.
	params := &sdk.CallToolParams{Name: "run_task_template", Arguments: runArgs(map[string]any{"items": 3, "sleepMs": 300}, "sync", nil)}
	params.SetProgressToken(7)
	if res, err := cs.CallTool(ctx, params); err != nil || res.IsError {
		t.Fatalf("sync run with progress over HTTP: %+v %v", res, err)
	}
	progressMu.Lock()
	got := append([]float64(nil), progress...)
	progressMu.Unlock()
	if len(got) < 2 || got[len(got)-1] < 1 {
		t.Fatalf("progress over HTTP: %v, want 0 then at least 1", got)
	}

	// Cancelling the HTTP request's context cancels the run.
	cctx, cancel := context.WithCancel(ctx)
	resc := make(chan error, 1)
	go func() {
		_, err := cs.CallTool(cctx, &sdk.CallToolParams{Name: "run_task_template", Arguments: runArgs(slowRun, "sync", nil)})
		resc <- err
	}()
	var slow *engine.Run
	eventually(t, "the slow run", func() bool {
		l, err := eng.List(ctx, engine.ListQuery{Status: "running"})
		if err == nil && l.Total == 1 {
			slow = l.Runs[0]
		}
		return slow != nil
	})
	cancel()
	<-resc
	canceledBy(t, eng, slow.RunID, clientCancelReason)
}
