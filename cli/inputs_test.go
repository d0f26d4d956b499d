package cli

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/browsertask/browsertask/engine"
)

func TestBuildInputsTypesValuesBySchema(t *testing.T) {
	schema := json.RawMessage(`{"properties":{"urls":{"type":"array","items":{"type":"string"}},
		"concurrency":{"type":"integer"},"includeText":{"type":"boolean"},"fields":{"type":"object"},"ids":{"type":"array","items":{"type":"integer"}}}}`)
	got, err := buildInputs([]string{"urls=https://a.example,https://b.example", "urls=https://c.example", "concurrency=3",
		"includeText=false", `fields={"title":"h1"}`, "ids=1,2", "extra=7", "note=hello"}, "", nil, schema)
	if err != nil {
		t.Fatal(err)
	}
	want := `{"concurrency":3,"extra":7,"fields":{"title":"h1"},"ids":[1,2],"includeText":false,"note":"hello","urls":["https://a.example","https://b.example","https://c.example"]}`
	if string(got) != want {
		t.Fatalf("got  %s\nwant %s", got, want)
	}
	// --inputs - gives the base; --input wins.
	got, err = buildInputs([]string{"concurrency=2"}, "-", strings.NewReader(`{"urls":["https://x.example"],"concurrency":9}`), schema)
	if err != nil || string(got) != `{"concurrency":2,"urls":["https://x.example"]}` {
		t.Fatalf("merge: %s %v", got, err)
	}
	if _, err := buildInputs(nil, "-", strings.NewReader(`[1]`), schema); err == nil {
		t.Fatal("a JSON array as --inputs must be refused")
	}
	var f inputFlags
	if err := f.Set("novalue"); err == nil {
		t.Fatal("--input without = must be refused")
	}
}

func TestProgressPrinter(t *testing.T) {
	var tty, plain bytes.Buffer
	r := &engine.Run{RunID: "run_x", Status: engine.StatusRunning, Progress: engine.Progress{DoneSteps: 3, TotalSteps: 6, FailedSteps: 1}}
	pt, pp := newProgressPrinter(&tty, true), newProgressPrinter(&plain, false)
	pt.update(r)
	pp.update(r)
	pp.update(r) // same status within a second: no new line
	r.Status = engine.StatusPartialSuccess
	pt.done(r)
	pp.done(r)
	if s := tty.String(); !strings.Contains(s, "\r\033[K") || !strings.Contains(s, "███████████████░░░") || !strings.Contains(s, "3/6 (1 failed)") || !strings.HasSuffix(s, "\n") {
		t.Fatalf("tty bar: %q", s)
	}
	if s := plain.String(); s != "run_x running 3/6 (1 failed)\nrun_x partial_success 3/6 (1 failed)\n" {
		t.Fatalf("plain lines: %q", s)
	}
}
