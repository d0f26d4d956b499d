package engine_test

import (
	"encoding/json"
	"io"
	"log/slog"
	"testing"

	"github.com/browsertask/browsertask/engine"
)

// summaryTemplate describes its own inputs: "watching <what>", or
// nothing when what is empty.
type summaryTemplate struct{ schemaTemplate }

func (summaryTemplate) Info() engine.TemplateInfo {
	return engine.TemplateInfo{TemplateID: "test_summary", Version: 1, Versions: []int{1}, TrustLevel: "any",
		InputSchema: json.RawMessage(`{"type":"object"}`)}
}

func (summaryTemplate) InputsSummary(inputs json.RawMessage) string {
	var in struct {
		What string `json:"what"`
	}
	if json.Unmarshal(inputs, &in) != nil || in.What == "" {
		return ""
	}
	return "watching " + in.What
}

// TestInputsSummary: the engine asks the template for its summary and
// otherwise (no InputsSummarizer, a template unknown here, an empty
// answer) lists numbers and booleans, never a name that may hold a secret.
func TestInputsSummary(t *testing.T) {
	eng, err := engine.New(engine.Options{Store: openStore(t), Templates: []engine.Template{summaryTemplate{}, newSleep()},
		Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ tpl, in, want string }{
		{"test_summary", `{"what":"the door","items":3}`, "watching the door"},
		{"test_summary", `{"what":"","items":3}`, "items 3"},
		{"test_sleep", `{"items":5,"sleepMs":250,"content":"secret words","pin":1234}`, "items 5 · sleepMs 250"},
		{"test_sleep", `{"urls":["https://a.example/"],"a":1,"b":true,"c":2,"d":3,"e":4,"apiKey":9,"otpLen":6}`, "a 1 · b true · c 2 · d 3"},
		{"no_longer_registered", `{"items":2}`, "items 2"},
		{"test_sleep", `{}`, ""},
		{"test_sleep", `not json`, ""},
		{"test_summary", `not json`, ""},
	} {
		if got := eng.InputsSummary(c.tpl, json.RawMessage(c.in)); got != c.want {
			t.Errorf("%s %s: %q, want %q", c.tpl, c.in, got, c.want)
		}
	}
}
