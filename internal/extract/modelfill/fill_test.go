package modelfill

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"sync"
	"testing"

	"github.com/browsertask/browsertask/internal/extract/structured"
)

// scripted is an OpenAI-compatible chat-completions server that answers
// canned contents in order and records every request.
type scripted struct {
	t       *testing.T
	mu      sync.Mutex
	answers []string
	status  int    // when non-zero, every request is answered with it
	errBody string // the error body sent with status
	reqs    []recorded
}

// recorded is one request the scripted server received.
type recorded struct {
	auth string
	body map[string]any
}

func (s *scripted) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	defer s.mu.Unlock()
	var body map[string]any
	if err := json.NewDecoder(r.Body).Decode(&body); err != nil {
		s.t.Errorf("request body: %v", err)
	}
	s.reqs = append(s.reqs, recorded{auth: r.Header.Get("Authorization"), body: body})
	if r.URL.Path != "/v1/chat/completions" {
		s.t.Errorf("path = %q, want /v1/chat/completions", r.URL.Path)
	}
	w.Header().Set("Content-Type", "application/json")
	if s.status != 0 {
		w.WriteHeader(s.status)
		_, _ = w.Write([]byte(s.errBody))
		return
	}
	if len(s.answers) == 0 {
		s.t.Errorf("unexpected request %d", len(s.reqs))
		w.WriteHeader(http.StatusInternalServerError)
		return
	}
	content := s.answers[0]
	s.answers = s.answers[1:]
	n := len(s.reqs)
	_ = json.NewEncoder(w).Encode(map[string]any{
		"id": "chatcmpl-1", "object": "chat.completion", "created": 1, "model": "test-model",
		"choices": []any{map[string]any{"index": 0, "finish_reason": "stop",
			"message": map[string]any{"role": "assistant", "content": content}}},
		"usage": map[string]any{"prompt_tokens": 100 * n, "completion_tokens": 10 * n, "total_tokens": 110 * n},
	})
}

// requests returns what the server received so far.
func (s *scripted) requests() []recorded {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]recorded(nil), s.reqs...)
}

// messages returns a recorded request's messages as role/content pairs.
func (r recorded) messages(t *testing.T) []Message {
	t.Helper()
	raw, _ := json.Marshal(r.body["messages"])
	var out []Message
	if err := json.Unmarshal(raw, &out); err != nil {
		t.Fatalf("messages: %v", err)
	}
	return out
}

const secretKey = "sk-test-9f8e7d6c5b4a3210ZYXW"

// productSchema asks for what the OpenGraph fixture has, and two things it
// does not: material and warrantyYears.
const productSchema = `{
  "type": "object",
  "required": ["name", "price", "warrantyYears"],
  "properties": {
    "name": {"type": "string"},
    "price": {"type": "number"},
    "currency": {"type": "string"},
    "material": {"type": "string", "x-selector": ".material"},
    "warrantyYears": {"type": "integer", "minimum": 0}
  }
}`

// newScripted starts a scripted server and a client for it.
func newScripted(t *testing.T, format string, logBuf *bytes.Buffer, answers ...string) (*scripted, *OpenAI) {
	t.Helper()
	srv := &scripted{t: t, answers: answers}
	ts := httptest.NewServer(srv)
	t.Cleanup(ts.Close)
	cfg := OpenAIConfig{BaseURL: ts.URL + "/v1", Model: "test-model", APIKey: secretKey, ResponseFormat: format}
	if logBuf != nil {
		cfg.Logger = slog.New(slog.NewTextHandler(logBuf, &slog.HandlerOptions{Level: slog.LevelDebug}))
	}
	client, err := NewOpenAI(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return srv, client
}

// ogPage extracts the OpenGraph fixture of package structured.
func ogPage(t *testing.T) (*structured.Schema, *structured.Page, *structured.Result) {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "structured", "testdata", "product_og.html"))
	if err != nil {
		t.Fatal(err)
	}
	s, err := structured.Compile(json.RawMessage(productSchema), "options.outputSchema")
	if err != nil {
		t.Fatal(err)
	}
	page, err := structured.ParsePage(string(b), "https://audiohaus.example/products/x2")
	if err != nil {
		t.Fatal(err)
	}
	return s, page, s.Extract(page)
}

// TestOnlyMissingAsked: the model sees the schema restricted to what the
// page's data did not give, the instruction and the page text; its answer
// fills those, with sources and token counts.
func TestOnlyMissingAsked(t *testing.T) {
	var logs bytes.Buffer
	srv, client := newScripted(t, FormatJSONSchema, &logs, `{"material": "Aluminium and leather", "warrantyYears": "2"}`)
	s, page, ex := ogPage(t)
	if !reflect.DeepEqual(ex.Missing, []string{"material", "warrantyYears"}) {
		t.Fatalf("deterministic missing = %q", ex.Missing)
	}
	res, err := Fill(context.Background(), client, Request{
		Schema: s, Known: ex.Object, Missing: ex.Missing, PageText: page.Text(), PageURL: page.URL(),
		Instruction: "Warranty is in years.",
	})
	if err != nil {
		t.Fatal(err)
	}
	reqs := srv.requests()
	if len(reqs) != 1 {
		t.Fatalf("%d requests, want 1", len(reqs))
	}
	rf, _ := reqs[0].body["response_format"].(map[string]any)
	js, _ := rf["json_schema"].(map[string]any)
	asked, _ := js["schema"].(map[string]any)
	props, _ := asked["properties"].(map[string]any)
	if len(props) != 2 || props["material"] == nil || props["warrantyYears"] == nil {
		t.Errorf("schema sent = %v, want only material and warrantyYears", asked)
	}
	if !reflect.DeepEqual(asked["required"], []any{"warrantyYears"}) {
		t.Errorf("required sent = %v, want [warrantyYears]", asked["required"])
	}
	msgs := reqs[0].messages(t)
	if len(msgs) != 2 || msgs[0].Role != "system" || msgs[1].Role != "user" {
		t.Fatalf("messages = %+v", msgs)
	}
	prompt := msgs[1].Content
	for _, want := range []string{`"material"`, `"warrantyYears"`, "Instruction from the user: Warranty is in years.",
		"Page URL: https://audiohaus.example/products/x2", "Studio Headphones X2\nGreat sound."} {
		if !strings.Contains(prompt, want) {
			t.Errorf("prompt lacks %q:\n%s", want, prompt)
		}
	}
	for _, filled := range []string{`"currency"`, `"price"`, `"name"`, "x-selector"} {
		if strings.Contains(prompt, filled) {
			t.Errorf("prompt asks for %s, which was already filled or is a hint:\n%s", filled, prompt)
		}
	}
	if reqs[0].body["temperature"] != 0.0 || reqs[0].body["model"] != "test-model" {
		t.Errorf("request = %v", reqs[0].body)
	}
	want := map[string]any{"name": "Studio Headphones X2", "price": 1299.0, "currency": "GBP",
		"material": "Aluminium and leather", "warrantyYears": int64(2)}
	if !reflect.DeepEqual(res.Object, want) {
		t.Errorf("object = %#v, want %#v", res.Object, want)
	}
	if len(s.Validate(res.Object)) != 0 {
		t.Errorf("merged object invalid: %q", s.Validate(res.Object))
	}
	if !reflect.DeepEqual(res.Filled, []string{"material", "warrantyYears"}) || res.Sources["material"] != "model:test-model" {
		t.Errorf("filled = %q, sources = %v", res.Filled, res.Sources)
	}
	if res.Calls != 1 || res.PromptTokens != 100 || res.CompletionTokens != 10 || len(res.Problems) != 0 || len(res.Missing) != 0 {
		t.Errorf("result = %+v", res)
	}
	if _, ok := ex.Object["material"]; ok {
		t.Error("Fill wrote into the caller's Known map")
	}
	if reqs[0].auth != "Bearer "+secretKey {
		t.Errorf("Authorization = %q, want the bearer key", reqs[0].auth)
	}
	if !strings.Contains(logs.String(), "model request") || strings.Contains(logs.String(), secretKey) {
		t.Errorf("logs = %s", logs.String())
	}
}

// TestRetryWithValidationErrors: an invalid first answer is asked again
// once, with the validation messages and the first answer in the
// conversation; tokens of both calls add up.
func TestRetryWithValidationErrors(t *testing.T) {
	srv, client := newScripted(t, "", nil,
		"Sure! Here it is: {\"material\": \"Aluminium\", \"warrantyYears\": \"two years\"}",
		"```json\n{\"material\": \"Aluminium\", \"warrantyYears\": 2}\n```")
	s, page, ex := ogPage(t)
	res, err := Fill(context.Background(), client, Request{Schema: s, Known: ex.Object, Missing: ex.Missing, PageText: page.Text()})
	if err != nil {
		t.Fatal(err)
	}
	reqs := srv.requests()
	if len(reqs) != 2 {
		t.Fatalf("%d requests, want 2", len(reqs))
	}
	if rf, _ := reqs[0].body["response_format"].(map[string]any); rf["type"] != "json_object" {
		t.Errorf("response_format = %v, want json_object by default", reqs[0].body["response_format"])
	}
	msgs := reqs[1].messages(t)
	if len(msgs) != 4 || msgs[2].Role != "assistant" || !strings.Contains(msgs[2].Content, `"two years"`) {
		t.Fatalf("retry messages = %+v", msgs)
	}
	retry := msgs[3].Content
	if !strings.Contains(retry, `- warrantyYears: no number in "two years"`) {
		t.Errorf("retry prompt lacks the validation message:\n%s", retry)
	}
	if res.Calls != 2 || res.PromptTokens != 100+200 || res.CompletionTokens != 10+20 {
		t.Errorf("calls %d, tokens %d/%d; want 2 calls, 300/30", res.Calls, res.PromptTokens, res.CompletionTokens)
	}
	if res.Object["warrantyYears"] != int64(2) || res.Object["material"] != "Aluminium" || len(res.Problems) != 0 {
		t.Errorf("result = %+v", res)
	}
}

// TestStillInvalidAfterRetry: the model is asked twice, no more; valid
// values are kept and the last problems reported, naming the property.
func TestStillInvalidAfterRetry(t *testing.T) {
	srv, client := newScripted(t, "", nil,
		`{"material": "Steel", "warrantyYears": null}`,
		`{"material": "Steel", "warrantyYears": -1}`)
	s, page, ex := ogPage(t)
	res, err := Fill(context.Background(), client, Request{Schema: s, Known: ex.Object, Missing: ex.Missing, PageText: page.Text()})
	if err != nil {
		t.Fatal(err)
	}
	if n := len(srv.requests()); n != 2 {
		t.Fatalf("%d requests, want 2", n)
	}
	first := srv.requests()[1].messages(t)[3].Content
	if !strings.Contains(first, "- warrantyYears: required property is missing") {
		t.Errorf("retry prompt lacks the missing required property:\n%s", first)
	}
	if !reflect.DeepEqual(res.Problems, []string{"warrantyYears: minimum: got -1, want 0"}) {
		t.Errorf("problems = %q", res.Problems)
	}
	if !reflect.DeepEqual(res.Missing, []string{"warrantyYears"}) || res.Object["material"] != "Steel" {
		t.Errorf("result = %+v", res)
	}
	if msgs := s.Validate(res.Object); !reflect.DeepEqual(msgs, []string{"warrantyYears: required property is missing"}) {
		t.Errorf("final validation = %q", msgs)
	}
}

// TestKeyNeverLeaks: a server that echoes the key (whole and masked) in
// its error gets an error and logs without it; a key-less client sends no
// Authorization even with OPENAI_API_KEY set; an unreachable server's
// error holds no key either.
func TestKeyNeverLeaks(t *testing.T) {
	t.Setenv("OPENAI_API_KEY", "sk-from-env-should-not-be-sent")
	t.Setenv("OPENAI_BASE_URL", "http://127.0.0.1:1/v1")
	var logs bytes.Buffer
	srv, client := newScripted(t, "", &logs)
	srv.status = http.StatusUnauthorized
	srv.errBody = `{"error":{"message":"Incorrect API key provided: ` + secretKey + ` (sk-tes***ZYXW).","type":"invalid_request_error","code":"invalid_api_key"}}`
	s, page, ex := ogPage(t)
	_, err := Fill(context.Background(), client, Request{Schema: s, Known: ex.Object, Missing: ex.Missing, PageText: page.Text()})
	if err == nil {
		t.Fatal("no error from a 401")
	}
	msg := err.Error()
	if !strings.Contains(msg, "answered HTTP 401") || !strings.Contains(msg, "--model-key-file") || strings.Contains(msg, "Incorrect API key provided") {
		t.Errorf("error = %q, want the status and the fix, without the server's words", msg)
	}
	for _, leak := range []string{secretKey, "sk-tes***ZYXW", "ZYXW"} {
		if strings.Contains(msg, leak) {
			t.Errorf("error holds %q: %s", leak, msg)
		}
		if strings.Contains(logs.String(), leak) {
			t.Errorf("logs hold %q: %s", leak, logs.String())
		}
	}
	if !strings.Contains(logs.String(), "model request failed") {
		t.Errorf("logs = %s, want the failure logged", logs.String())
	}
	if reqs := srv.requests(); len(reqs) != 1 || reqs[0].auth != "Bearer "+secretKey {
		t.Errorf("requests = %+v, want one with the configured key (no retries, no env key)", reqs)
	}

	// No key configured: nothing is sent, the environment is ignored.
	plain := &scripted{t: t, answers: []string{`{"material": "x", "warrantyYears": 1}`}}
	ts := httptest.NewServer(plain)
	defer ts.Close()
	noKey, err := NewOpenAI(OpenAIConfig{BaseURL: ts.URL + "/v1", Model: "m"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := noKey.Sample(context.Background(), SampleRequest{Messages: []Message{{Role: "user", Content: "hi"}}}); err != nil {
		t.Fatal(err)
	}
	if reqs := plain.requests(); len(reqs) != 1 || reqs[0].auth != "" {
		t.Errorf("key-less request Authorization = %q, want none", reqs[0].auth)
	}

	// Unreachable, with the key in the URL's user info: the error names
	// the endpoint without it.
	ts2 := httptest.NewServer(http.NotFoundHandler())
	addr := ts2.URL
	ts2.Close()
	gone, err := NewOpenAI(OpenAIConfig{BaseURL: strings.Replace(addr, "http://", "http://u:"+secretKey+"@", 1) + "/v1", Model: "m", APIKey: secretKey})
	if err != nil {
		t.Fatal(err)
	}
	_, err = gone.Sample(context.Background(), SampleRequest{Messages: []Message{{Role: "user", Content: "hi"}}})
	if err == nil || strings.Contains(err.Error(), secretKey) || !strings.Contains(err.Error(), "could not be reached") {
		t.Errorf("unreachable error = %v", err)
	}
	if _, err := NewOpenAI(OpenAIConfig{BaseURL: "localhost:11434?key=" + secretKey, Model: "m"}); err == nil || strings.Contains(err.Error(), secretKey) {
		t.Errorf("bad base URL error = %v", err)
	}
	if s := gone.String(); strings.Contains(s, secretKey) {
		t.Errorf("String() = %q", s)
	}
}

// TestCanceled: a canceled context stops the request and stays
// detectable.
func TestCanceled(t *testing.T) {
	_, client := newScripted(t, "", nil)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err := client.Sample(ctx, SampleRequest{Messages: []Message{{Role: "user", Content: "hi"}}})
	if !errors.Is(err, context.Canceled) {
		t.Errorf("err = %v, want context.Canceled", err)
	}
}

// fakeSampler answers from a function and counts calls.
type fakeSampler struct {
	calls  int
	answer func(req SampleRequest) string
}

func (f *fakeSampler) Sample(_ context.Context, req SampleRequest) (SampleResponse, error) {
	f.calls++
	return SampleResponse{Text: f.answer(req), Model: "fake"}, nil
}

// TestNothingMissingNoCall: a complete page never reaches the model.
func TestNothingMissingNoCall(t *testing.T) {
	f := &fakeSampler{answer: func(SampleRequest) string { return "{}" }}
	res, err := Fill(context.Background(), f, Request{Known: map[string]any{"a": 1.0}})
	if err != nil || f.calls != 0 || res.Calls != 0 || res.Object["a"] != 1.0 {
		t.Errorf("calls %d, res %+v, err %v", f.calls, res, err)
	}
}

// TestNestedMissing: a missing leaf of a partly filled object is asked
// alone and merged into the object.
func TestNestedMissing(t *testing.T) {
	s, err := structured.Compile(json.RawMessage(`{"type":"object","properties":{
	  "offer":{"type":"object","required":["currency"],"properties":{"price":{"type":"number"},"currency":{"type":"string"}}}}}`), "")
	if err != nil {
		t.Fatal(err)
	}
	var asked map[string]any
	f := &fakeSampler{answer: func(req SampleRequest) string {
		asked = req.Schema
		return `{"offer": {"currency": " EUR ", "price": 99}}`
	}}
	known := map[string]any{"offer": map[string]any{"price": 10.0}}
	res, err := Fill(context.Background(), f, Request{Schema: s, Known: known, Missing: []string{"offer.currency"}, PageText: "x"})
	if err != nil {
		t.Fatal(err)
	}
	offer := asked["properties"].(map[string]any)["offer"].(map[string]any)
	if _, ok := offer["properties"].(map[string]any)["price"]; ok {
		t.Errorf("asked for the known price: %v", asked)
	}
	want := map[string]any{"offer": map[string]any{"price": 10.0, "currency": "EUR"}}
	if !reflect.DeepEqual(res.Object, want) || res.Sources["offer.currency"] != "model:fake" {
		t.Errorf("object = %#v, sources %v", res.Object, res.Sources)
	}
	if known["offer"].(map[string]any)["currency"] != nil {
		t.Error("Fill wrote into the caller's nested map")
	}
}

// TestCutToTokens: the page text is cut to budget*4 bytes, at a line end
// when one is near, never inside a character; the prompt says so.
func TestCutToTokens(t *testing.T) {
	text := strings.Repeat("line of text\n", 100) // 1300 bytes
	out, cut := CutToTokens(text, 100)            // 400 bytes
	if !cut || len(out) > 400 || len(out) < 300 || strings.HasSuffix(out, "\n") || !strings.HasSuffix(out, "line of text") {
		t.Errorf("cut=%v len=%d tail=%q", cut, len(out), out[len(out)-15:])
	}
	wide := strings.Repeat("€", 200) // 600 bytes, 3 per character
	out, cut = CutToTokens(wide, 100)
	if !cut || len(out) != 399 || !strings.HasSuffix(out, "€") {
		t.Errorf("cut=%v len=%d", cut, len(out))
	}
	if out, cut := CutToTokens("short", 100); cut || out != "short" {
		t.Errorf("short text cut: %q", out)
	}
	var prompt string
	f := &fakeSampler{answer: func(req SampleRequest) string {
		prompt = req.Messages[0].Content
		return `{"a": "x"}`
	}}
	s, _ := structured.Compile(json.RawMessage(`{"type":"object","properties":{"a":{"type":"string"}}}`), "")
	if _, err := Fill(context.Background(), f, Request{Schema: s, Missing: []string{"a"}, PageText: text, PageTokens: 100}); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(prompt, "Page text (cut to about 100 tokens):") || strings.Count(prompt, "line of text") > 31 {
		t.Errorf("prompt:\n%s", prompt)
	}
}

func TestParseJSONObject(t *testing.T) {
	for _, in := range []string{`{"a":1}`, "```json\n{\"a\":1}\n```", "Here you go:\n{\"a\":1}\nThanks", " {\"a\": 1} "} {
		obj, err := parseJSONObject(in)
		if err != nil || obj["a"] != 1.0 {
			t.Errorf("parseJSONObject(%q) = %v, %v", in, obj, err)
		}
	}
	for _, in := range []string{"", "null", "[1]", "no json here"} {
		if obj, err := parseJSONObject(in); err == nil {
			t.Errorf("parseJSONObject(%q) = %v, want an error", in, obj)
		}
	}
}
