package mcp

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"testing"

	"github.com/browsertask/browsertask/engine"
	"github.com/browsertask/browsertask/internal/fixture"
)

// stdioPeer drives ServeStdio with raw newline-delimited JSON, the way a
// subprocess client would.
type stdioPeer struct {
	in    *io.PipeWriter
	lines chan map[string]any
	done  chan error
}

func startStdio(t *testing.T, eng Engine) (*stdioPeer, context.CancelFunc) {
	t.Helper()
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	srv := NewServer(eng, ServerOptions{Version: "test"})
	ctx, cancel := context.WithCancel(context.Background())
	p := &stdioPeer{in: inW, lines: make(chan map[string]any, 16), done: make(chan error, 1)}
	go func() { p.done <- srv.ServeStdio(ctx, inR, outW); outW.Close() }()
	go func() {
		sc := bufio.NewScanner(outR)
		sc.Buffer(make([]byte, 1<<20), 1<<20)
		for sc.Scan() {
			var m map[string]any
			if err := json.Unmarshal(sc.Bytes(), &m); err != nil {
				t.Errorf("stdout line is not JSON: %q", sc.Text())
				continue
			}
			p.lines <- m
		}
		close(p.lines)
	}()
	return p, cancel
}

func (p *stdioPeer) send(t *testing.T, msg string) {
	t.Helper()
	if _, err := p.in.Write([]byte(msg + "\n")); err != nil {
		t.Fatal(err)
	}
}

func (p *stdioPeer) next(t *testing.T) map[string]any {
	t.Helper()
	ctx, cancel := fixture.Context(t)
	defer cancel()
	select {
	case m, ok := <-p.lines:
		if !ok {
			t.Fatal("stdout closed")
		}
		return m
	case <-ctx.Done():
		t.Fatal("no message on stdout")
	}
	return nil
}

func TestStdioConcurrentRequestsAndShutdown(t *testing.T) {
	eng := newEngine(t, engine.Config{})
	p, cancel := startStdio(t, eng)
	defer cancel()
	// A client asking for the newer protocol is answered with 2025-11-25.
	p.send(t, `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2026-07-28","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}`)
	init := p.next(t)
	if v := init["result"].(map[string]any)["protocolVersion"]; v != "2025-11-25" {
		t.Fatalf("initialize answered %v", init)
	}
	p.send(t, `{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	// A sync call that blocks...
	p.send(t, `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"run_task_template","arguments":{"templateId":"dev_echo","inputs":{"sleepMs":600000},"options":{"mode":"sync"}}}}`)
	id := onlyRun(t, eng).RunID
	// ...does not stall another request.
	p.send(t, `{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"get_task_run","arguments":{"runId":"`+id+`"}}}`)
	m := p.next(t)
	if m["id"] != float64(3) {
		t.Fatalf("want the answer to id 3 first, got %v", m)
	}
	if sc := m["result"].(map[string]any)["structuredContent"].(map[string]any); sc["runId"] != id || engine.RunStatus(sc["status"].(string)).Terminal() {
		t.Fatalf("get_task_run: %v", sc)
	}
	// The run ends (cancelled here): the sync call answers it.
	if _, err := eng.Cancel(context.Background(), id, "test"); err != nil {
		t.Fatal(err)
	}
	m = p.next(t)
	if m["id"] != float64(2) {
		t.Fatalf("want the answer to id 2, got %v", m)
	}
	if sc := m["result"].(map[string]any)["structuredContent"].(map[string]any); sc["status"] != "canceled" || sc["mode"] != "sync" {
		t.Fatalf("sync answer: %v", sc)
	}
	// Arguments that are not an object: a JSON-RPC error, not a tool result.
	p.send(t, `{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"get_task_run","arguments":"`+id+`"}}`)
	m = p.next(t)
	if e, _ := m["error"].(map[string]any); e == nil || e["code"] != float64(-32602) {
		t.Fatalf("non-object arguments: %v", m)
	}
	// Closing stdin ends the session cleanly.
	p.in.Close()
	ctx, cancel := fixture.Context(t)
	defer cancel()
	select {
	case err := <-p.done:
		if err != nil {
			t.Fatalf("ServeStdio returned %v after EOF", err)
		}
	case <-ctx.Done():
		t.Fatal("ServeStdio did not return after stdin closed")
	}
}

func TestStdioStopsWhenContextEnds(t *testing.T) {
	p, cancel := startStdio(t, newEngine(t, engine.Config{}))
	p.send(t, `{"jsonrpc":"2.0","id":1,"method":"ping"}`)
	cancel()
	ctx, cancelWait := fixture.Context(t)
	defer cancelWait()
	select {
	case err := <-p.done:
		if err != nil {
			t.Fatalf("ServeStdio returned %v after cancel", err)
		}
	case <-ctx.Done():
		t.Fatal("ServeStdio did not return after ctx ended")
	}
}
