package mcp

import (
	"context"
	"encoding/json"
	"log/slog"
	"path/filepath"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/browsertask/browsertask/db"
	"github.com/browsertask/browsertask/engine"
	"github.com/browsertask/browsertask/internal/devtpl"
	"github.com/browsertask/browsertask/internal/fixture"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// The MCP layer's tests run the real engine on a temporary SQLite file with
// the browserless dev templates (internal/devtpl): dev_echo sleeps sleepMs
// per item for items items, optionally stores content as an artifact and
// fails on request.

// engineOpts adjust startEngine. Zero values are fine.
type engineOpts struct {
	cfg engine.Config
	// path is the database file; "" is a new one under t.TempDir().
	path string
	// wrap, when set, wraps the store the engine uses.
	wrap func(engine.Store) engine.Store
}

// startEngine runs the real engine with the dev templates until the
// returned stop is called (also at cleanup).
func startEngine(t *testing.T, o engineOpts) (*engine.Engine, func()) {
	t.Helper()
	if o.path == "" {
		o.path = filepath.Join(t.TempDir(), "bt.db")
	}
	if o.cfg.PollInterval == 0 {
		o.cfg.PollInterval = 20 * time.Millisecond
	}
	if o.cfg.ShutdownGrace == 0 {
		o.cfg.ShutdownGrace = 100 * time.Millisecond
	}
	store, err := db.Open(context.Background(), o.path)
	if err != nil {
		t.Fatal(err)
	}
	var st engine.Store = store
	if o.wrap != nil {
		st = o.wrap(store)
	}
	eng, err := engine.New(engine.Options{Store: st, Templates: []engine.Template{devtpl.Echo{}, devtpl.Echo{Once: true}, devtpl.ToolJob{}},
		Config: o.cfg, Logger: slog.New(slog.DiscardHandler), Version: "test", ProtocolVersions: ProtocolVersions()})
	if err != nil {
		store.Close()
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { _ = eng.Run(ctx); close(done) }()
	var once sync.Once
	stop := func() {
		once.Do(func() {
			cancel()
			<-done
			store.Close()
		})
	}
	t.Cleanup(stop)
	return eng, stop
}

// newEngine is startEngine with cfg, stopped at cleanup.
func newEngine(t *testing.T, cfg engine.Config) *engine.Engine {
	t.Helper()
	eng, _ := startEngine(t, engineOpts{cfg: cfg})
	return eng
}

// dev_echo inputs for the usual cases.
var (
	// instantRun succeeds at once with the artifact "hello world".
	instantRun = map[string]any{"content": "hello world", "mimeType": "text/plain"}
	// failingRun fails with STEP_EXECUTION_FAILED.
	failingRun = map[string]any{"fail": true}
	// slowRun runs for ten minutes unless cancelled.
	slowRun = map[string]any{"sleepMs": 600000}
)

// runArgs are run_task_template arguments for dev_echo with inputs, mode
// ("" leaves it out) and further options.
func runArgs(inputs map[string]any, mode string, extra map[string]any) map[string]any {
	opts := map[string]any{}
	if mode != "" {
		opts["mode"] = mode
	}
	for k, v := range extra {
		opts[k] = v
	}
	return map[string]any{"templateId": "dev_echo", "inputs": inputs, "options": opts}
}

// onlyRun waits until the engine holds exactly one run and returns it: the
// run a call in flight submitted.
func onlyRun(t *testing.T, eng *engine.Engine) *engine.Run {
	t.Helper()
	var run *engine.Run
	eventually(t, "the call's run", func() bool {
		l, err := eng.List(context.Background(), engine.ListQuery{})
		if err != nil || l.Total != 1 {
			return false
		}
		run = l.Runs[0]
		return true
	})
	return run
}

// logRecorder is a slog.Handler keeping the messages logged, so a test
// can wait for the server to say what it did (how a cancelled request
// ended) instead of sleeping.
type logRecorder struct {
	mu      sync.Mutex
	msgs    []string
	changed chan struct{} // closed and replaced on every record
}

func newLogRecorder() *logRecorder { return &logRecorder{changed: make(chan struct{})} }

func (l *logRecorder) Enabled(context.Context, slog.Level) bool { return true }

func (l *logRecorder) Handle(_ context.Context, r slog.Record) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.msgs = append(l.msgs, r.Message)
	close(l.changed)
	l.changed = make(chan struct{})
	return nil
}

func (l *logRecorder) WithAttrs([]slog.Attr) slog.Handler { return l }
func (l *logRecorder) WithGroup(string) slog.Handler      { return l }

// wait returns once a message starting with prefix was logged.
func (l *logRecorder) wait(t *testing.T, prefix string) {
	t.Helper()
	timeout := time.After(10 * time.Second)
	for {
		l.mu.Lock()
		ch := l.changed
		for _, m := range l.msgs {
			if strings.HasPrefix(m, prefix) {
				l.mu.Unlock()
				return
			}
		}
		l.mu.Unlock()
		select {
		case <-ch:
		case <-timeout:
			t.Fatalf("the server never logged %q", prefix)
		}
	}
}

// testClient is a go-sdk client session connected to a Server over
// in-memory transports, with the advertised tools and received progress.
type testClient struct {
	cs    *sdk.ClientSession
	tools map[string]*sdk.Tool

	mu       sync.Mutex
	progress []*sdk.ProgressNotificationParams
	// progressed is closed and replaced on every progress notification.
	progressed chan struct{}
}

// newTestClient connects a client to a server around eng.
func newTestClient(t *testing.T, eng Engine) *testClient {
	t.Helper()
	return connectClient(t, NewServer(eng, ServerOptions{Version: "test"}))
}

// connectClient connects a client to srv.
func connectClient(t *testing.T, srv *Server) *testClient {
	t.Helper()
	st, ct := sdk.NewInMemoryTransports()
	ctx, cancel := context.WithCancel(context.Background())
	ss, err := srv.sdk.Connect(ctx, st, nil)
	if err != nil {
		t.Fatal(err)
	}
	tc := &testClient{tools: map[string]*sdk.Tool{}, progressed: make(chan struct{})}
	client := sdk.NewClient(&sdk.Implementation{Name: "test-client", Version: "1"}, &sdk.ClientOptions{
		ProgressNotificationHandler: func(_ context.Context, req *sdk.ProgressNotificationClientRequest) {
			tc.mu.Lock()
			tc.progress = append(tc.progress, req.Params)
			close(tc.progressed)
			tc.progressed = make(chan struct{})
			tc.mu.Unlock()
		},
	})
	cs, err := client.Connect(ctx, ct, nil)
	if err != nil {
		t.Fatal(err)
	}
	tc.cs = cs
	t.Cleanup(func() {
		cs.Close()
		ss.Wait()
		cancel()
	})
	list, err := cs.ListTools(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, tool := range list.Tools {
		tc.tools[tool.Name] = tool
	}
	return tc
}

// waitProgress returns once n progress notifications arrived.
func (tc *testClient) waitProgress(t *testing.T, n int) {
	t.Helper()
	timeout := time.After(10 * time.Second)
	for {
		tc.mu.Lock()
		got, ch := len(tc.progress), tc.progressed
		tc.mu.Unlock()
		if got >= n {
			return
		}
		select {
		case <-ch:
		case <-timeout:
			t.Fatalf("%d progress notifications, want %d", got, n)
		}
	}
}

func (tc *testClient) progressSeen() []*sdk.ProgressNotificationParams {
	tc.mu.Lock()
	defer tc.mu.Unlock()
	return append([]*sdk.ProgressNotificationParams(nil), tc.progress...)
}

// call calls a tool and checks the result's invariants: structuredContent
// present, one text block with the same JSON, and structuredContent valid
// against the tool's advertised outputSchema. It returns the decoded
// structured content.
func (tc *testClient) call(t *testing.T, ctx context.Context, name string, args any) (*sdk.CallToolResult, map[string]any) {
	t.Helper()
	res, err := tc.cs.CallTool(ctx, &sdk.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		t.Fatalf("%s: protocol error: %v", name, err)
	}
	return res, tc.check(t, name, res)
}

func (tc *testClient) check(t *testing.T, name string, res *sdk.CallToolResult) map[string]any {
	t.Helper()
	if res.StructuredContent == nil {
		t.Fatalf("%s: no structuredContent", name)
	}
	// The answer's shape (answers.go): a one-line summary, the JSON, then
	// only resource links and images.
	if len(res.Content) < 2 {
		t.Fatalf("%s: want a summary and a JSON block, got %d block(s)", name, len(res.Content))
	}
	summary, ok := res.Content[0].(*sdk.TextContent)
	if !ok || summary.Text == "" || strings.Contains(summary.Text, "\n") || json.Valid([]byte(summary.Text)) {
		t.Fatalf("%s: first block should be a one-line summary, got %#v", name, res.Content[0])
	}
	text, ok := res.Content[1].(*sdk.TextContent)
	if !ok {
		t.Fatalf("%s: second block is %T, want text", name, res.Content[1])
	}
	for i, c := range res.Content[2:] {
		switch c.(type) {
		case *sdk.ResourceLink, *sdk.ImageContent:
		default:
			t.Fatalf("%s: block %d is %T, want a resource link or an image", name, i+2, c)
		}
	}
	var fromText, fromStruct map[string]any
	if err := json.Unmarshal([]byte(text.Text), &fromText); err != nil {
		t.Fatalf("%s: text block is not JSON: %v", name, err)
	}
	sb, _ := json.Marshal(res.StructuredContent)
	if err := json.Unmarshal(sb, &fromStruct); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(fromText, fromStruct) {
		t.Fatalf("%s: text and structuredContent differ:\n%s\n%s", name, text.Text, sb)
	}
	tool := tc.tools[name]
	if tool == nil {
		t.Fatalf("tool %s not listed", name)
	}
	schemaJSON, _ := json.Marshal(tool.OutputSchema)
	schema, err := engine.CompileSchema(schemaJSON)
	if err != nil {
		t.Fatalf("%s: outputSchema does not compile: %v", name, err)
	}
	if verr := schema.Validate(sb, ""); verr != nil {
		t.Fatalf("%s: structuredContent %s does not match outputSchema: %v", name, sb, verr)
	}
	return fromStruct
}

// wantError asserts an isError result with the given code and returns its message.
func wantError(t *testing.T, res *sdk.CallToolResult, sc map[string]any, code engine.ErrorCode) string {
	t.Helper()
	if !res.IsError {
		t.Fatalf("want isError result with %s, got success %v", code, sc)
	}
	if sc["errorCode"] != string(code) {
		t.Fatalf("want errorCode %s, got %v (%v)", code, sc["errorCode"], sc["message"])
	}
	if r, _ := sc["recovery"].(string); r == "" {
		t.Fatalf("error without recovery: %v", sc)
	}
	msg, _ := sc["message"].(string)
	return msg
}

// eventually polls cond until it holds (fixture.WaitUntil: it gives up
// near the test's deadline, or after a day of a synctest bubble's fake
// clock); how long it takes is not what its callers promise.
func eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	fixture.WaitUntil(t, what, cond)
}
