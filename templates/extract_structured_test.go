package templates

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"reflect"
	"strings"
	"sync"
	"testing"

	"github.com/browsertask/browsertask/engine"
	"github.com/browsertask/browsertask/internal/extract/modelfill"
	"github.com/browsertask/browsertask/internal/fixture"
)

// structuredSchema is the caller's output schema of these tests: the
// x-selector hints reach the plain markup of /products/hinted and match
// nothing on the other product pages.
const structuredSchema = `{
  "type": "object",
  "required": ["name", "price", "currency"],
  "properties": {
    "name": {"type": "string", "minLength": 1, "x-selector": "#hinted .product-title"},
    "price": {"type": "number", "minimum": 0, "x-selector": "#hinted .price-now"},
    "currency": {"type": "string", "pattern": "^[A-Z]{3}$", "x-selector": "#hinted .price-now", "x-attr": "data-currency"},
    "rating": {"type": "number", "minimum": 0, "maximum": 5, "x-selector": "#hinted .stars", "x-attr": "data-rating"},
    "inStock": {"type": "boolean", "x-selector": "#hinted .stock"}
  }
}`

// schemaEnv is fakeEnv with an options.outputSchema.
type schemaEnv struct {
	*fakeEnv
	schema json.RawMessage
}

func (e schemaEnv) OutputSchema() json.RawMessage { return e.schema }

// productURLs are the fixture's product pages, the one without a price
// last.
func productURLs(srv *fixture.Server) []string {
	return []string{srv.URL("/products/jsonld"), srv.URL("/products/microdata"), srv.URL("/products/og"),
		srv.URL("/products/hinted"), srv.URL("/products/noprice")}
}

// runStructured checks the inputs like the engine would and runs tpl.
func runStructured(t *testing.T, ctx context.Context, tpl engine.Template, env schemaEnv) (*engine.Outcome, error) {
	t.Helper()
	s, err := engine.CompileSchema(tpl.Info().InputSchema)
	if err != nil {
		t.Fatal(err)
	}
	if verr := s.Validate(env.inputs, "inputs"); verr != nil {
		t.Fatalf("inputs rejected by the schema: %v", verr)
	}
	if err := tpl.Check(env.inputs, env.profile); err != nil {
		t.Fatalf("Check: %v", err)
	}
	return tpl.Run(ctx, env)
}

// wantProducts are the objects of the four pages that state everything.
func wantProducts() []map[string]any {
	return []map[string]any{
		{"name": "Trail Runner 3", "price": 129.9, "currency": "EUR", "rating": 4.6, "inStock": true},
		{"name": "Aqua Bottle", "price": 1299.0, "currency": "USD", "rating": 4.2, "inStock": false},
		{"name": "Studio Headphones X2", "price": 1299.0, "currency": "GBP", "rating": 4.8, "inStock": true},
		{"name": "Cast Iron Skillet", "price": 89.5, "currency": "CHF", "rating": 3.9, "inStock": true},
	}
}

// itemsJSON decodes the items.json artifact.
func itemsJSON(t *testing.T, env *fakeEnv) []structuredItem {
	t.Helper()
	data, mime := env.artifact("items.json")
	var out []structuredItem
	if err := json.Unmarshal(data, &out); err != nil || mime != "application/json" {
		t.Fatalf("items.json (%s): %v\n%s", mime, err, data)
	}
	return out
}

// roundTrip gives v as JSON decodes it (numbers as float64).
func roundTrip(t *testing.T, v any) any {
	t.Helper()
	var out any
	if err := json.Unmarshal([]byte(mustJSON(t, v)), &out); err != nil {
		t.Fatal(err)
	}
	return out
}

// TestExtractStructuredNoModel: JSON-LD, microdata, OpenGraph and x-selector
// pages fill the whole schema with no model, with exact values and
// coerced types; the page without a price fails naming it; partial_success.
func TestExtractStructuredNoModel(t *testing.T) {
	srv := fixture.New(t)
	urls := productURLs(srv)
	env := schemaEnv{newEnv(t, mustJSON(t, map[string]any{"urls": urls, "concurrency": 2})), json.RawMessage(structuredSchema)}
	ctx, cancel := fixture.Context(t)
	defer cancel()
	out, err := runStructured(t, ctx, NewExtractStructured(testManager(t), nil), env)
	if err != nil {
		t.Fatal(err)
	}
	if !out.Partial {
		t.Fatal("one page failing must give partial_success")
	}
	res := out.Result.(structuredResult)
	if res.Summary != (structuredSummary{Total: 5, Succeeded: 4, Failed: 1}) || res.ArtifactID != "art_items.json" || res.NDJSONArtifactID != "art_items.ndjson" {
		t.Fatalf("summary %+v, artifacts %q %q", res.Summary, res.ArtifactID, res.NDJSONArtifactID)
	}
	want := wantProducts()
	for i, w := range want {
		it := res.Items[i]
		if it.URL != urls[i] || it.Error != nil || !reflect.DeepEqual(it.Object, w) {
			t.Errorf("item %d (%s) = %+v (error %v)\nwant object %v", i, urls[i], it.Object, it.Error, w)
		}
	}
	nf := res.Items[4]
	if nf.Object != nil || nf.Error == nil || nf.Error.Code != engine.StepExecutionFailed ||
		!strings.Contains(nf.Error.Message, "price: required property is missing") || !strings.Contains(nf.Error.Message, "--model-url") {
		t.Fatalf("page without a price = %+v (error %+v)", nf, nf.Error)
	}
	if p := nf.Error.Details["problems"]; !reflect.DeepEqual(roundTrip(t, p), []any{"price: required property is missing"}) {
		t.Fatalf("problems of the page without a price = %#v", nf.Error.Details["problems"])
	}

	// items.json: every page with the source of each value.
	items := itemsJSON(t, env.fakeEnv)
	if len(items) != 5 {
		t.Fatalf("items.json has %d items", len(items))
	}
	wantSources := []map[string]string{
		{"name": "json-ld:Product.name", "price": "json-ld:Product.offers.price", "currency": "json-ld:Product.offers.priceCurrency"},
		{"name": "microdata:Product.name", "price": "microdata:Product.offers.price", "currency": "microdata:Product.offers.priceCurrency"},
		{"name": "og:title", "price": "product:price:amount", "currency": "product:price:currency", "rating": "og:rating"},
		{"name": "selector:#hinted .product-title", "price": "selector:#hinted .price-now", "currency": "selector:#hinted .price-now@data-currency"},
	}
	for i, ws := range wantSources {
		for p, src := range ws {
			if items[i].Sources[p] != src {
				t.Errorf("items.json[%d].sources[%s] = %q, want %q (all: %v)", i, p, items[i].Sources[p], src, items[i].Sources)
			}
		}
		if len(items[i].Sources) != 5 || items[i].HTTPStatus != 200 || items[i].FinalURL != urls[i] {
			t.Errorf("items.json[%d] = %+v", i, items[i])
		}
	}
	last := items[4]
	if last.Object != nil || last.Error == nil || !reflect.DeepEqual(last.Missing, []string{"price"}) ||
		!reflect.DeepEqual(last.Partial, map[string]any{"name": "Mystery Box", "currency": "JPY", "rating": 4.0, "inStock": true}) {
		t.Fatalf("items.json entry of the page without a price = %+v", last)
	}

	// items.ndjson: one object per line, the pages that succeeded.
	nd, mime := env.artifact("items.ndjson")
	lines := strings.Split(strings.TrimSuffix(string(nd), "\n"), "\n")
	if mime != "application/x-ndjson" || len(lines) != 4 {
		t.Fatalf("items.ndjson (%s) = %q", mime, nd)
	}
	for i, line := range lines {
		var obj map[string]any
		if err := json.Unmarshal([]byte(line), &obj); err != nil || !reflect.DeepEqual(obj, roundTrip(t, want[i])) {
			t.Errorf("items.ndjson line %d = %s (%v)", i, line, err)
		}
	}

	// One checkpoint per page; failed ones carry the error.
	if len(env.items) != 5 {
		t.Fatalf("%d checkpoints, want 5", len(env.items))
	}
	for _, it := range env.items {
		if (it.Key == urls[4]) != (it.Status == engine.ItemFailed) {
			t.Errorf("checkpoint %s: status %s", it.Key, it.Status)
		}
	}
}

// TestExtractStructuredAllFailAndNoSchema: every page failing is
// STEP_EXECUTION_FAILED with items.json written; a run without
// options.outputSchema is INVALID_PARAMETER naming it.
func TestExtractStructuredAllFailAndNoSchema(t *testing.T) {
	srv := fixture.New(t)
	tpl := NewExtractStructured(testManager(t), nil)
	ctx, cancel := fixture.Context(t)
	defer cancel()
	env := schemaEnv{newEnv(t, mustJSON(t, map[string]any{"urls": []string{srv.URL("/products/noprice"), srv.URL("/status/404")}})), json.RawMessage(structuredSchema)}
	_, err := runStructured(t, ctx, tpl, env)
	var e *engine.Error
	if !errors.As(err, &e) || e.Code != engine.StepExecutionFailed || !strings.Contains(e.Message, "all 2 pages failed") || e.Details["artifactId"] != "art_items.json" {
		t.Fatalf("all pages failing: %v", err)
	}
	if items := itemsJSON(t, env.fakeEnv); len(items) != 2 || items[1].HTTPStatus != 404 || items[1].Error == nil {
		t.Fatalf("items.json = %+v", items)
	}

	bare := schemaEnv{newEnv(t, mustJSON(t, map[string]any{"urls": []string{srv.URL("/products/og")}})), nil}
	_, err = tpl.Run(ctx, bare)
	if !errors.As(err, &e) || e.Code != engine.InvalidParameter || !strings.Contains(e.Message, "options.outputSchema is required") {
		t.Fatalf("no outputSchema: %v", err)
	}
	if srv.Hits("/products/og") != 0 {
		t.Fatal("a run without outputSchema opened a page")
	}
}

// scriptedModel is an OpenAI-compatible chat-completions server that
// answers canned completions in order and records what it was asked.
type scriptedModel struct {
	t       *testing.T
	mu      sync.Mutex
	answers []string
	prompts []string // every request's messages, joined
	auths   []string
}

func (s *scriptedModel) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	var body struct {
		Messages []struct {
			Content string `json:"content"`
		} `json:"messages"`
	}
	if err := json.NewDecoder(r.Body).Decode(&body); err != nil {
		s.t.Errorf("model request: %v", err)
	}
	var prompt strings.Builder
	for _, m := range body.Messages {
		prompt.WriteString(m.Content + "\n")
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.prompts = append(s.prompts, prompt.String())
	s.auths = append(s.auths, r.Header.Get("Authorization"))
	n := len(s.prompts)
	w.Header().Set("Content-Type", "application/json")
	if len(s.answers) == 0 {
		s.t.Errorf("unexpected model request %d:\n%s", n, prompt.String())
		w.WriteHeader(http.StatusInternalServerError)
		return
	}
	content := s.answers[0]
	s.answers = s.answers[1:]
	_ = json.NewEncoder(w).Encode(map[string]any{
		"id": "chatcmpl-1", "object": "chat.completion", "created": 1, "model": "scripted",
		"choices": []any{map[string]any{"index": 0, "finish_reason": "stop",
			"message": map[string]any{"role": "assistant", "content": content}}},
		"usage": map[string]any{"prompt_tokens": 100 * n, "completion_tokens": 10 * n, "total_tokens": 110 * n},
	})
}

// TestExtractStructuredModelFillsOnlyMissing: only the page without a
// price reaches the model; its invalid first answer is asked again; the
// token counts add up in the summary; the API key is sent to the model
// and appears nowhere else.
func TestExtractStructuredModelFillsOnlyMissing(t *testing.T) {
	const key = "sk-test-extract-structured-5e3c1a"
	srv := fixture.New(t)
	urls := productURLs(srv)
	sm := &scriptedModel{t: t, answers: []string{`{"price": "call us"}`, `{"price": 4500}`}}
	ms := httptest.NewServer(sm)
	defer ms.Close()
	var logs bytes.Buffer
	model, err := modelfill.NewOpenAI(modelfill.OpenAIConfig{BaseURL: ms.URL + "/v1", Model: "scripted", APIKey: key,
		Logger: slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug}))})
	if err != nil {
		t.Fatal(err)
	}
	env := schemaEnv{newEnv(t, mustJSON(t, map[string]any{"urls": urls, "concurrency": 3, "instruction": "prices in yen"})), json.RawMessage(structuredSchema)}
	ctx, cancel := fixture.Context(t)
	defer cancel()
	out, err := runStructured(t, ctx, NewExtractStructured(testManager(t), model), env)
	if err != nil {
		t.Fatal(err)
	}
	res := out.Result.(structuredResult)
	if out.Partial || res.Summary != (structuredSummary{Total: 5, Succeeded: 5, PromptTokens: 300, CompletionTokens: 30, ModelCalls: 2}) {
		t.Fatalf("partial %v, summary %+v", out.Partial, res.Summary)
	}
	if got := res.Items[4].Object; !reflect.DeepEqual(got, map[string]any{"name": "Mystery Box", "price": 4500.0, "currency": "JPY", "rating": 4.0, "inStock": true}) {
		t.Fatalf("object of the page the model completed = %v (error %v)", got, res.Items[4].Error)
	}
	for i, w := range wantProducts() {
		if !reflect.DeepEqual(res.Items[i].Object, w) {
			t.Errorf("item %d = %v, want %v", i, res.Items[i].Object, w)
		}
	}

	sm.mu.Lock()
	prompts, auths := append([]string(nil), sm.prompts...), append([]string(nil), sm.auths...)
	sm.mu.Unlock()
	if len(prompts) != 2 {
		t.Fatalf("%d model requests, want 2 (the question and one retry)", len(prompts))
	}
	for i, p := range prompts {
		if !strings.Contains(p, urls[4]) || !strings.Contains(p, "4500 yen") || !strings.Contains(p, "prices in yen") {
			t.Errorf("prompt %d lacks the page's URL, text or the instruction:\n%s", i, p)
		}
		for _, other := range []string{"Trail Runner", "Aqua Bottle", "Studio Headphones", "Skillet"} {
			if strings.Contains(p, other) {
				t.Errorf("prompt %d holds %q, a page with nothing missing", i, other)
			}
		}
		if auths[i] != "Bearer "+key {
			t.Errorf("request %d sent Authorization %q", i, auths[i])
		}
	}
	if !strings.Contains(prompts[1], "price") || !strings.Contains(prompts[1], "call us") {
		t.Errorf("the retry does not carry the validation problem:\n%s", prompts[1])
	}

	if env.usage != (engine.ModelUsage{Calls: 2, PromptTokens: 300, CompletionTokens: 30}) {
		t.Fatalf("model usage counted for the run's metrics = %+v, want 2 calls, 300/30 tokens", env.usage)
	}
	items := itemsJSON(t, env.fakeEnv)
	if it := items[4]; it.Sources["price"] != "model:scripted" || it.Sources["name"] != "json-ld:Product.name" ||
		it.ModelCalls != 2 || it.PromptTokens != 300 || it.CompletionTokens != 30 {
		t.Fatalf("items.json entry the model completed = %+v", it)
	}
	for i := range 4 {
		if items[i].ModelCalls != 0 {
			t.Errorf("items.json[%d] asked the model %d times", i, items[i].ModelCalls)
		}
	}

	// The key is nowhere but in the requests to the model.
	var seen strings.Builder
	seen.WriteString(mustJSON(t, res) + logs.String())
	for name, data := range env.artifacts {
		seen.WriteString(name + string(data))
	}
	for _, it := range env.items {
		seen.WriteString(mustJSON(t, it))
	}
	if strings.Contains(seen.String(), key) || strings.Contains(seen.String(), "extract-structured-5e3c1a") {
		t.Fatal("the API key appears in the result, an artifact, a checkpoint or the log")
	}
	if logs.Len() == 0 {
		t.Fatal("the model client logged nothing; the key check saw no log")
	}
}

// TestExtractStructuredModelErrorKeepsKeySecret: a model that refuses
// the key fails only the page that needed it, and the error does not
// repeat the key.
//
// Issue 26, item 11: the server echoes the key re-encoded too (base64 and
// upper case, beyond any redaction): a 401's words are never stored.
func TestExtractStructuredModelErrorKeepsKeySecret(t *testing.T) {
	const key = "sk-test-refused-77aa01"
	echoed := base64.StdEncoding.EncodeToString([]byte(key)) + " " + strings.ToUpper(key)
	srv := fixture.New(t)
	ms := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusUnauthorized)
		_, _ = w.Write([]byte(`{"error":{"message":"Incorrect API key provided: ` + key + ` (` + echoed + `)","type":"invalid_request_error"}}`))
	}))
	defer ms.Close()
	model, err := modelfill.NewOpenAI(modelfill.OpenAIConfig{BaseURL: ms.URL + "/v1", Model: "scripted", APIKey: key})
	if err != nil {
		t.Fatal(err)
	}
	env := schemaEnv{newEnv(t, mustJSON(t, map[string]any{"urls": []string{srv.URL("/products/og"), srv.URL("/products/noprice")}})), json.RawMessage(structuredSchema)}
	ctx, cancel := fixture.Context(t)
	defer cancel()
	out, err := runStructured(t, ctx, NewExtractStructured(testManager(t), model), env)
	if err != nil {
		t.Fatal(err)
	}
	res := out.Result.(structuredResult)
	e := res.Items[1].Error
	if !out.Partial || res.Summary.Succeeded != 1 || e == nil || e.Code != engine.StepExecutionFailed || !strings.Contains(e.Message, "asking the model for price failed") {
		t.Fatalf("partial %v, summary %+v, error %+v", out.Partial, res.Summary, e)
	}
	all := mustJSON(t, res) + mustJSON(t, env.items) + string(env.artifacts["items.json"])
	for _, leak := range append(strings.Fields(echoed), key) {
		if strings.Contains(all, leak) {
			t.Fatalf("the API key (as %q) leaked into the result: %s", leak, e.Message)
		}
	}
	if !strings.Contains(e.Message, "HTTP 401: the server refused the API key") || !strings.Contains(e.Message, "--model-key-file") {
		t.Fatalf("error %q, want the status and the fix", e.Message)
	}
}

// TestExtractStructuredStoppedRunKeepsItems: a run stopped after two pages
// keeps them as items.json (Keep), and a resumed run fetches only the
// others.
func TestExtractStructuredStoppedRunKeepsItems(t *testing.T) {
	srv := fixture.New(t)
	urls := productURLs(srv)
	tpl := NewExtractStructured(testManager(t), nil)
	env := schemaEnv{newEnv(t, mustJSON(t, map[string]any{"urls": urls, "concurrency": 1})), json.RawMessage(structuredSchema)}
	ctx, cancel := context.WithCancelCause(context.Background())
	stop := errors.New("stopped by the test")
	env.onCheckpoint = func(n int) {
		if n == 2 {
			cancel(stop)
		}
	}
	_, err := runStructured(t, ctx, tpl, env)
	if !errors.Is(err, stop) {
		t.Fatalf("stopped run returned %v", err)
	}
	env.mu.Lock()
	done := append([]engine.Item(nil), env.items...)
	env.mu.Unlock()
	if len(done) != 2 {
		t.Fatalf("%d checkpoints before the stop, want 2", len(done))
	}
	kctx, kcancel := fixture.Context(t)
	defer kcancel()
	id, name, err := tpl.(engine.Keeper).Keep(kctx, env, done)
	if err != nil || id != "art_items.json" || name != "items.json" {
		t.Fatalf("Keep = %q %q %v", id, name, err)
	}
	kept := itemsJSON(t, env.fakeEnv)
	want := wantProducts()
	if len(kept) != 2 || kept[0].URL != urls[0] || kept[1].URL != urls[1] ||
		!reflect.DeepEqual(kept[0].Object, roundTrip(t, want[0])) || !reflect.DeepEqual(kept[1].Object, roundTrip(t, want[1])) ||
		kept[0].Sources["price"] != "json-ld:Product.offers.price" {
		t.Fatalf("kept items.json = %+v", kept)
	}

	// Resume: the finished pages are neither fetched nor extracted again.
	resumed := schemaEnv{newEnv(t, string(env.inputs)), env.schema}
	resumed.done = map[string]engine.Item{}
	for _, it := range done {
		resumed.done[it.Key] = it
	}
	rctx, rcancel := fixture.Context(t)
	defer rcancel()
	out, err := runStructured(t, rctx, tpl, resumed)
	if err != nil {
		t.Fatal(err)
	}
	res := out.Result.(structuredResult)
	if res.Summary.Total != 5 || res.Summary.Succeeded != 4 || len(resumed.items) != 3 {
		t.Fatalf("resumed summary %+v, %d new checkpoints", res.Summary, len(resumed.items))
	}
	if srv.Hits("/products/jsonld") != 1 || srv.Hits("/products/microdata") != 1 || srv.Hits("/products/og") != 1 {
		t.Fatalf("hits jsonld %d microdata %d og %d, want 1 each", srv.Hits("/products/jsonld"), srv.Hits("/products/microdata"), srv.Hits("/products/og"))
	}
	if !reflect.DeepEqual(res.Items[0].Object, roundTrip(t, want[0])) {
		t.Fatalf("restored item 0 = %v", res.Items[0].Object)
	}
	if strings.Contains(string(resumed.artifacts["items.json"]), "schemaHash") {
		t.Fatal("items.json shows the checkpoints' schema hash")
	}

	// Continued with another outputSchema (the engine continues by inputs
	// alone): nothing made for the old schema is reported, every page is
	// done again.
	other := schemaEnv{newEnv(t, string(env.inputs)), json.RawMessage(`{"type":"object","required":["name"],"properties":{"name":{"type":"string"}}}`)}
	other.done = map[string]engine.Item{}
	for _, it := range append(done, resumed.items...) {
		other.done[it.Key] = it
	}
	out, err = runStructured(t, rctx, tpl, other)
	if err != nil {
		t.Fatal(err)
	}
	res = out.Result.(structuredResult)
	if res.Summary.Succeeded != 5 || len(other.items) != 5 || srv.Hits("/products/jsonld") != 2 ||
		!reflect.DeepEqual(res.Items[0].Object, map[string]any{"name": "Trail Runner 3"}) {
		t.Fatalf("another schema: summary %+v, %d checkpoints, jsonld hits %d, item 0 %v", res.Summary, len(other.items), srv.Hits("/products/jsonld"), res.Items[0].Object)
	}
	// Keep reads the outputs back from the run's checkpoints (the engine
	// hands it the items without them): a run whose checkpoints were all
	// made for the old schema keeps none.
	stale := schemaEnv{newEnv(t, string(env.inputs)), other.schema}
	stale.done = map[string]engine.Item{}
	for _, it := range done {
		stale.done[it.Key] = it
	}
	if id, _, err := tpl.(engine.Keeper).Keep(kctx, stale, done); err != nil || id != "art_items.json" || len(itemsJSON(t, stale.fakeEnv)) != 0 {
		t.Fatalf("Keep with another schema kept %s (%v)", stale.artifacts["items.json"], err)
	}
}

// TestExtractStructuredClientSampling: with no model configured and a
// client that declared sampling, the page missing its price asks the
// client's model as an input request in its MCP form
// (sampling/createMessage); the pages with everything stated ask nothing;
// a configured model wins over the client's.
func TestExtractStructuredClientSampling(t *testing.T) {
	srv := fixture.New(t)
	urls := productURLs(srv)
	env := schemaEnv{newEnv(t, mustJSON(t, map[string]any{"urls": urls, "concurrency": 2})), json.RawMessage(structuredSchema)}
	env.sampling = true
	var mu sync.Mutex
	var asked []engine.Question
	env.ask = func(q engine.Question) (json.RawMessage, error) {
		mu.Lock()
		asked = append(asked, q)
		mu.Unlock()
		return json.RawMessage(`{"role": "assistant", "model": "client-model-1", "stopReason": "endTurn",
			"content": {"type": "text", "text": "{\"price\": 4500}"}}`), nil
	}
	ctx, cancel := fixture.Context(t)
	defer cancel()
	out, err := runStructured(t, ctx, NewExtractStructured(testManager(t), nil), env)
	if err != nil {
		t.Fatal(err)
	}
	res := out.Result.(structuredResult)
	if out.Partial || res.Summary != (structuredSummary{Total: 5, Succeeded: 5, ModelCalls: 1}) {
		t.Fatalf("partial %v, summary %+v", out.Partial, res.Summary)
	}
	if got := res.Items[4].Object; got["price"] != 4500.0 || got["name"] != "Mystery Box" {
		t.Fatalf("object of the page the client's model completed = %v (error %v)", got, res.Items[4].Error)
	}
	if len(asked) != 1 {
		t.Fatalf("%d questions, want 1 (only the page without a price)", len(asked))
	}
	q := asked[0]
	var req struct {
		Method string `json:"method"`
		Params struct {
			Messages []struct {
				Role    string `json:"role"`
				Content struct{ Type, Text string }
			} `json:"messages"`
			SystemPrompt string `json:"systemPrompt"`
			MaxTokens    int    `json:"maxTokens"`
		} `json:"params"`
	}
	if err := json.Unmarshal(q.Request, &req); err != nil {
		t.Fatal(err)
	}
	if q.Kind != engine.QuestionMCP || req.Method != "sampling/createMessage" || len(req.Params.Messages) != 1 ||
		req.Params.Messages[0].Role != "user" || req.Params.Messages[0].Content.Type != "text" ||
		!strings.Contains(req.Params.Messages[0].Content.Text, urls[4]) || req.Params.SystemPrompt == "" || req.Params.MaxTokens <= 0 {
		t.Fatalf("question %s %s: %s", q.Kind, q.RequestID, q.Request)
	}
	if items := itemsJSON(t, env.fakeEnv); items[4].Sources["price"] != "model:client-model-1" {
		t.Fatalf("price source = %q", items[4].Sources["price"])
	}
	if env.usage != (engine.ModelUsage{Calls: 1}) {
		t.Fatalf("usage = %+v, want 1 call and no tokens (a sampling answer reports none)", env.usage)
	}

	// A client that declines: the page fails at once, naming the refusal.
	env2 := schemaEnv{newEnv(t, mustJSON(t, map[string]any{"urls": urls[4:]})), json.RawMessage(structuredSchema)}
	env2.sampling = true
	env2.ask = func(engine.Question) (json.RawMessage, error) {
		return engine.SamplingRefusal("User rejected sampling request"), nil
	}
	if _, err := runStructured(t, ctx, NewExtractStructured(testManager(t), nil), env2); engine.CodeOf(err) != engine.StepExecutionFailed ||
		!strings.Contains(err.Error(), "User rejected sampling request") {
		t.Fatalf("declined sampling: %v", err)
	}
}

// TestExtractStructuredRenderHTTP: render "http" fills the same objects
// from the same pages with no browser at all (no browser manager), and the
// page without a price fails the same way.
func TestExtractStructuredRenderHTTP(t *testing.T) {
	srv := fixture.New(t)
	urls := productURLs(srv)
	env := schemaEnv{newEnv(t, mustJSON(t, map[string]any{"urls": urls, "render": "http", "concurrency": 3})), json.RawMessage(structuredSchema)}
	ctx, cancel := fixture.Context(t)
	defer cancel()
	out, err := runStructured(t, ctx, NewExtractStructured(nil, nil), env)
	if err != nil {
		t.Fatal(err)
	}
	res := out.Result.(structuredResult)
	if !out.Partial || res.Summary != (structuredSummary{Total: 5, Succeeded: 4, Failed: 1}) {
		t.Fatalf("partial %v, summary %+v", out.Partial, res.Summary)
	}
	for i, w := range wantProducts() {
		if !reflect.DeepEqual(res.Items[i].Object, w) {
			t.Errorf("item %d = %v (error %v), want %v", i, res.Items[i].Object, res.Items[i].Error, w)
		}
	}
	if e := res.Items[4].Error; e == nil || e.Code != engine.StepExecutionFailed || !strings.Contains(e.Message, "price") {
		t.Fatalf("the page without a price: %+v", e)
	}
	items := itemsJSON(t, env.fakeEnv)
	if items[0].HTTPStatus != 200 || items[0].FinalURL != urls[0] || items[0].Sources["price"] != "json-ld:Product.offers.price" {
		t.Fatalf("items.json[0] = %+v", items[0])
	}
	for _, u := range []string{"/products/jsonld", "/products/noprice"} {
		if n := srv.Hits(u); n != 1 {
			t.Errorf("%s fetched %d times, want once", u, n)
		}
	}
}
