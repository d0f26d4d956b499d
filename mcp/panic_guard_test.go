package mcp

import (
	"context"
	"errors"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestPanicInAHandlerIsContained: a tool handler that panics answers a
// JSON-RPC internal error and the server keeps serving the same session.
func TestPanicInAHandlerIsContained(t *testing.T) {
	tc := newTestClient(t, newFakeEngine())
	ctx := context.Background()
	_, err := tc.cs.CallTool(ctx, &sdk.CallToolParams{Name: "get_task_run", Arguments: map[string]any{"runId": "run_panic"}})
	var werr *jsonrpc.Error
	if !errors.As(err, &werr) || werr.Code != jsonrpc.CodeInternalError {
		t.Fatalf("panicking handler: err %v, want a JSON-RPC internal error", err)
	}
	res, sc := tc.call(t, ctx, "get_task_run", map[string]any{"runId": "run_nope"})
	if msg := wantError(t, res, sc, "RUN_NOT_FOUND"); msg == "" {
		t.Fatal("no answer after the panic")
	}
}
