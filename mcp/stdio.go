package mcp

import (
	"context"
	"errors"
	"io"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// ServeStdio serves one MCP session over newline-delimited JSON on in/out
// (the process's stdin/stdout in `browsertask mcp`). Nothing else may write
// to out. The SDK handles every request on its own goroutine, so a call
// blocked waiting for a run never stalls the others. It returns nil when the
// client closes the stream or ctx ends; in is closed on return when it is an
// io.ReadCloser, which unblocks a pending read.
func (s *Server) ServeStdio(ctx context.Context, in io.Reader, out io.Writer) error {
	rc, ok := in.(io.ReadCloser)
	if !ok {
		rc = io.NopCloser(in)
	}
	err := s.sdk.Run(ctx, &sdk.IOTransport{Reader: rc, Writer: nopWriteCloser{out}})
	if ctx.Err() != nil && errors.Is(err, ctx.Err()) {
		return nil
	}
	if errors.Is(err, io.EOF) || errors.Is(err, sdk.ErrConnectionClosed) {
		return nil
	}
	return err
}

// nopWriteCloser keeps the SDK from closing the caller's writer.
type nopWriteCloser struct{ io.Writer }

// Close implements io.Closer without closing the writer.
func (nopWriteCloser) Close() error { return nil }
