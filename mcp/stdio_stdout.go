package mcp

import (
	"io"
	"sync"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// A stdio client that stops reading (closes its end of our stdout) can
// never get another answer, yet it may keep stdin open, and a read of
// os.Stdin cannot be interrupted: the session would hang on, holding its
// runs. So the first failed write to stdout (EPIPE: main.go handles
// SIGPIPE, so the write fails instead of killing the process) ends the
// session as a closed stdin does, and `browsertask mcp` hands its runs
// back and exits.

// watchedWriter passes writes to w and closes failed at the first one
// that fails; every later write fails at once with the same error.
type watchedWriter struct {
	w      io.Writer
	once   sync.Once
	failed chan struct{}
	mu     sync.Mutex
	err    error
}

func newWatchedWriter(w io.Writer) *watchedWriter {
	return &watchedWriter{w: w, failed: make(chan struct{})}
}

// Write implements io.Writer.
func (ww *watchedWriter) Write(p []byte) (int, error) {
	ww.mu.Lock()
	err := ww.err
	ww.mu.Unlock()
	if err != nil {
		return 0, err
	}
	n, err := ww.w.Write(p)
	if err != nil {
		ww.mu.Lock()
		ww.err = err
		ww.mu.Unlock()
		ww.once.Do(func() { close(ww.failed) })
	}
	return n, err
}

// writeErr is the first failed write's error (nil while none failed).
func (ww *watchedWriter) writeErr() error {
	ww.mu.Lock()
	defer ww.mu.Unlock()
	return ww.err
}

// endForStdout ends session ss once its stdout failed: the requests still
// waiting end first (as on a signal), then stdin is closed and the session
// with it; waitErr is ss.Wait's result, awaited.
func (s *Server) endForStdout(ss *sdk.ServerSession, in io.Closer, out *watchedWriter, waitErr <-chan error) {
	s.log.Info("stdout closed: the client no longer reads answers; ending the session as if stdin closed", "err", out.writeErr())
	if s.tasks != nil {
		s.tasks.sessions.end(ss)
	}
	_ = in.Close()
	ss.Close()
	<-waitErr
}
