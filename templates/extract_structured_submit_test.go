package templates

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"path/filepath"
	"strings"
	"testing"

	"github.com/browsertask/browsertask/browser"
	"github.com/browsertask/browsertask/db"
	"github.com/browsertask/browsertask/engine"
)

// TestExtractStructuredRefusesOutputSchemaAtSubmit: an outputSchema that
// is a valid JSON Schema but that Run's compile refuses ({"type":"string"},
// a property name with '.', an x-pattern that does not compile or has no
// capture group) is INVALID_PARAMETER at Submit naming
// options.outputSchema, with the message Run would have failed with, and
// leaves no run behind; the schema of the other tests is accepted. No
// browser is started: Submit never runs the template.
func TestExtractStructuredRefusesOutputSchemaAtSubmit(t *testing.T) {
	ctx := context.Background()
	store, err := db.Open(ctx, filepath.Join(t.TempDir(), "bt.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	bm := browser.NewManager(browser.Options{TempDir: t.TempDir()})
	defer bm.Close()
	eng, err := engine.New(engine.Options{Store: store, Templates: []engine.Template{NewExtractStructured(bm, nil)},
		Config: engine.Config{TrustLevel: "local"}, Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		t.Fatal(err)
	}
	inputs := json.RawMessage(`{"urls":["http://127.0.0.1:9/p/1"]}`)
	for _, c := range []struct{ schema, says string }{
		{`{"type": "string"}`, "options.outputSchema must describe an object with properties to fill"},
		{`{"type":"object","properties":{"a.b":{"type":"string"}}}`, `"a.b"`},
		{`{"type":"object","properties":{"year":{"type":"integer","x-selector":"p","x-pattern":"(\\d+"}}}`, `options.outputSchema.properties.year.x-pattern "(\\d+" is not a valid regular expression`},
		{`{"type":"object","properties":{"year":{"type":"integer","x-selector":"p","x-pattern":"\\d+"}}}`, `options.outputSchema.properties.year.x-pattern "\\d+" has 0 capture groups`},
	} {
		_, err := eng.Submit(ctx, engine.SubmitRequest{TemplateID: "extract_structured", Mode: engine.ModeAsync, Inputs: inputs, OutputSchema: json.RawMessage(c.schema)})
		e := engine.AsError(err)
		if e == nil || e.Code != engine.InvalidParameter || e.Details["field"] != "options.outputSchema" || !strings.Contains(e.Message, c.says) {
			t.Fatalf("%s: %v, want INVALID_PARAMETER naming options.outputSchema saying %q", c.schema, err, c.says)
		}
		// The same refusal Run gives (one compile for both).
		if _, rerr := compileOutputSchema(json.RawMessage(c.schema)); engine.AsError(rerr) == nil || engine.AsError(rerr).Message != e.Message {
			t.Fatalf("%s: submit says %q, run would say %v", c.schema, e.Message, rerr)
		}
	}
	if _, total, err := store.ListRuns(ctx, engine.RunFilter{Limit: 10}); err != nil || total != 0 {
		t.Fatalf("refused submissions left %d runs (%v)", total, err)
	}
	sub, err := eng.Submit(ctx, engine.SubmitRequest{TemplateID: "extract_structured", Mode: engine.ModeAsync, Inputs: inputs, OutputSchema: json.RawMessage(structuredSchema)})
	if err != nil {
		t.Fatalf("a schema Run accepts: %v", err)
	}
	if sub.Run.Status != engine.StatusQueued {
		t.Fatalf("status %s, want queued", sub.Run.Status)
	}
}
