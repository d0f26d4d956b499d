package mcp

import (
	"strconv"
	"strings"
	"testing"

	"github.com/browsertask/browsertask/engine"
)

// stdioInit initializes a raw stdio session.
func stdioInit(t *testing.T, p *stdioPeer) {
	t.Helper()
	p.send(t, `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}`)
	if m := p.next(t); m["id"] != float64(1) || m["result"] == nil {
		t.Fatalf("initialize: %v", m)
	}
	p.send(t, `{"jsonrpc":"2.0","method":"notifications/initialized"}`)
}

// wantLineError asserts m is a JSON-RPC error with code and id.
func wantLineError(t *testing.T, m map[string]any, code float64, id any) {
	t.Helper()
	e, _ := m["error"].(map[string]any)
	if e == nil || e["code"] != code {
		t.Fatalf("want error %v, got %v", code, m)
	}
	if got, ok := m["id"]; !ok || got != id {
		t.Fatalf("want id %v (present), got %v", id, m)
	}
	if msg, _ := e["message"].(string); msg == "" {
		t.Fatalf("error without a message: %v", m)
	}
}

func TestStdioMalformedLinesAreAnsweredAndServingGoesOn(t *testing.T) {
	p, cancel := startStdio(t, newEngine(t, engine.Config{}))
	defer cancel()
	stdioInit(t, p)
	big := `{"jsonrpc":"2.0","id":77,"method":"ping","params":{"pad":"` + strings.Repeat("x", 8<<20) + `"}}`
	cases := []struct {
		name, line string
		code       float64
		id         any
	}{
		{"not JSON", "hello world", -32700, nil},
		{"empty object", "{}", -32600, nil},
		{"half an object", `{"jsonrpc":"2.0","id":2,"method":"tools/li`, -32700, nil},
		{"null id", `{"jsonrpc":"2.0","id":null,"method":"tools/list"}`, -32600, nil},
		{"8 MB frame", big, -32600, nil},
		{"NUL byte", "\x00", -32700, nil},
		{"NUL after a message", `{"jsonrpc":"2.0","id":3,"method":"ping"}` + "\x00", -32700, nil},
		{"two messages on one line", `{"jsonrpc":"2.0","id":3,"method":"ping"} {"jsonrpc":"2.0","id":4,"method":"ping"}`, -32700, nil},
		{"not an object", `42`, -32600, nil},
		{"wrong version", `{"jsonrpc":"1.0","id":5,"method":"ping"}`, -32600, float64(5)},
		{"method not a string", `{"jsonrpc":"2.0","id":"a","method":7}`, -32600, "a"},
		{"object id", `{"jsonrpc":"2.0","id":{},"method":"ping"}`, -32600, nil},
		{"neither method nor id", `{"jsonrpc":"2.0","result":{}}`, -32600, nil},
		{"empty batch", `[]`, -32600, nil},
		{"bad batch element", `[{"jsonrpc":"2.0","id":6,"method":"ping"},{}]`, -32600, nil},
		{"CRLF garbage", "oops\r", -32700, nil},
	}
	for i, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			p.send(t, c.line)
			wantLineError(t, p.next(t), c.code, c.id)
			// The next valid request is answered: the session lives on.
			p.send(t, `{"jsonrpc":"2.0","id":`+strconv.Itoa(100+i)+`,"method":"tools/list"}`)
			m := p.next(t)
			if m["id"] != float64(100+i) || m["result"] == nil {
				t.Fatalf("tools/list after %q: %v", c.name, m)
			}
		})
	}
	// Blank lines are skipped without an answer; CRLF line endings are fine.
	p.send(t, "")
	p.send(t, "   \r")
	p.send(t, `{"jsonrpc":"2.0","id":"crlf","method":"ping"}`+"\r")
	if m := p.next(t); m["id"] != "crlf" || m["result"] == nil {
		t.Fatalf("ping after blank lines: %v", m)
	}
	select {
	case err := <-p.done:
		t.Fatalf("ServeStdio ended (%v) after malformed lines", err)
	default:
	}
}
