package mcp

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"strings"
	"testing"
)

// fuzzLines are stdio seeds: good messages of each kind, batches, and the
// malformed lines the first adversarial round sent.
var fuzzLines = []string{
	`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}`,
	`{"jsonrpc":"2.0","method":"notifications/initialized"}`,
	`{"jsonrpc":"2.0","id":"a","result":{}}`, `{"jsonrpc":"2.0","id":2,"error":{"code":-1,"message":"x"}}`,
	`[{"jsonrpc":"2.0","id":1,"method":"ping"},{"jsonrpc":"2.0","id":2,"method":"ping"}]`,
	`[{"jsonrpc":"2.0","id":1,"method":"ping"},{"jsonrpc":"2.0","id":1,"method":"ping"}]`,
	`[]`, `{"jsonrpc":"2.0","id":null,"method":"ping"}`, `{"jsonrpc":"1.0","id":3,"method":"ping"}`,
	`{"jsonrpc":"2.0","id":{},"method":"ping"}`, `{"jsonrpc":"2.0","id":4,"method":7}`, `{"jsonrpc":"2.0"}`,
	`not json`, "{\"jsonrpc\":\"2.0\",\"id\":5,\"method\":\"ping\"}\r", "\x00", `{"jsonrpc":"2.0","id":1e400,"method":"ping"}`,
	`{"jsonrpc":"2.0","id":-0.5,"method":"ping"}`, `{"jsonrpc":"2.0","ID":6,"Method":"ping"}`, "\ufeff{}", `"x"`,
}

// FuzzStdioLines feeds any byte stream to the stdio line reader, in reads
// of any size, with a line limit of any size. Invariants: what it passes
// on is exactly the non-blank lines within the limit that checkLine
// accepts, each once, in order and newline-terminated; every other
// non-blank line gets exactly one JSON-RPC 2.0 error reply (a JSON object
// with an error code and message, and an id that is a string, a number
// or null), so a client is never left waiting and never confused.
func FuzzStdioLines(f *testing.F) {
	for i, l := range fuzzLines {
		f.Add([]byte(l+"\n"+fuzzLines[(i+1)%len(fuzzLines)]), uint16(1024), uint8(7))
	}
	f.Add([]byte("\n\n  \n"+fuzzLines[0]+"\r\n"+strings.Repeat("x", 300)+"\n"+fuzzLines[1]), uint16(200), uint8(1))
	log := slog.New(slog.DiscardHandler)
	f.Fuzz(func(t *testing.T, stream []byte, max uint16, chunk uint8) {
		limit := int(max%4096) + 1
		var answers bytes.Buffer
		lf := newLineFilter(io.NopCloser(bytes.NewReader(stream)), &answers, limit, log)
		var passed bytes.Buffer
		buf := make([]byte, int(chunk)+1)
		for {
			n, err := lf.Read(buf)
			passed.Write(buf[:n])
			if errors.Is(err, io.EOF) {
				break
			}
			if err != nil {
				t.Fatalf("read error %v from an in-memory stream", err)
			}
		}
		var wantPassed strings.Builder
		wantAnswers := 0
		for _, line := range strings.Split(string(stream), "\n") {
			line = strings.TrimSuffix(line, "\r")
			switch {
			case len(bytes.TrimSpace([]byte(line))) == 0 && len(line) <= limit:
			case len(line) > limit || checkLine([]byte(line)) != nil:
				wantAnswers++
			default:
				wantPassed.WriteString(line + "\n")
			}
		}
		if passed.String() != wantPassed.String() {
			t.Fatalf("passed on %q, want %q", passed.String(), wantPassed.String())
		}
		got := strings.Split(strings.TrimSuffix(answers.String(), "\n"), "\n")
		if answers.Len() == 0 {
			got = nil
		}
		if len(got) != wantAnswers {
			t.Fatalf("%d error answers, want %d: %q", len(got), wantAnswers, answers.String())
		}
		for _, a := range got {
			checkErrorReply(t, a)
		}
	})
}

// checkErrorReply asserts one line is a JSON-RPC 2.0 error reply.
func checkErrorReply(t *testing.T, line string) {
	t.Helper()
	var m struct {
		JSONRPC string          `json:"jsonrpc"`
		ID      json.RawMessage `json:"id"`
		Error   *struct {
			Code    int64  `json:"code"`
			Message string `json:"message"`
		} `json:"error"`
	}
	if err := json.Unmarshal([]byte(line), &m); err != nil {
		t.Fatalf("answer %q is not JSON: %v", line, err)
	}
	if m.JSONRPC != "2.0" || m.Error == nil || m.Error.Code >= 0 || m.Error.Message == "" {
		t.Fatalf("answer %q is not a JSON-RPC 2.0 error", line)
	}
	id := bytes.TrimSpace(m.ID)
	if len(id) == 0 || !(string(id) == "null" || id[0] == '"' || id[0] == '-' || (id[0] >= '0' && id[0] <= '9')) {
		t.Fatalf("answer %q has id %s: want a string, a number or null", line, m.ID)
	}
}
