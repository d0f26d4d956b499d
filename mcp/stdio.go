package mcp

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/browsertask/browsertask/engine"
)

// MaxStdioLineBytes is the longest message accepted on stdio: one line of
// newline-delimited JSON, 4 MiB like an HTTP request body. A longer line is
// answered with a JSON-RPC -32600 error (id null) and skipped up to its
// newline; the next line is read as usual.
const MaxStdioLineBytes = MaxRequestBodyBytes

// ServeStdio serves one MCP session over newline-delimited JSON on in/out
// (the process's stdin/stdout in `browsertask mcp`). Nothing else may write
// to out. The SDK handles every request on its own goroutine, so a call
// blocked waiting for a run (a sync call, tasks/result) never stalls the
// others. The connection lifts params.task for the Tasks layer and carries
// notifications/tasks/status.
//
// Every line is checked before the SDK reads it (lineFilter): the SDK ends
// the session at the first line it cannot decode, so one stray line from a
// client (or a NUL byte, or a line over MaxStdioLineBytes) would end the
// whole process. Such a line is answered with a JSON-RPC error instead
// (-32700 for one that is not JSON, -32600 for JSON that is not a valid
// message) and the session goes on.
//
// It returns nil when the client closes the stream (stdin, or stdout:
// stdio_stdout.go) or ctx ends; in is
// closed on return when it is an io.ReadCloser, which unblocks a pending
// read.
func (s *Server) ServeStdio(ctx context.Context, in io.Reader, out io.Writer) error {
	rc, ok := in.(io.ReadCloser)
	if !ok {
		rc = io.NopCloser(in)
	}
	ww := newWatchedWriter(out)
	w := &lockedWriter{w: ww}
	lines := newLineFilter(rc, w, MaxStdioLineBytes, s.log)
	t := &taskShimTransport{inner: &sdk.IOTransport{Reader: lines, Writer: w}}
	ss, err := s.sdk.Connect(ctx, t, nil)
	if err != nil {
		return err
	}
	if s.tasks != nil && t.conn != nil {
		s.tasks.sessions.attach(ss, t.conn)
	}
	waitErr := make(chan error, 1)
	engine.Go(ctx, nil, "mcp.stdio.wait", func() { waitErr <- ss.Wait() },
		func(p *engine.Panic) { waitErr <- p })
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
	case <-ww.failed:
		s.endForStdout(ss, rc, ww, waitErr)
		return nil
	case err = <-waitErr:
	}
	if errors.Is(err, io.EOF) || errors.Is(err, sdk.ErrConnectionClosed) {
		return nil
	}
	return err
}

// lockedWriter serializes writes to out: the SDK writes each message with
// one Write, and so does lineFilter for its error replies, so no two
// messages interleave. Close does not close out (it is the caller's).
type lockedWriter struct {
	mu sync.Mutex
	w  io.Writer
}

// Write implements io.Writer.
func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}

// Close implements io.Closer without closing the writer.
func (l *lockedWriter) Close() error { return nil }

// lineFilter is the reader the SDK decodes stdin from. It hands over only
// lines the SDK can decode as JSON-RPC messages (or batches of them), and
// answers every other line itself with a JSON-RPC error, so that a bad line
// costs one error reply instead of the session. Blank lines are skipped.
type lineFilter struct {
	src io.ReadCloser
	br  *bufio.Reader
	out io.Writer
	max int
	log *slog.Logger

	line    []byte // the line being read (reused)
	pending []byte // the rest of a checked line, newline included
	err     error  // the read error to return once pending is empty
}

// newLineFilter reads src, answering bad lines on out; lines over max
// bytes are refused.
func newLineFilter(src io.ReadCloser, out io.Writer, max int, log *slog.Logger) *lineFilter {
	return &lineFilter{src: src, br: bufio.NewReaderSize(src, 64<<10), out: out, max: max, log: log}
}

// Read implements io.Reader: it returns bytes of good lines only.
func (f *lineFilter) Read(p []byte) (int, error) {
	for len(f.pending) == 0 {
		if f.err != nil {
			return 0, f.err
		}
		n, tooLong, err := f.readLine()
		f.err = err
		switch {
		case tooLong:
			f.reject(n, &lineError{code: jsonrpc.CodeInvalidRequest, message: fmt.Sprintf(
				"Invalid Request: the line has %d bytes, over the %d-byte limit of one stdio message; send smaller messages (read big results with get_artifact chunks)",
				n, f.max)})
		case len(bytes.TrimSpace(f.line)) == 0:
			// blank line, or the end of the stream
		default:
			if e := checkLine(f.line); e != nil {
				f.reject(n, e)
				continue
			}
			f.pending = append(f.line, '\n')
		}
	}
	n := copy(p, f.pending)
	f.pending = f.pending[n:]
	return n, nil
}

// readLine reads the next line into f.line, without its line ending. When
// the line is over f.max bytes it is discarded up to its newline and
// tooLong is set. n is the number of bytes read (at least f.max+1 when
// tooLong). err is the read error that ended the stream, if any; f.line
// then holds its unterminated last line.
func (f *lineFilter) readLine() (n int, tooLong bool, err error) {
	if cap(f.line) > 1<<20 {
		f.line = nil // do not keep a big buffer for the next small lines
	}
	f.line = f.line[:0]
	for {
		chunk, err := f.br.ReadSlice('\n')
		n += len(chunk)
		if !tooLong {
			f.line = append(f.line, chunk...)
			if len(f.line) > f.max+2 { // room for "\r\n"
				tooLong, f.line = true, f.line[:0]
			}
		}
		if errors.Is(err, bufio.ErrBufferFull) {
			continue
		}
		f.line = bytes.TrimSuffix(bytes.TrimSuffix(f.line, []byte("\n")), []byte("\r"))
		if len(f.line) > f.max {
			tooLong, f.line = true, f.line[:0]
		}
		return n, tooLong, err
	}
}

// Close closes the underlying reader (stdin).
func (f *lineFilter) Close() error { return f.src.Close() }

// reject answers a bad line of n bytes with e.
func (f *lineFilter) reject(n int, e *lineError) {
	id := e.id
	if id == nil {
		id = json.RawMessage("null")
	}
	ans := struct {
		JSONRPC string          `json:"jsonrpc"`
		ID      json.RawMessage `json:"id"`
		Error   struct {
			Code    int64  `json:"code"`
			Message string `json:"message"`
		} `json:"error"`
	}{JSONRPC: "2.0", ID: id}
	ans.Error.Code, ans.Error.Message = e.code, e.message
	b, err := json.Marshal(ans)
	if err != nil { // cannot happen: every field is plain
		return
	}
	f.log.Warn("stdio: answered a malformed line with an error", "code", e.code, "bytes", n, "error", e.message)
	// A failed write means stdout is gone; the SDK's next write ends the session.
	_, _ = f.out.Write(append(b, '\n'))
}

// lineError is the JSON-RPC error answering one bad line.
type lineError struct {
	code    int64
	id      json.RawMessage // the request's id when it could be read; nil: null
	message string
}

// checkLine reports why the SDK could not take line (one message or a
// batch), or nil when it can.
func checkLine(line []byte) *lineError {
	if !json.Valid(line) {
		return &lineError{code: jsonrpc.CodeParseError, message: "Parse error: the line is not valid JSON; " +
			"send one JSON-RPC 2.0 message per line, UTF-8, without NUL bytes or newlines inside"}
	}
	line = bytes.TrimSpace(line)
	if line[0] != '[' {
		return checkMessage(line)
	}
	var batch []json.RawMessage
	if err := json.Unmarshal(line, &batch); err != nil || len(batch) == 0 {
		return invalidRequest(nil, "a batch must hold at least one message")
	}
	seen := map[string]bool{}
	for i, m := range batch {
		if e := checkMessage(m); e != nil {
			e.message = fmt.Sprintf("%s (batch element %d; the whole batch was refused)", e.message, i)
			e.id = nil
			return e
		}
		var obj map[string]json.RawMessage
		_ = json.Unmarshal(m, &obj) // checkMessage decoded it already
		if id := messageID(obj["id"]); id != nil {
			if seen[string(id)] {
				return invalidRequest(nil, fmt.Sprintf("batch element %d repeats id %s; ids must be unique", i, id))
			}
			seen[string(id)] = true
		}
	}
	return nil
}

// checkMessage checks one JSON-RPC message (a request, notification or
// response) the way the SDK will decode it, with the MCP rule that a
// request id is a string or an integer, never null.
func checkMessage(raw json.RawMessage) *lineError {
	var m map[string]json.RawMessage
	if err := json.Unmarshal(raw, &m); err != nil {
		return invalidRequest(nil, "a JSON-RPC message must be a JSON object")
	}
	rawID, hasID := m["id"]
	id := messageID(rawID)
	var version string
	if err := json.Unmarshal(m["jsonrpc"], &version); err != nil || version != "2.0" {
		return invalidRequest(id, `"jsonrpc" must be "2.0"`)
	}
	if hasID && id == nil {
		return invalidRequest(nil, `"id" must be a string or an integer (MCP does not allow null)`)
	}
	if method, ok := m["method"]; ok {
		var s string
		if err := json.Unmarshal(method, &s); err != nil {
			return invalidRequest(id, `"method" must be a string`)
		}
	} else if !hasID {
		return invalidRequest(nil, `a message needs "method" (a request or notification) or "id" (a response)`)
	}
	if _, err := jsonrpc.DecodeMessage(raw); err != nil {
		return invalidRequest(id, err.Error())
	}
	return nil
}

// messageID returns a message's raw "id" when it is a string or a number,
// the kinds an answer can echo; else nil (absent, null, or another type).
func messageID(raw json.RawMessage) json.RawMessage {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 {
		return nil
	}
	switch raw[0] {
	case '"', '-', '0', '1', '2', '3', '4', '5', '6', '7', '8', '9':
		return raw
	}
	return nil
}

// invalidRequest is a -32600 answer.
func invalidRequest(id json.RawMessage, why string) *lineError {
	return &lineError{code: jsonrpc.CodeInvalidRequest, id: id, message: "Invalid Request: " + why}
}
