package acceptance

import (
	"bufio"
	"encoding/json"
	"io"
	"strconv"
	"strings"
	"testing"

	"github.com/browsertask/browsertask/internal/fixture"
)

// rawStdio is `browsertask mcp` driven with raw lines on its stdin.
type rawStdio struct {
	p     *proc
	in    io.WriteCloser
	lines chan map[string]any
}

// startRawStdio starts `browsertask mcp --http=off` with pipes.
func startRawStdio(t *testing.T) *rawStdio {
	t.Helper()
	p := newProcCmd(t, "mcp", []string{"--http=off"})
	in, err := p.cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	out, err := p.cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := p.cmd.Start(); err != nil {
		t.Fatalf("start mcp: %v", err)
	}
	r := &rawStdio{p: p, in: in, lines: make(chan map[string]any, 16)}
	go func() {
		sc := bufio.NewScanner(out)
		sc.Buffer(make([]byte, 1<<20), 1<<20)
		for sc.Scan() {
			var m map[string]any
			if err := json.Unmarshal(sc.Bytes(), &m); err != nil {
				m = map[string]any{"notJSON": sc.Text()}
			}
			r.lines <- m
		}
		close(r.lines)
	}()
	p.watch() // after the pipes' reader started: Wait closes them
	t.Cleanup(func() { in.Close(); p.cleanup() })
	return r
}

func (r *rawStdio) send(t *testing.T, line string) {
	t.Helper()
	if _, err := io.WriteString(r.in, line+"\n"); err != nil {
		t.Fatalf("write to stdin: %v (exited: %v %v)", err, r.p.exited(), r.p.waitErr)
	}
}

// next returns the next stdout message that is not a notification.
func (r *rawStdio) next(t *testing.T) map[string]any {
	t.Helper()
	ctx, cancel := fixture.Context(t)
	defer cancel()
	for {
		select {
		case m, ok := <-r.lines:
			if !ok {
				<-r.p.done
				t.Fatalf("stdout closed: the process ended (%v)", r.p.waitErr)
			}
			if _, isNote := m["method"]; isNote {
				continue
			}
			return m
		case <-ctx.Done():
			t.Fatal("no answer on stdout")
		}
	}
}

func TestBlackboxStdioMalformedLines(t *testing.T) {
	r := startRawStdio(t)
	r.send(t, `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}`)
	if m := r.next(t); m["id"] != float64(1) || m["result"] == nil {
		t.Fatalf("initialize: %v", m)
	}
	r.send(t, `{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	cases := []struct {
		name, line string
		code       float64
	}{
		{"not JSON", "hello world", -32700},
		{"empty object", "{}", -32600},
		{"half an object", `{"jsonrpc":"2.0","id":2,"method":"tools/li`, -32700},
		{"null id", `{"jsonrpc":"2.0","id":null,"method":"tools/list"}`, -32600},
		{"8 MB frame", `{"jsonrpc":"2.0","id":3,"method":"ping","params":{"pad":"` + strings.Repeat("x", 8<<20) + `"}}`, -32600},
		{"NUL byte", "\x00", -32700},
	}
	for i, c := range cases {
		r.send(t, c.line)
		m := r.next(t)
		e, _ := m["error"].(map[string]any)
		if id, ok := m["id"]; e == nil || e["code"] != c.code || !ok || id != nil {
			t.Fatalf("%s: want error %v with id null, got %v", c.name, c.code, m)
		}
		id := 100 + i
		r.send(t, `{"jsonrpc":"2.0","id":`+strconv.Itoa(id)+`,"method":"tools/list"}`)
		m = r.next(t)
		res, _ := m["result"].(map[string]any)
		if m["id"] != float64(id) || res == nil || len(res["tools"].([]any)) == 0 {
			t.Fatalf("tools/list after %s: %v", c.name, m)
		}
	}
	if r.p.exited() {
		t.Fatalf("process ended: %v", r.p.waitErr)
	}
	if !r.p.logLine("malformed line", "-32700") {
		t.Fatalf("no stderr log of the rejected lines:\n%s", r.p.logTail(20))
	}
	// Closing stdin still ends the process cleanly.
	r.in.Close()
	ctx, cancel := fixture.Context(t)
	defer cancel()
	select {
	case <-r.p.done:
		if r.p.waitErr != nil {
			t.Fatalf("exit after stdin closed: %v", r.p.waitErr)
		}
	case <-ctx.Done():
		t.Fatal("the process never exited after stdin closed")
	}
}
