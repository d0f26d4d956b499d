package mcp

import (
	"bufio"
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/browsertask/browsertask/engine"
)

// idleHarness is an HTTP MCP endpoint with a short session timeout, served
// over in-memory pipes (newMemServer) so that its tests run in a
// testing/synctest bubble: the timeouts pass on the fake clock, and a busy
// machine can neither slow them down nor let an idle session's pause look
// longer than the test meant.
type idleHarness struct {
	t      *testing.T
	eng    *engine.Engine
	srv    *Server
	ts     *httptest.Server
	reaper *idleSessions
}

func newIdleHarness(t *testing.T, timeout time.Duration) *idleHarness {
	t.Helper()
	eng := newEngine(t, engine.Config{})
	srv := NewServer(eng, ServerOptions{Version: "test"})
	h, reaper := srv.httpHandler(HTTPOptions{SessionTimeout: timeout})
	ts := newMemServer(h)
	t.Cleanup(ts.Close)
	return &idleHarness{t: t, eng: eng, srv: srv, ts: ts, reaper: reaper}
}

// do sends one JSON-RPC body on session sid ("" for none) and returns the
// status, the body and the session id header.
func (h *idleHarness) do(ctx context.Context, sid, body string) (int, string, string) {
	h.t.Helper()
	code, b, id, err := h.send(ctx, sid, body)
	if err != nil {
		h.t.Fatal(err)
	}
	return code, b, id
}

// send is do for other goroutines: it returns the error.
func (h *idleHarness) send(ctx context.Context, sid, body string) (int, string, string, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, h.ts.URL, strings.NewReader(body))
	if err != nil {
		return 0, "", "", err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	if sid != "" {
		req.Header.Set(sessionIDHeader, sid)
		req.Header.Set("Mcp-Protocol-Version", "2025-11-25")
	}
	resp, err := h.ts.Client().Do(req)
	if err != nil {
		return 0, "", "", err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b), resp.Header.Get(sessionIDHeader), err
}

// open initializes a session and makes one request on it (so every layer
// holds its state for it); it returns the session id.
func (h *idleHarness) open() string {
	h.t.Helper()
	code, body, sid := h.do(context.Background(), "", initBody)
	if code != 200 || sid == "" {
		h.t.Fatalf("initialize: %d %q session %q", code, body, sid)
	}
	if code, body, _ := h.do(context.Background(), sid, `{"jsonrpc":"2.0","method":"notifications/initialized"}`); code != 202 {
		h.t.Fatalf("initialized: %d %s", code, body)
	}
	h.ping(sid)
	return sid
}

// ping sends a tools/list on sid and wants it answered.
func (h *idleHarness) ping(sid string) {
	h.t.Helper()
	if code, body, _ := h.do(context.Background(), sid, `{"jsonrpc":"2.0","id":9,"method":"tools/list"}`); code != 200 || !strings.Contains(body, "run_task_template") {
		h.t.Fatalf("tools/list on %s: %d %.200s", sid, code, body)
	}
}

// live reports whether the SDK still holds session sid.
func (h *idleHarness) live(sid string) bool {
	for ss := range h.srv.sdk.Sessions() {
		if ss.ID() == sid {
			return true
		}
	}
	return false
}

// sessions counts the SDK's HTTP sessions.
func (h *idleHarness) sessions() int {
	n := 0
	for ss := range h.srv.sdk.Sessions() {
		if ss.ID() != "" {
			n++
		}
	}
	return n
}

// waitClosed waits until sid is closed and a request on it gets 404. The
// bound is the promise (an idle session expires after its timeout, 1-2 s
// here), on the bubble's fake clock: a loaded machine cannot use it up.
func (h *idleHarness) waitClosed(sid string) {
	h.t.Helper()
	deadline := time.Now().Add(15 * time.Second)
	for h.live(sid) {
		if time.Now().After(deadline) {
			h.t.Fatalf("timed out waiting for idle session %s closed", sid)
		}
		time.Sleep(5 * time.Millisecond)
	}
	if code, body, _ := h.do(context.Background(), sid, `{"jsonrpc":"2.0","id":9,"method":"tools/list"}`); code != http.StatusNotFound {
		h.t.Fatalf("request on a closed session: %d %s, want 404", code, body)
	}
}

func TestHTTPIdleSessionsAreClosed(t *testing.T) {
	synctest.Test(t, testHTTPIdleSessionsAreClosed)
}

func testHTTPIdleSessionsAreClosed(t *testing.T) {
	h := newIdleHarness(t, time.Second)
	h.ts.Client().CloseIdleConnections()
	// Counted: the goroutines of MCP sessions and HTTP connections only, so
	// that a goroutine of another test or of the runtime that comes or
	// goes meanwhile cannot decide the outcome.
	before := sessionGoroutines()
	const n = 20
	// Each session holds an open GET stream while the others are opened, so
	// none can expire before all n are open, however slow the machine.
	ids := make([]string, n)
	stops := make([]func(), n)
	for i := range ids {
		ids[i] = h.open()
		stops[i] = h.stream(ids[i])
	}
	if got := h.sessions(); got != n {
		t.Fatalf("%d sessions open, want %d", got, n)
	}
	grown := sessionGoroutines()
	for _, stop := range stops {
		stop() // the idle clocks start when the streams end
	}
	for _, id := range ids {
		h.waitClosed(id)
	}
	if got := h.sessions(); got != 0 {
		t.Fatalf("%d sessions left, want 0", got)
	}
	eventually(t, "reaper forgets closed sessions", func() bool { return h.reaper.tracked() == 0 })
	// Their goroutines are gone too (the 404 requests above did not
	// create any: an unknown id is not tracked either).
	h.ts.Client().CloseIdleConnections()
	// 10 s of the bubble's fake clock, which does not move while a
	// goroutine of the bubble still runs: a loaded machine cannot use it
	// up, and a leak fails after 2000 polls (each a full stack dump), not
	// the millions a day-long bound would cost.
	deadline := time.Now().Add(10 * time.Second)
	for sessionGoroutines() > before {
		if time.Now().After(deadline) {
			t.Fatalf("goroutines of sessions and connections not released: %d before, %d now:\n%s", before, sessionGoroutines(), sessionStacks())
		}
		time.Sleep(5 * time.Millisecond)
	}
	t.Logf("session and connection goroutines: %d before, %d with %d sessions, %d after", before, grown, n, sessionGoroutines())
	if grown < before+n {
		t.Fatalf("the sessions held %d goroutines; the test no longer measures their release", grown-before)
	}
}

// stream opens session sid's GET event stream, as a client waiting for
// notifications holds it, and returns a function that ends it and waits
// until the response is fully read.
func (h *idleHarness) stream(sid string) func() {
	h.t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, h.ts.URL, nil)
	req.Header.Set("Accept", "text/event-stream")
	req.Header.Set(sessionIDHeader, sid)
	req.Header.Set("Mcp-Protocol-Version", "2025-11-25")
	resp, err := h.ts.Client().Do(req)
	if err != nil || resp.StatusCode != 200 {
		cancel()
		h.t.Fatalf("GET stream of %s: %v %v", sid, err, resp)
	}
	ended := make(chan struct{})
	go func() {
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		close(ended)
	}()
	h.t.Cleanup(cancel)
	return func() { cancel(); <-ended }
}

func TestHTTPSessionsInUseAreKept(t *testing.T) {
	synctest.Test(t, testHTTPSessionsInUseAreKept)
}

func testHTTPSessionsInUseAreKept(t *testing.T) {
	// On the bubble's clock the busy session pings exactly every timeout/10,
	// however loaded the machine.
	const timeout = 2 * time.Second
	h := newIdleHarness(t, timeout)

	// An open GET stream, as a client waiting for notifications holds it.
	stream := h.open()
	gctx, stopGET := context.WithCancel(context.Background())
	t.Cleanup(stopGET) // before the server closes, even when the test fails
	req, _ := http.NewRequestWithContext(gctx, http.MethodGet, h.ts.URL, nil)
	req.Header.Set("Accept", "text/event-stream")
	req.Header.Set(sessionIDHeader, stream)
	req.Header.Set("Mcp-Protocol-Version", "2025-11-25")
	resp, err := h.ts.Client().Do(req)
	if err != nil || resp.StatusCode != 200 {
		t.Fatalf("GET stream: %v %v", err, resp)
	}
	streamEnded := make(chan struct{})
	go func() {
		_, _ = io.Copy(io.Discard, bufio.NewReader(resp.Body))
		resp.Body.Close()
		close(streamEnded)
	}()

	// A long-poll: a sync call waiting for its run.
	poll := h.open()
	pctx, stopPoll := context.WithCancel(context.Background())
	t.Cleanup(stopPoll)
	pollDone := make(chan string, 1)
	go func() {
		_, body, _, _ := h.send(pctx, poll, `{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"run_task_template","arguments":{"templateId":"dev_echo","inputs":{"sleepMs":600000},"options":{"mode":"sync"}}}}`)
		pollDone <- body
	}()
	pollRun := onlyRun(t, h.eng).RunID

	// Regular requests, closer together than the timeout.
	busy := h.open()
	stopBusy := make(chan struct{})
	busyDone := make(chan struct{})
	go func() {
		defer close(busyDone)
		tick := time.NewTicker(timeout / 10)
		defer tick.Stop()
		for {
			select {
			case <-stopBusy:
				return
			case <-tick.C:
				if code, body, _, err := h.send(context.Background(), busy, `{"jsonrpc":"2.0","id":9,"method":"ping"}`); err != nil || code != 200 {
					t.Errorf("ping on the busy session: %d %v %.200s", code, err, body)
					return
				}
			}
		}
	}()

	// Two idle sessions opened one after the other expire: by then the
	// three in use have each spent two timeouts without being closed.
	for range 2 {
		h.waitClosed(h.open())
	}
	close(stopBusy)
	<-busyDone
	select {
	case <-streamEnded:
		t.Fatal("the GET stream was closed while open")
	default:
	}
	for name, id := range map[string]string{"GET stream": stream, "long-poll": poll, "busy": busy} {
		if !h.live(id) {
			t.Fatalf("session with a %s was closed", name)
		}
	}
	if _, err := h.eng.Cancel(context.Background(), pollRun, "test"); err != nil {
		t.Fatal(err)
	}
	if body := <-pollDone; !strings.Contains(body, `"canceled"`) {
		t.Fatalf("long-poll answer: %.300s", body)
	}
	h.ping(stream)

	// Once their use ends, all three expire.
	stopGET()
	<-streamEnded
	for _, id := range []string{stream, poll, busy} {
		h.waitClosed(id)
	}
	eventually(t, "reaper forgets closed sessions", func() bool { return h.reaper.tracked() == 0 })
}

func TestHTTPSessionReaperForgetsGoneSessions(t *testing.T) {
	synctest.Test(t, testHTTPSessionReaperForgetsGoneSessions)
}

func testHTTPSessionReaperForgetsGoneSessions(t *testing.T) {
	h := newIdleHarness(t, time.Hour)
	// Made-up ids: 404, and nothing is kept for them.
	for _, id := range []string{"nope", "also-nope"} {
		if code, _, _ := h.do(context.Background(), id, `{"jsonrpc":"2.0","id":1,"method":"ping"}`); code != 404 {
			t.Fatalf("unknown session: %d, want 404", code)
		}
	}
	if n := h.reaper.tracked(); n != 0 {
		t.Fatalf("%d made-up sessions tracked, want 0", n)
	}
	// A session ended by DELETE is forgotten at once.
	sid := h.open()
	if n := h.reaper.tracked(); n != 1 {
		t.Fatalf("%d sessions tracked, want 1", n)
	}
	req, _ := http.NewRequest(http.MethodDelete, h.ts.URL, nil)
	req.Header.Set(sessionIDHeader, sid)
	resp, err := h.ts.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusNoContent {
		t.Fatalf("DELETE: %d", resp.StatusCode)
	}
	if n := h.reaper.tracked(); n != 0 {
		t.Fatalf("%d sessions tracked after DELETE, want 0", n)
	}
	// A negative timeout keeps sessions: no reaper at all.
	if _, reaper := h.srv.httpHandler(HTTPOptions{SessionTimeout: -1}); reaper != nil {
		t.Fatal("SessionTimeout -1 built a reaper")
	}
	if _, reaper := h.srv.httpHandler(HTTPOptions{}); reaper == nil || reaper.timeout != DefaultSessionTimeout {
		t.Fatalf("SessionTimeout 0: reaper %+v, want one with DefaultSessionTimeout", reaper)
	}
}

// sessionStacks returns the stacks of the goroutines of the calling
// test's synctest bubble that serve MCP sessions or HTTP connections (the
// SDK's, this package's, net/http's).
func sessionStacks() string {
	synctest.Wait() // no goroutine of the bubble half-started or mid-exit
	buf := make([]byte, 1<<20)
	for {
		n := runtime.Stack(buf, true)
		if n < len(buf) {
			buf = buf[:n]
			break
		}
		buf = make([]byte, 2*len(buf))
	}
	var out []string
	for _, g := range strings.Split(string(buf), "\n\n") {
		// Only the bubble's own goroutines: what other tests left behind
		// outside it winds down on the real clock and must not count.
		header, _, _ := strings.Cut(g, "\n")
		if !strings.Contains(header, "synctest bubble") {
			continue
		}
		if strings.Contains(g, "go-sdk/mcp") || strings.Contains(g, "browsertask/mcp.") || strings.Contains(g, "net/http.(*conn).serve") {
			if !strings.Contains(g, "estHTTPIdleSessionsAreClosed") && !strings.Contains(g, "sessionStacks") {
				out = append(out, g)
			}
		}
	}
	return strings.Join(out, "\n\n")
}

// sessionGoroutines counts the goroutines sessionStacks lists.
func sessionGoroutines() int {
	s := sessionStacks()
	if s == "" {
		return 0
	}
	return strings.Count(s, "\n\n") + 1
}
