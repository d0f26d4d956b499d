package engine_test

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"strings"
	"testing"

	"github.com/browsertask/browsertask/engine"
)

// strictSchemaTemplate uses options.outputSchema and, like
// extract_structured, accepts only an object schema: its
// CheckOutputSchema refuses the rest, as its Run would.
type strictSchemaTemplate struct {
	schemaTemplate
	plainErr bool // refuse with a plain error instead of an *engine.Error
	calls    *int
}

func (s strictSchemaTemplate) Info() engine.TemplateInfo {
	info := s.schemaTemplate.Info()
	info.TemplateID = "test_strict_schema"
	return info
}

func (s strictSchemaTemplate) CheckOutputSchema(schema json.RawMessage) error {
	*s.calls++
	var doc map[string]any
	if json.Unmarshal(schema, &doc) != nil || doc["type"] != "object" {
		if s.plainErr {
			return errors.New("options.outputSchema must describe an object (plain)")
		}
		return engine.Errorf(engine.InvalidParameter, "options.outputSchema must describe an object, not %s", schema).
			WithDetails(map[string]any{"got": string(schema)})
	}
	return nil
}

var _ engine.OutputSchemaChecker = strictSchemaTemplate{}

// TestSubmitAsksTheTemplateToCheckOutputSchema: a schema that is valid JSON
// Schema but that the template refuses is INVALID_PARAMETER at submit,
// naming options.outputSchema with the template's own message, and no run
// row is created; a schema it accepts is stored compacted.
func TestSubmitAsksTheTemplateToCheckOutputSchema(t *testing.T) {
	ctx := context.Background()
	for _, plain := range []bool{false, true} {
		store := openStore(t)
		calls := 0
		eng, err := engine.New(engine.Options{Store: store, Templates: []engine.Template{strictSchemaTemplate{plainErr: plain, calls: &calls}},
			Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
		if err != nil {
			t.Fatal(err)
		}
		_, err = eng.Submit(ctx, engine.SubmitRequest{TemplateID: "test_strict_schema", Mode: engine.ModeAsync, OutputSchema: json.RawMessage(` {"type": "string"} `)})
		e := engine.AsError(err)
		if e == nil || e.Code != engine.InvalidParameter || e.Details["field"] != "options.outputSchema" ||
			!strings.HasPrefix(e.Message, "options.outputSchema must describe an object") {
			t.Fatalf("plain=%v: %v (details %v), want INVALID_PARAMETER naming options.outputSchema with the template's message", plain, err, e)
		}
		if !plain && e.Details["got"] != `{"type": "string"}` {
			t.Fatalf("the template's details were lost: %v", e.Details)
		}
		if calls != 1 {
			t.Fatalf("CheckOutputSchema called %d times, want 1", calls)
		}
		if _, total, err := store.ListRuns(ctx, engine.RunFilter{Limit: 10}); err != nil || total != 0 {
			t.Fatalf("a refused submission left %d runs (%v)", total, err)
		}
		// Required before the template is asked.
		if _, err := eng.Submit(ctx, engine.SubmitRequest{TemplateID: "test_strict_schema", Mode: engine.ModeAsync}); engine.CodeOf(err) != engine.InvalidParameter || calls != 1 {
			t.Fatalf("no outputSchema: %v, CheckOutputSchema called %d times", err, calls)
		}
		sub, err := eng.Submit(ctx, engine.SubmitRequest{TemplateID: "test_strict_schema", Mode: engine.ModeAsync, OutputSchema: json.RawMessage(`{ "type": "object" }`)})
		if err != nil {
			t.Fatal(err)
		}
		if stored, err := store.GetRun(ctx, sub.Run.RunID); err != nil || string(stored.OutputSchema) != `{"type":"object"}` {
			t.Fatalf("stored outputSchema %s (%v)", stored.OutputSchema, err)
		}
	}
}
