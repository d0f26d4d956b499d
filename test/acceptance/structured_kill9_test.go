package acceptance

// Issue 16, acceptance 4: extract_structured killed with kill -9 mid-run
// resumes in the next process on the database; no finished page is fetched
// or sent to the model again.

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"

	"github.com/browsertask/browsertask/internal/fixture"
)

// scriptedModel is an OpenAI-compatible chat completions endpoint that
// answers every question with a price of 42 and counts the questions.
func scriptedModel(t *testing.T) (*httptest.Server, *atomic.Int64) {
	t.Helper()
	var calls atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		calls.Add(1)
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(map[string]any{
			"id": "chatcmpl-1", "object": "chat.completion", "created": 1, "model": "scripted",
			"choices": []any{map[string]any{"index": 0, "finish_reason": "stop",
				"message": map[string]any{"role": "assistant", "content": `{"price": 42}`}}},
			"usage": map[string]any{"prompt_tokens": 100, "completion_tokens": 5, "total_tokens": 105},
		})
	}))
	t.Cleanup(srv.Close)
	return srv, &calls
}

func TestBlackboxExtractStructuredKill9Resume(t *testing.T) {
	fixture.NeedChromium(t)
	t.Parallel()
	fx := fixture.New(t)
	model, calls := scriptedModel(t)
	flags := []string{"--model-url", model.URL + "/v1", "--model", "scripted"}
	a := startServe(t, flags...)
	csA := connectHTTP(t, a, nil)
	schema := obj{"type": "object", "required": []any{"name", "price", "currency"},
		"properties": obj{"name": obj{"type": "string"}, "price": obj{"type": "number"}, "currency": obj{"type": "string"}}}
	urls := []any{fx.URL("/products/jsonld"), fx.URL("/products/noprice"), fx.URL("/hang"), fx.URL("/products/og")}
	id := submitAsync(t, csA, "extract_structured", obj{"urls": urls, "concurrency": 1, "perPageTimeoutMs": 5000},
		obj{"outputSchema": schema})
	// One tab: the two first pages are checkpointed (the second after the
	// model filled its price) before the browser asks for /hang.
	ctx, cancel := fixture.Context(t)
	defer cancel()
	select {
	case <-fx.Hung():
	case <-ctx.Done():
		t.Fatalf("the run never reached /hang: %v", getRun(t, csA, id))
	}
	a.kill9()
	if items := checkpointedItems(t, a.db, id); len(items) != 2 {
		t.Fatalf("checkpoints at the kill: %v, want the two first pages", items)
	}
	if n := calls.Load(); n != 1 {
		t.Fatalf("model questions before the kill: %d, want 1 (the page without a price)", n)
	}

	b := startServe(t, append([]string{"--db", a.db}, flags...)...)
	csB := connectHTTP(t, b, nil)
	run := waitTerminal(t, csB, id)
	if run["status"] != "partial_success" {
		t.Fatalf("resumed run: %v %v, want partial_success (the /hang page times out)", run["status"], run["error"])
	}
	for _, p := range []string{"/products/jsonld", "/products/noprice", "/products/og"} {
		if n := fx.Hits(p); n != 1 {
			t.Errorf("%s fetched %d times, want once", p, n)
		}
	}
	if n := calls.Load(); n != 1 {
		t.Errorf("model questions after the resume: %d, want still 1 (no finished page asked again)", n)
	}
	// The run's metrics count the one question and the tokens the model
	// reported for it (across both processes).
	if m := sub(run, "metrics"); m["modelCalls"] != float64(1) || m["promptTokens"] != float64(100) || m["completionTokens"] != float64(5) {
		t.Errorf("metrics = %v, want modelCalls 1, promptTokens 100, completionTokens 5", m)
	}
	items, _ := sub(run, "result")["items"].([]any)
	if len(items) != 4 {
		t.Fatalf("result items: %v", items)
	}
	if o := sub(items[1].(obj), "object"); o["price"] != float64(42) || o["name"] != "Mystery Box" {
		t.Fatalf("the page the model completed before the kill: %v", o)
	}
	if o := sub(items[3].(obj), "object"); o["name"] != "Studio Headphones X2" || o["currency"] != "GBP" {
		t.Fatalf("the page done after the resume: %v", o)
	}
}
