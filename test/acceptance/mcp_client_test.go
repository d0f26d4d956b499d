package acceptance

// MCP client side of the black-box harness: connecting over Streamable HTTP
// and stdio with the go-sdk client, calling tools with the structuredContent
// == text-block check, and reading runs.

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/browsertask/browsertask/internal/fixture"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// headerTransport adds fixed headers to every request.
type headerTransport struct {
	base http.RoundTripper
	hdr  http.Header
}

func (h headerTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	for k, v := range h.hdr {
		r.Header[k] = v
	}
	return h.base.RoundTrip(r)
}

// connectHTTP opens an MCP client session to a serve process over
// Streamable HTTP, with extra headers (e.g. Authorization) when given.
func connectHTTP(t testing.TB, p *proc, hdr http.Header) *sdk.ClientSession {
	t.Helper()
	return connectHTTPProgress(t, p, hdr, nil)
}

// connectHTTPProgress is connectHTTP recording progress notifications in pl.
func connectHTTPProgress(t testing.TB, p *proc, hdr http.Header, pl *progressLog) *sdk.ClientSession {
	t.Helper()
	ctx, cancel := fixture.Context(t)
	defer cancel()
	cs, err := dialHTTPProgress(ctx, p.mcpURL(), hdr, pl)
	if err != nil {
		t.Fatalf("connect over HTTP to %s: %v", p.mcpURL(), err)
	}
	t.Cleanup(func() { cs.Close() })
	return cs
}

// dialHTTP is connectHTTP without a test, for goroutines and error cases;
// ctx bounds the connection (a test's: fixture.Context).
func dialHTTP(ctx context.Context, endpoint string, hdr http.Header) (*sdk.ClientSession, error) {
	return dialHTTPProgress(ctx, endpoint, hdr, nil)
}

func dialHTTPProgress(ctx context.Context, endpoint string, hdr http.Header, pl *progressLog) (*sdk.ClientSession, error) {
	hc := &http.Client{Transport: headerTransport{base: http.DefaultTransport, hdr: hdr}}
	client := newTestClient(pl)
	return client.Connect(ctx, &sdk.StreamableClientTransport{Endpoint: endpoint, HTTPClient: hc, MaxRetries: -1}, nil)
}

// startStdio launches `browsertask mcp --http=off` and connects the go-sdk
// client to it over stdin/stdout.
func startStdio(t testing.TB, args ...string) (*sdk.ClientSession, *proc) {
	t.Helper()
	return startStdioProgress(t, nil, args...)
}

// startStdioProgress is startStdio recording progress notifications in pl.
func startStdioProgress(t testing.TB, pl *progressLog, args ...string) (*sdk.ClientSession, *proc) {
	t.Helper()
	p := newProcCmd(t, "mcp", append([]string{"--http=off"}, args...))
	client := newTestClient(pl)
	ctx, cancel := fixture.Context(t)
	defer cancel()
	cs, err := client.Connect(ctx, &sdk.CommandTransport{Command: p.cmd, TerminateDuration: 3 * time.Second}, nil)
	if err != nil {
		if p.cmd.Process != nil {
			_ = syscall.Kill(-p.cmd.Process.Pid, syscall.SIGKILL)
		}
		t.Fatalf("connect over stdio: %v\n%s", err, p.logTail(40))
	}
	// CommandTransport waits for the process itself in Close; here we only
	// observe its end through the session.
	go func() {
		_ = cs.Wait()
		close(p.done)
	}()
	t.Cleanup(func() {
		closed := make(chan struct{})
		go func() { cs.Close(); close(closed) }()
		select {
		case <-closed:
		case <-time.After(8 * time.Second):
			_ = syscall.Kill(-p.cmd.Process.Pid, syscall.SIGKILL)
		}
		if p.cmd.Process != nil {
			_ = syscall.Kill(-p.cmd.Process.Pid, syscall.SIGKILL)
		}
		if t.Failed() {
			t.Logf("---- tail of %s ----\n%s", filepath.Base(p.logPath), p.logTail(80))
		}
	})
	return cs, p
}

// progressLog records the progress notifications a client received, by
// progress token.
type progressLog struct {
	mu      sync.Mutex
	byToken map[string][]*sdk.ProgressNotificationParams
}

func newProgressLog() *progressLog {
	return &progressLog{byToken: map[string][]*sdk.ProgressNotificationParams{}}
}

// of returns the notifications received for token.
func (pl *progressLog) of(token string) []*sdk.ProgressNotificationParams {
	pl.mu.Lock()
	defer pl.mu.Unlock()
	return append([]*sdk.ProgressNotificationParams(nil), pl.byToken[token]...)
}

// newTestClient returns a go-sdk client that records progress in pl (if set).
func newTestClient(pl *progressLog) *sdk.Client {
	opts := &sdk.ClientOptions{}
	if pl != nil {
		opts.ProgressNotificationHandler = func(_ context.Context, req *sdk.ProgressNotificationClientRequest) {
			tok := fmt.Sprint(req.Params.ProgressToken)
			pl.mu.Lock()
			pl.byToken[tok] = append(pl.byToken[tok], req.Params)
			pl.mu.Unlock()
		}
	}
	return sdk.NewClient(&sdk.Implementation{Name: "blackbox-test", Version: "1"}, opts)
}

// obj is a decoded JSON object.
type obj = map[string]any

// tryCall calls tool and returns its structuredContent (checked equal to the
// JSON of its single text block) and isError. It never touches a testing.T,
// so goroutines may use it.
func tryCall(ctx context.Context, cs *sdk.ClientSession, tool string, args any) (obj, bool, error) {
	if args == nil {
		args = obj{}
	}
	res, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: tool, Arguments: args})
	if err != nil {
		return nil, false, fmt.Errorf("%s: protocol error: %w", tool, err)
	}
	// A one-line summary, the JSON, then only resource links and images.
	if len(res.Content) < 2 {
		return nil, res.IsError, fmt.Errorf("%s: want a summary and a JSON block, got %d block(s)", tool, len(res.Content))
	}
	if sum, ok := res.Content[0].(*sdk.TextContent); !ok || sum.Text == "" || strings.Contains(sum.Text, "\n") || json.Valid([]byte(sum.Text)) {
		return nil, res.IsError, fmt.Errorf("%s: first block should be a one-line summary, got %#v", tool, res.Content[0])
	}
	tc, ok := res.Content[1].(*sdk.TextContent)
	if !ok {
		return nil, res.IsError, fmt.Errorf("%s: second block is %T, want text", tool, res.Content[1])
	}
	for i, c := range res.Content[2:] {
		switch c.(type) {
		case *sdk.ResourceLink, *sdk.ImageContent:
		default:
			return nil, res.IsError, fmt.Errorf("%s: block %d is %T, want a resource link or an image", tool, i+2, c)
		}
	}
	var fromText any
	if err := json.Unmarshal([]byte(tc.Text), &fromText); err != nil {
		return nil, res.IsError, fmt.Errorf("%s: text block is not JSON: %v: %.200s", tool, err, tc.Text)
	}
	sb, err := json.Marshal(res.StructuredContent)
	if err != nil {
		return nil, res.IsError, fmt.Errorf("%s: structuredContent: %v", tool, err)
	}
	var structured any
	if err := json.Unmarshal(sb, &structured); err != nil {
		return nil, res.IsError, fmt.Errorf("%s: structuredContent: %v", tool, err)
	}
	a, _ := json.Marshal(fromText)
	b, _ := json.Marshal(structured)
	if !bytes.Equal(a, b) {
		return nil, res.IsError, fmt.Errorf("%s: text block differs from structuredContent:\ntext: %.300s\nstructured: %.300s", tool, a, b)
	}
	m, ok := structured.(obj)
	if !ok {
		return nil, res.IsError, fmt.Errorf("%s: structuredContent is %T, want object", tool, structured)
	}
	return m, res.IsError, nil
}

// call is tryCall that fails the test on a protocol or shape problem.
func call(t testing.TB, cs *sdk.ClientSession, tool string, args any) (obj, bool) {
	t.Helper()
	ctx, cancel := fixture.Context(t)
	defer cancel()
	m, isErr, err := tryCall(ctx, cs, tool, args)
	if err != nil {
		t.Fatal(err)
	}
	return m, isErr
}

// callOK calls tool and fails the test unless the result is a success.
func callOK(t testing.TB, cs *sdk.ClientSession, tool string, args any) obj {
	t.Helper()
	m, isErr := call(t, cs, tool, args)
	if isErr {
		t.Fatalf("%s(%v): unexpected isError result: %v", tool, args, m)
	}
	return m
}

// callErr calls tool, requires an isError result carrying a domain error with
// a recovery sentence, and returns its code and message.
func callErr(t testing.TB, cs *sdk.ClientSession, tool string, args any) (code, msg string) {
	t.Helper()
	m, isErr := call(t, cs, tool, args)
	if !isErr {
		t.Fatalf("%s(%v): want an isError result, got %v", tool, args, m)
	}
	code, _ = m["errorCode"].(string)
	msg, _ = m["message"].(string)
	if code == "" || msg == "" || m["recovery"] == "" || m["recovery"] == nil {
		t.Fatalf("%s: error result lacks errorCode/message/recovery: %v", tool, m)
	}
	return code, msg
}

// num reads a JSON number field as int64 (-1 when absent or not a number).
func num(m obj, key string) int64 {
	f, ok := m[key].(float64)
	if !ok {
		return -1
	}
	return int64(f)
}

// sub returns the object at key (nil when absent or not an object).
func sub(m obj, key string) obj {
	o, _ := m[key].(obj)
	return o
}

// errCode returns run.error.errorCode ("" when error is null).
func errCode(run obj) string {
	if e := sub(run, "error"); e != nil {
		s, _ := e["errorCode"].(string)
		return s
	}
	return ""
}

// terminal reports whether a status is terminal.
func terminal(status any) bool {
	switch status {
	case "succeeded", "partial_success", "failed", "canceled":
		return true
	}
	return false
}

// getRun fetches a run and fails the test unless it is found.
func getRun(t testing.TB, cs *sdk.ClientSession, runID string) obj {
	t.Helper()
	return callOK(t, cs, "get_task_run", obj{"runId": runID})
}

// waitRun polls get_task_run until cond holds, giving up near the test's
// deadline (fixture.Context): how long a run takes is not what the callers
// promise, and a loaded machine only makes the wait longer.
func waitRun(t testing.TB, cs *sdk.ClientSession, runID string, what string, cond func(obj) bool) obj {
	t.Helper()
	ctx, cancel := fixture.Context(t)
	defer cancel()
	for {
		run := getRun(t, cs, runID)
		if cond(run) {
			return run
		}
		select {
		case <-ctx.Done():
			t.Fatalf("run %s: %s not reached before the test's deadline; last: status=%v progress=%v error=%v", runID, what, run["status"], run["progress"], run["error"])
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// waitTerminal waits for the run to end and returns it.
func waitTerminal(t testing.TB, cs *sdk.ClientSession, runID string) obj {
	t.Helper()
	return waitRun(t, cs, runID, "a terminal status", func(r obj) bool { return terminal(r["status"]) })
}

// submitAsync starts a run in async mode and returns its runId.
func submitAsync(t testing.TB, cs *sdk.ClientSession, templateID string, inputs obj, opts obj) string {
	t.Helper()
	o := obj{"mode": "async"}
	for k, v := range opts {
		o[k] = v
	}
	h := callOK(t, cs, "run_task_template", obj{"templateId": templateID, "inputs": inputs, "options": o})
	id, _ := h["runId"].(string)
	if !strings.HasPrefix(id, "run_") || h["mode"] != "async" {
		t.Fatalf("async answer: want runId run_… and mode async, got %v", h)
	}
	return id
}

// countRuns returns list_task_runs' total for a filter.
func countRuns(t testing.TB, cs *sdk.ClientSession, filter obj) int64 {
	t.Helper()
	args := obj{"limit": 1}
	for k, v := range filter {
		args[k] = v
	}
	return num(callOK(t, cs, "list_task_runs", args), "total")
}
