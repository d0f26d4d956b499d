package mcp

import (
	"context"
	"fmt"
	"runtime/debug"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// recoverPanics is the outermost receiving middleware: a panic while
// handling any request (a tool, a Tasks method, a resource read) is logged
// with its stack and answered as a JSON-RPC internal error, instead of
// ending the process and every other client's requests with it. The SDK
// runs handlers without a recover of its own.
func (s *Server) recoverPanics(next sdk.MethodHandler) sdk.MethodHandler {
	return func(ctx context.Context, method string, req sdk.Request) (res sdk.Result, err error) {
		defer func() {
			if p := recover(); p != nil {
				s.log.Error("internal error while handling a request", "method", method, "panic", p, "stack", string(debug.Stack()))
				res, err = nil, &jsonrpc.Error{Code: jsonrpc.CodeInternalError,
					Message: fmt.Sprintf("internal error while handling %s (the server keeps running; please report this): %v", method, p)}
			}
		}()
		return next(ctx, method, req)
	}
}
