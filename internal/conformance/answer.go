package conformance

import (
	"encoding/json"

	"github.com/browsertask/browsertask/engine"
	"github.com/browsertask/browsertask/internal/devtpl"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// RunAnswer is how a fixture tool replies for its finished dev_tool_job
// run: the tool's own CallToolResult of a run that succeeded, or the
// JSON-RPC error a failed run carries (details.jsonrpcError); never both.
// Both nil for any other run (another template, a canceled run, a failure
// without a JSON-RPC error), which the server answers as it answers
// every run.
func (fs *Fixtures) RunAnswer(run *engine.Run) (*sdk.CallToolResult, *jsonrpc.Error) {
	return fs.toolResult(run), rpcErrorOf(run)
}

// toolResult is the CallToolResult of a finished run of a fixture
// tool (dev_tool_job), nil for any other run.
func (fs *Fixtures) toolResult(run *engine.Run) *sdk.CallToolResult {
	if run.TemplateID != devtpl.ToolJobID || run.Status == engine.StatusFailed || run.Status == engine.StatusCanceled {
		return nil
	}
	var out struct {
		Tool      string                     `json:"tool"`
		Arguments map[string]any             `json:"arguments"`
		Answers   map[string]json.RawMessage `json:"answers"`
	}
	if json.Unmarshal(run.Result, &out) != nil {
		return nil
	}
	f, ok := fs.tools[out.Tool]
	if !ok || f.render == nil {
		return nil
	}
	return f.render(out.Arguments, out.Answers)
}

// rpcErrorOf is the JSON-RPC error a failed fixture run ended with
// (its details.jsonrpcError), nil for any other run.
func rpcErrorOf(run *engine.Run) *jsonrpc.Error {
	if run.TemplateID != devtpl.ToolJobID || run.Status != engine.StatusFailed || run.Error == nil {
		return nil
	}
	raw, ok := run.Error.Details["jsonrpcError"]
	if !ok {
		return nil
	}
	b, err := json.Marshal(raw)
	if err != nil {
		return nil
	}
	var e jsonrpc.Error
	if json.Unmarshal(b, &e) != nil || e.Message == "" {
		return nil
	}
	return &e
}
