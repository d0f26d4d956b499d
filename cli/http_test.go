package cli

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/browsertask/browsertask/internal/rawmcp"
	"golang.org/x/sync/errgroup"
)

// startInprocServe runs what `browsertask serve` runs - the engine and the
// real HTTP handler (/mcp and the dashboard) behind serveHTTP - in this
// process on a loopback port, with timeouts to. It returns host:port.
func startInprocServe(t *testing.T, to httpTimeouts, args ...string) string {
	t.Helper()
	full := append([]string{"--db", filepath.Join(t.TempDir(), "bt.db"), "--dev-templates", "--log-level", "error"}, args...)
	cfg, err := parseFlags("serve", full, func(string) string { return "" }, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	a, err := newApp(ctx, cfg, io.Discard)
	if err != nil {
		cancel()
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		cancel()
		a.close()
		t.Fatal(err)
	}
	h, err := a.httpHandler(ln.Addr().String())
	if err != nil {
		cancel()
		ln.Close()
		a.close()
		t.Fatal(err)
	}
	g, gctx := errgroup.WithContext(ctx)
	g.Go(func() error { return a.engine.Run(gctx) })
	g.Go(func() error { return serveHTTP(gctx, ln, h, a.log, to) })
	t.Cleanup(func() {
		cancel()
		_ = g.Wait()
		a.close()
	})
	return ln.Addr().String()
}

// closedBy reads conn until the server closes it and reports when.
func closedBy(conn net.Conn) <-chan time.Time {
	done := make(chan time.Time, 1)
	go func() {
		_, _ = io.Copy(io.Discard, conn)
		done <- time.Now()
	}()
	return done
}

// waitClosed waits for a connection the server must close, bounded by
// limit, and returns how long it stayed open from start.
func waitClosed(t *testing.T, what string, start time.Time, closed <-chan time.Time, limit time.Duration) time.Duration {
	t.Helper()
	select {
	case at := <-closed:
		return at.Sub(start)
	case <-time.After(limit):
		t.Fatalf("%s: connection still open %v after it started", what, limit)
	}
	return 0
}

func TestServeHTTPTimeouts(t *testing.T) {
	if testing.Short() {
		t.Skip("long by nature (waits out real one-second server bounds several times); the full suite runs it")
	}
	const bound = time.Second
	addr := startInprocServe(t, httpTimeouts{readHeader: bound, read: bound, idle: bound})

	// A GET SSE stream, opened first: it must outlive every bound below.
	sid := rawmcp.OpenSession(t, addr)
	gctx, stopGET := context.WithCancel(context.Background())
	t.Cleanup(stopGET)
	greq, _ := http.NewRequestWithContext(gctx, http.MethodGet, "http://"+addr+"/mcp", nil)
	greq.Header.Set("Accept", "text/event-stream")
	greq.Header.Set("Mcp-Session-Id", sid)
	greq.Header.Set("Mcp-Protocol-Version", "2025-11-25")
	gresp, err := http.DefaultClient.Do(greq)
	if err != nil || gresp.StatusCode != 200 {
		t.Fatalf("GET stream: %v %v", err, gresp)
	}
	streamOpened := time.Now()
	streamEnded := make(chan struct{})
	go func() {
		_, _ = io.Copy(io.Discard, gresp.Body)
		gresp.Body.Close()
		close(streamEnded)
	}()

	// A long-poll: a sync run that takes three bounds to answer.
	type answer struct {
		code int
		body string
		err  error
	}
	pollDone := make(chan answer, 1)
	go func() {
		code, body, _, err := rawmcp.Post(context.Background(), addr, sid, fmt.Sprintf(
			`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"run_task_template","arguments":{"templateId":"dev_echo","inputs":{"sleepMs":%d,"items":1},"options":{"mode":"sync"}}}}`,
			(3*bound).Milliseconds()))
		pollDone <- answer{code, body, err}
	}()

	// Headers, then a body that stalls, on /mcp and on the dashboard: the
	// server closes the connection once the read bound has passed.
	// (start is taken before the dial: the server's clock starts at accept.)
	for _, path := range []string{"/mcp", "/runs"} {
		start := time.Now()
		conn, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close()
		fmt.Fprintf(conn, "POST %s HTTP/1.1\r\nHost: %s\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\nContent-Length: 1000\r\n\r\n{\"jsonrpc\"", path, addr)
		open := waitClosed(t, "stalled body on "+path, start, closedBy(conn), 10*bound+10*time.Second)
		if open < bound {
			t.Fatalf("stalled body on %s: closed after %v, before the %v bound", path, open, bound)
		}
	}

	// A body that trickles a byte every tenth of the bound: still bounded,
	// the deadline is for the whole body, not per read.
	start := time.Now()
	trickle, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer trickle.Close()
	fmt.Fprintf(trickle, "POST /mcp HTTP/1.1\r\nHost: %s\r\nContent-Type: application/json\r\nContent-Length: 100000\r\n\r\n", addr)
	closed := closedBy(trickle)
	stopTrickle := make(chan struct{})
	go func() {
		tick := time.NewTicker(bound / 10)
		defer tick.Stop()
		for {
			select {
			case <-stopTrickle:
				return
			case <-tick.C:
				if _, err := trickle.Write([]byte(" ")); err != nil {
					return
				}
			}
		}
	}()
	open := waitClosed(t, "trickled body", start, closed, 10*bound+10*time.Second)
	close(stopTrickle)
	if open < bound {
		t.Fatalf("trickled body: closed after %v, before the %v bound", open, bound)
	}

	// A keep-alive connection with nothing to do is closed after idle.
	idle, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer idle.Close()
	fmt.Fprintf(idle, "GET /healthz HTTP/1.1\r\nHost: %s\r\n\r\n", addr)
	br := bufio.NewReader(idle)
	resp, err := http.ReadResponse(br, nil)
	if err != nil || resp.StatusCode != 200 {
		t.Fatalf("healthz: %v %v", err, resp)
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	start = time.Now()
	idleClosed := make(chan time.Time, 1)
	go func() { _, _ = io.Copy(io.Discard, br); idleClosed <- time.Now() }()
	if open := waitClosed(t, "idle keep-alive", start, idleClosed, 10*bound+10*time.Second); open < bound/2 {
		t.Fatalf("idle keep-alive closed after %v, before the %v bound", open, bound)
	}

	// Meanwhile the long-poll got its answer and the stream stayed open.
	a := <-pollDone
	if a.err != nil || a.code != 200 || !strings.Contains(a.body, `succeeded`) {
		t.Fatalf("long-poll: %d %v %.300s", a.code, a.err, a.body)
	}
	select {
	case <-streamEnded:
		t.Fatal("the GET stream was closed")
	default:
	}
	if open := time.Since(streamOpened); open < 3*bound {
		t.Fatalf("the GET stream was only checked after %v", open)
	}
	stopGET()
	<-streamEnded
}

// TestServeHostCheckAgrees: /mcp and the dashboard answer every Host the
// same, letter case aside (both call httpguard.HostAllowed).
func TestServeHostCheckAgrees(t *testing.T) {
	addr := startInprocServe(t, defaultHTTPTimeouts())
	for host, want := range map[string]int{
		"LOCALHOST":      200,
		"Localhost:7788": 200,
		"127.0.0.1":      200,
		"[::1]":          200,
		"evil.example":   403,
	} {
		code, body := rawmcp.Initialize(t, "http://"+addr+"/mcp", host, nil)
		if code != want {
			t.Errorf("/mcp with Host %q: %d, want %d (%.100s)", host, code, want, body)
		}
		req, _ := http.NewRequest(http.MethodGet, "http://"+addr+"/", nil)
		req.Host = host
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != want {
			t.Errorf("dashboard with Host %q: %d, want %d", host, resp.StatusCode, want)
		}
	}
}
