package mcp

import (
	"context"
	"encoding/json"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/browsertask/browsertask/engine"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// echoPlugin is a Plugin with one tool, plugin_echo, whose work is a
// dev_echo run (its arguments are the run's inputs); {"taskOnly": true}
// makes it a tool that needs a task. It answers its succeeded runs with
// its own text and its failed runs with a JSON-RPC error.
type echoPlugin struct{}

func (echoPlugin) Capabilities(*sdk.ServerCapabilities) {}

func (echoPlugin) Install(srv *sdk.Server, host *PluginHost) {
	srv.AddTool(&sdk.Tool{Name: "plugin_echo", InputSchema: json.RawMessage(`{"type":"object"}`)},
		func(ctx context.Context, req *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
			var in map[string]any
			_ = json.Unmarshal(req.Params.Arguments, &in)
			if in["taskOnly"] == true {
				if !host.TaskAllowed(ctx) {
					return nil, host.ErrTaskRequired()
				}
				delete(in, "taskOnly")
			}
			inputs, _ := json.Marshal(in)
			return host.Run(ctx, engine.SubmitRequest{TemplateID: "dev_echo", Inputs: inputs, Mode: engine.ModeSync})
		})
}

func (echoPlugin) RunAnswer(run *engine.Run) (*sdk.CallToolResult, *jsonrpc.Error) {
	switch run.Status {
	case engine.StatusSucceeded:
		return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: "plugin answer for " + run.RunID}}}, nil
	case engine.StatusFailed:
		return nil, &jsonrpc.Error{Code: -32000, Message: "plugin run failed"}
	}
	return nil, nil
}

// TestPluginToolsRunAsTasks: a Plugin's tool is listed beside the
// server's 14; its run answers with the plugin's RunAnswer, inline for a
// client without the Tasks extension and through tasks/get for one with
// it (completed with the result, failed with the JSON-RPC error); a tool
// that needs a task is -32021; a plugin that declares no prompts leaves
// prompts/* at -32601.
func TestPluginToolsRunAsTasks(t *testing.T) {
	eng := newEngine(t, engine.Config{})
	ts := httptest.NewServer(NewServer(eng, ServerOptions{Version: "test", Plugin: echoPlugin{}}).HTTPHandler(HTTPOptions{}))
	t.Cleanup(ts.Close)
	c := &modernClient{t: t, url: ts.URL + "/mcp"}
	call := func(args map[string]any, o modernOpts) modernReply {
		return c.call("tools/call", map[string]any{"name": "plugin_echo", "arguments": args}, o)
	}
	taskOf := func(r modernReply) map[string]any {
		t.Helper()
		id, _ := r.result["taskId"].(string)
		if r.result["resultType"] != "task" || id == "" {
			t.Fatalf("want a task: %s", r.raw)
		}
		if _, err := eng.Wait(t.Context(), id, nil); err != nil {
			t.Fatal(err)
		}
		return c.call("tasks/get", map[string]any{"taskId": id}, modernOpts{}).result
	}

	if tools, _ := c.call("tools/list", nil, modernOpts{}).result["tools"].([]any); len(tools) != 17 {
		t.Fatalf("tools/list: %d tools, want the 16 of the server and plugin_echo", len(tools))
	}
	if r := c.call("prompts/list", nil, modernOpts{}); r.code() != -32601 {
		t.Errorf("prompts/list with a plugin that declares no prompts: %s", r.raw)
	}

	r := call(map[string]any{"items": 1}, modernOpts{noTasks: true})
	if r.result["resultType"] != "complete" || !strings.Contains(r.raw, "plugin answer for run_") {
		t.Errorf("inline answer: %s", r.raw)
	}
	if r := call(map[string]any{"fail": true}, modernOpts{noTasks: true}); r.code() != -32000 {
		t.Errorf("inline failure: %s", r.raw)
	}
	got := taskOf(call(map[string]any{"items": 1, "sleepMs": 50}, modernOpts{}))
	content, _ := got["result"].(map[string]any)["content"].([]any)
	if got["status"] != "completed" || len(content) != 1 || !strings.HasPrefix(content[0].(map[string]any)["text"].(string), "plugin answer for run_") {
		t.Errorf("completed task: %v", got)
	}
	got = taskOf(call(map[string]any{"fail": true, "sleepMs": 50}, modernOpts{}))
	if e, _ := got["error"].(map[string]any); got["status"] != "failed" || e["code"] != float64(-32000) || got["result"] != nil {
		t.Errorf("failed task: %v", got)
	}
	if r := call(map[string]any{"taskOnly": true}, modernOpts{noTasks: true}); r.code() != -32021 || r.status != 400 {
		t.Errorf("a tool that needs a task, without the extension: %d %s", r.status, r.raw)
	}
}
