package mcp

import (
	"context"
	"errors"
	"testing"
	"testing/synctest"

	"github.com/browsertask/browsertask/engine"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// panickingEngine is the real engine whose Get panics for "run_panic".
type panickingEngine struct{ Engine }

func (p panickingEngine) Get(ctx context.Context, runID string) (*engine.Run, error) {
	if runID == "run_panic" {
		panic("engine asked to panic")
	}
	return p.Engine.Get(ctx, runID)
}

// TestPanicInAHandlerIsContained: a tool handler that panics answers a
// JSON-RPC internal error and the server keeps serving the same session.
func TestPanicInAHandlerIsContained(t *testing.T) {
	synctest.Test(t, testPanicInAHandlerIsContained)
}

func testPanicInAHandlerIsContained(t *testing.T) {
	tc := newTestClient(t, panickingEngine{newEngine(t, engine.Config{})})
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
