package mcp

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"sync"
	"testing"
	"time"

	"github.com/browsertask/browsertask/engine"
	"github.com/browsertask/browsertask/internal/fixture"
)

// The Tasks tests run the real engine (newEngine) and talk raw JSON-RPC to
// the server (the Go SDK client has no Tasks support).

// taskTestConfig makes ttl capping and flooring observable.
func taskTestConfig() engine.Config {
	return engine.Config{RunTTL: 2 * time.Minute, MaxTaskTTL: time.Hour, TaskPollInterval: 500 * time.Millisecond,
		PollInterval: 20 * time.Millisecond, ShutdownGrace: 200 * time.Millisecond}
}

// rawPeer is a raw JSON-RPC client over ServeStdio: it correlates answers
// by id and records notifications with their arrival order.
type rawPeer struct {
	t  *testing.T
	w  *io.PipeWriter
	mu sync.Mutex
	id int
	// pending maps request ids to their answer channel.
	pending map[int]chan map[string]any
	// seq counts every message read, to order answers and notifications.
	seq      int
	answered map[int]int // request id -> seq of its answer
	notes    []note
	// initResult is the initialize answer.
	initResult map[string]any
	// stop ends ServeStdio's context and reports whether it returned within d.
	stop func(d time.Duration) bool
}

// note is one notification as received.
type note struct {
	// id is set for a request of the server (elicitation/create).
	id     any
	seq    int
	at     time.Time
	method string
	params map[string]any
}

// startRawPeer serves srv over pipes and initializes a session.
func startRawPeer(t *testing.T, srv *Server) *rawPeer {
	t.Helper()
	return startRawPeerOn(t, srv, false)
}

// stdinLike hides the pipe's Close, like os.Stdin whose Close does not
// interrupt a pending read.
type stdinLike struct{ io.Reader }

// startRawPeerOn is startRawPeer; with uncloseable the server cannot stop
// reading by closing its input.
func startRawPeerOn(t *testing.T, srv *Server, uncloseable bool) *rawPeer {
	t.Helper()
	return startRawPeerCaps(t, srv, uncloseable, map[string]any{})
}

// startRawPeerCaps is startRawPeerOn declaring the client capabilities caps.
func startRawPeerCaps(t *testing.T, srv *Server, uncloseable bool, caps map[string]any) *rawPeer {
	t.Helper()
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	ctx, cancel := context.WithCancel(context.Background())
	served := make(chan struct{})
	var in io.Reader = inR
	if uncloseable {
		in = stdinLike{inR}
	}
	go func() { _ = srv.ServeStdio(ctx, in, outW); outW.Close(); close(served) }()
	p := &rawPeer{t: t, w: inW, pending: map[int]chan map[string]any{}, answered: map[int]int{}}
	p.stop = func(d time.Duration) bool {
		cancel()
		select {
		case <-served:
			return true
		case <-time.After(d):
			return false
		}
	}
	go p.readLoop(outR)
	t.Cleanup(func() {
		cancel()
		inW.Close()
		<-served
	})
	res, rerr := p.call("initialize", map[string]any{"protocolVersion": "2025-11-25", "capabilities": caps,
		"clientInfo": map[string]any{"name": "raw", "version": "1"}})
	if rerr != nil {
		t.Fatalf("initialize: %v", rerr)
	}
	if res["protocolVersion"] != "2025-11-25" {
		t.Fatalf("initialize answered %v", res)
	}
	p.initResult = res
	p.send(map[string]any{"jsonrpc": "2.0", "method": "notifications/initialized"})
	return p
}

func (p *rawPeer) readLoop(r io.Reader) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 4<<20), 4<<20)
	for sc.Scan() {
		var m map[string]any
		if err := json.Unmarshal(sc.Bytes(), &m); err != nil {
			p.t.Errorf("stdout line is not JSON: %q", sc.Text())
			continue
		}
		p.mu.Lock()
		p.seq++
		if id, ok := m["id"].(float64); ok && m["method"] == nil {
			p.answered[int(id)] = p.seq
			if ch := p.pending[int(id)]; ch != nil {
				ch <- m
				delete(p.pending, int(id))
			}
		} else if method, _ := m["method"].(string); method != "" {
			params, _ := m["params"].(map[string]any)
			p.notes = append(p.notes, note{id: m["id"], seq: p.seq, at: time.Now(), method: method, params: params})
		}
		p.mu.Unlock()
	}
}

func (p *rawPeer) send(msg map[string]any) {
	b, _ := json.Marshal(msg)
	if _, err := p.w.Write(append(b, '\n')); err != nil {
		p.t.Errorf("write: %v", err)
	}
}

// start sends a request and returns its id and answer channel.
func (p *rawPeer) start(method string, params any) (int, chan map[string]any) {
	ch := make(chan map[string]any, 1)
	p.mu.Lock()
	p.id++
	id := p.id
	p.pending[id] = ch
	p.mu.Unlock()
	msg := map[string]any{"jsonrpc": "2.0", "id": id, "method": method}
	if params != nil {
		msg["params"] = params
	}
	p.send(msg)
	return id, ch
}

// await returns a request's result or its JSON-RPC error, waiting until
// the test's deadline.
func (p *rawPeer) await(ch chan map[string]any) (map[string]any, map[string]any) {
	p.t.Helper()
	ctx, cancel := fixture.Context(p.t)
	defer cancel()
	select {
	case m := <-ch:
		res, _ := m["result"].(map[string]any)
		rerr, _ := m["error"].(map[string]any)
		return res, rerr
	case <-ctx.Done():
		p.t.Fatal("no answer to the request")
	}
	return nil, nil
}

// call sends a request and waits for its answer.
func (p *rawPeer) call(method string, params any) (map[string]any, map[string]any) {
	p.t.Helper()
	_, ch := p.start(method, params)
	return p.await(ch)
}

// mustCall is call that fails the test on a JSON-RPC error.
func (p *rawPeer) mustCall(method string, params any) map[string]any {
	p.t.Helper()
	res, rerr := p.call(method, params)
	if rerr != nil {
		p.t.Fatalf("%s: error %v", method, rerr)
	}
	return res
}

// notifications returns the notifications received with the given method.
func (p *rawPeer) notifications(method string) []note {
	p.mu.Lock()
	defer p.mu.Unlock()
	var out []note
	for _, n := range p.notes {
		if n.method == method {
			out = append(out, n)
		}
	}
	return out
}

// answerSeq is the arrival order of request id's answer.
func (p *rawPeer) answerSeq(id int) int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.answered[id]
}

// taskCall is the params of a task-augmented run_task_template call.
func taskCall(inputs map[string]any, task map[string]any, extra map[string]any) map[string]any {
	args := map[string]any{"templateId": "dev_echo"}
	if inputs != nil {
		args["inputs"] = inputs
	}
	for k, v := range extra {
		args[k] = v
	}
	p := map[string]any{"name": "run_task_template", "arguments": args}
	if task != nil {
		p["task"] = task
	}
	return p
}

// wantRPCError asserts a JSON-RPC error code (and message, when not empty).
func wantRPCError(t *testing.T, what string, rerr map[string]any, code int, msg string) {
	t.Helper()
	if rerr == nil {
		t.Fatalf("%s: want JSON-RPC error %d, got a result", what, code)
	}
	if rerr["code"] != float64(code) {
		t.Fatalf("%s: want code %d, got %v", what, code, rerr)
	}
	if msg != "" && rerr["message"] != msg {
		t.Fatalf("%s: want message %q, got %q", what, msg, rerr["message"])
	}
}
