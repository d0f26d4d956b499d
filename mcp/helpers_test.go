package mcp

import (
	"context"
	"encoding/json"
	"reflect"
	"sync"
	"testing"
	"time"

	"github.com/browsertask/browsertask/engine"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// testClient is a go-sdk client session connected to a Server over
// in-memory transports, with the advertised tools and received progress.
type testClient struct {
	cs    *sdk.ClientSession
	tools map[string]*sdk.Tool

	mu       sync.Mutex
	progress []*sdk.ProgressNotificationParams
}

func newTestClient(t *testing.T, eng Engine) *testClient {
	t.Helper()
	srv := NewServer(eng, ServerOptions{Version: "test"})
	st, ct := sdk.NewInMemoryTransports()
	ctx, cancel := context.WithCancel(context.Background())
	ss, err := srv.sdk.Connect(ctx, st, nil)
	if err != nil {
		t.Fatal(err)
	}
	tc := &testClient{tools: map[string]*sdk.Tool{}}
	client := sdk.NewClient(&sdk.Implementation{Name: "test-client", Version: "1"}, &sdk.ClientOptions{
		ProgressNotificationHandler: func(_ context.Context, req *sdk.ProgressNotificationClientRequest) {
			tc.mu.Lock()
			tc.progress = append(tc.progress, req.Params)
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
	if len(res.Content) != 1 {
		t.Fatalf("%s: want 1 content block, got %d", name, len(res.Content))
	}
	text, ok := res.Content[0].(*sdk.TextContent)
	if !ok {
		t.Fatalf("%s: content is %T, want text", name, res.Content[0])
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

// eventually polls cond until it holds or the deadline passes.
func eventually(t *testing.T, d time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(d)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}
