package engine_test

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"path/filepath"
	"testing"

	"github.com/browsertask/browsertask/db"
	"github.com/browsertask/browsertask/engine"
)

// schemaTemplate uses options.outputSchema and returns it as its result.
type schemaTemplate struct{}

func (schemaTemplate) Info() engine.TemplateInfo {
	return engine.TemplateInfo{TemplateID: "test_schema", Version: 1, Versions: []int{1}, TrustLevel: "any",
		InputSchema: json.RawMessage(`{"type":"object"}`), UsesOutputSchema: true}
}
func (schemaTemplate) Check(json.RawMessage, engine.Profile) error { return nil }
func (schemaTemplate) Run(_ context.Context, env engine.Env) (*engine.Outcome, error) {
	return &engine.Outcome{Result: map[string]any{"schema": env.OutputSchema()}}, nil
}

func TestOutputSchemaForTemplatesThatUseIt(t *testing.T) {
	ctx := context.Background()
	store, err := db.Open(ctx, filepath.Join(t.TempDir(), "bt.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	eng, err := engine.New(engine.Options{Store: store, Templates: []engine.Template{schemaTemplate{}, newSleep()},
		Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ name, schema string }{{"missing", ``}, {"null", `null`}, {"not a schema", `{"type":"nope"}`}} {
		_, err := eng.Submit(ctx, engine.SubmitRequest{TemplateID: "test_schema", Mode: engine.ModeAsync, OutputSchema: json.RawMessage(c.schema)})
		e := engine.AsError(err)
		if e == nil || e.Code != engine.InvalidParameter || e.Details["field"] != "options.outputSchema" {
			t.Fatalf("%s: %v, want INVALID_PARAMETER naming options.outputSchema", c.name, err)
		}
	}
	schema := `{ "type": "object", "properties": {"name": {"type": "string"}}, "required": ["name"] }`
	sub, err := eng.Submit(ctx, engine.SubmitRequest{TemplateID: "test_schema", Mode: engine.ModeAsync, OutputSchema: json.RawMessage(schema)})
	if err != nil {
		t.Fatal(err)
	}
	// Stored with the run (compacted), for every attempt of it.
	stored, err := store.GetRun(ctx, sub.Run.RunID)
	if err != nil || string(stored.OutputSchema) != `{"type":"object","properties":{"name":{"type":"string"}},"required":["name"]}` {
		t.Fatalf("stored outputSchema %s (%v)", stored.OutputSchema, err)
	}
	// A template that does not use it ignores it.
	other, err := eng.Submit(ctx, engine.SubmitRequest{TemplateID: "test_sleep", Mode: engine.ModeAsync, Inputs: json.RawMessage(`{"ms":0}`), OutputSchema: json.RawMessage(`{"type":"nope"}`)})
	if err != nil {
		t.Fatalf("a template that does not use outputSchema must ignore it: %v", err)
	}
	if r, _ := store.GetRun(ctx, other.Run.RunID); r.OutputSchema != nil {
		t.Fatalf("outputSchema kept for a template that ignores it: %s", r.OutputSchema)
	}
	// The template sees it while it runs.
	runCtx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() { _ = eng.Run(runCtx); close(done) }()
	defer func() { cancel(); <-done }()
	r, err := eng.Wait(ctx, sub.Run.RunID, nil)
	if err != nil || r.Status != engine.StatusSucceeded || string(r.Result) != `{"schema":{"type":"object","properties":{"name":{"type":"string"}},"required":["name"]}}` {
		t.Fatalf("run: %v %s %s", err, r.Status, r.Result)
	}
}

// continuingTemplate uses outputSchema and continues earlier runs: a run
// that finds no earlier checkpoint records one and fails; one that
// continues an earlier run succeeds, saying how many it found.
type continuingTemplate struct{}

func (continuingTemplate) Info() engine.TemplateInfo {
	return engine.TemplateInfo{TemplateID: "test_continue", Version: 1, Versions: []int{1}, TrustLevel: "any",
		InputSchema: json.RawMessage(`{"type":"object"}`), UsesOutputSchema: true, Resumable: true, ContinuesEarlierRuns: true}
}
func (continuingTemplate) Check(json.RawMessage, engine.Profile) error { return nil }
func (continuingTemplate) Run(ctx context.Context, env engine.Env) (*engine.Outcome, error) {
	found := len(env.Done())
	if found == 0 {
		if err := env.Checkpoint(ctx, engine.Item{Index: 0, Key: "a", Status: engine.ItemSucceeded, Output: json.RawMessage(`{}`)},
			engine.Progress{DoneSteps: 1, TotalSteps: 2}); err != nil {
			return nil, err
		}
		return nil, engine.Errorf(engine.ExecutionError, "stopped after the first item")
	}
	return &engine.Outcome{Result: map[string]any{"found": found}}, nil
}

func TestAResubmissionContinuesOnlyForTheSameOutputSchema(t *testing.T) {
	ctx := context.Background()
	store, err := db.Open(ctx, filepath.Join(t.TempDir(), "bt.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	eng, err := engine.New(engine.Options{Store: store, Templates: []engine.Template{continuingTemplate{}},
		Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		t.Fatal(err)
	}
	runCtx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() { _ = eng.Run(runCtx); close(done) }()
	defer func() { cancel(); <-done }()
	run := func(schema string) *engine.Run {
		t.Helper()
		sub, err := eng.Submit(ctx, engine.SubmitRequest{TemplateID: "test_continue", Mode: engine.ModeAsync,
			Inputs: json.RawMessage(`{"urls":["https://example.test/"]}`), OutputSchema: json.RawMessage(schema)})
		if err != nil {
			t.Fatal(err)
		}
		r, err := eng.Wait(ctx, sub.Run.RunID, nil)
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
	a, b := `{"type":"object"}`, `{"type":"object","required":["name"]}`
	if r := run(a); r.Status != engine.StatusFailed {
		t.Fatalf("first run: %s %s", r.Status, r.Result)
	}
	// The same inputs for another schema: the items made for a are not its.
	if r := run(b); r.Status != engine.StatusFailed {
		t.Fatalf("the same inputs with another outputSchema continued the first run: %s %s", r.Status, r.Result)
	}
	// The same inputs and schema: it continues the first run (the newer
	// stopped run, for schema b, is passed over).
	if r := run(a); r.Status != engine.StatusSucceeded || string(r.Result) != `{"found":1}` {
		t.Fatalf("the resubmission for schema a: %s %s", r.Status, r.Result)
	}
}
