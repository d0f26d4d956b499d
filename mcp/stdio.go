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
// blocked waiting for a run (a sync call, tasks/result) never stalls the
// others. The connection lifts params.task for the Tasks layer and carries
// notifications/tasks/status. It returns nil when the client closes the
// stream or ctx ends; in is closed on return when it is an io.ReadCloser,
// which unblocks a pending read.
func (s *Server) ServeStdio(ctx context.Context, in io.Reader, out io.Writer) error {
	rc, ok := in.(io.ReadCloser)
	if !ok {
		rc = io.NopCloser(in)
	}
	t := &taskShimTransport{inner: &sdk.IOTransport{Reader: rc, Writer: nopWriteCloser{out}}}
	ss, err := s.sdk.Connect(ctx, t, nil)
	if err != nil {
		return err
	}
	if s.tasks != nil && t.conn != nil {
		s.tasks.sessions.attach(ss, t.conn)
	}
	waitErr := make(chan error, 1)
	go func() { waitErr <- ss.Wait() }()
	select {
	case <-ctx.Done():
		// End the requests still waiting (tasks/result, sync calls) first:
		// ss.Close waits for in-flight requests, and closing os.Stdin does
		// not interrupt a pending read.
		if s.tasks != nil {
			s.tasks.sessions.end(ss)
		}
		_ = rc.Close()
		ss.Close()
		<-waitErr
		return nil
	case err = <-waitErr:
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
