package templates

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/browsertask/browsertask/db"
	"github.com/browsertask/browsertask/engine"
	"github.com/browsertask/browsertask/internal/fixture"
)

// The doubles and the engine of retry_test.go.

// flakySite serves /, linking to /p/1, /p/2 and /p/3, and those pages.
// A path marked down answers 503 (a closed connection would do, but Go's
// transport retries a request on a reused connection that closes, which
// would blur the counts); a path marked hanging answers only once its
// request ends, and signals hung when it arrives.
type flakySite struct {
	srv  *httptest.Server
	mu   sync.Mutex
	hits map[string]int
	down map[string]bool
	hang map[string]bool
	hung chan string
}

func newFlakySite(t *testing.T) *flakySite {
	s := &flakySite{hits: map[string]int{}, down: map[string]bool{}, hang: map[string]bool{}, hung: make(chan string, 16)}
	s.srv = httptest.NewServer(http.HandlerFunc(s.serve))
	t.Cleanup(s.srv.Close)
	return s
}

func (s *flakySite) serve(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	s.hits[r.URL.Path]++
	down, hang := s.down[r.URL.Path], s.hang[r.URL.Path]
	s.mu.Unlock()
	switch {
	case down:
		http.Error(w, "not up yet", http.StatusServiceUnavailable)
		return
	case hang:
		s.hung <- r.URL.Path
		<-r.Context().Done()
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	if r.URL.Path == "/" {
		_, _ = io.WriteString(w, `<html><head><title>Home</title></head><body><h1>Home</h1>
<a href="/p/1">one</a> <a href="/p/2">two</a> <a href="/p/3">three</a></body></html>`)
		return
	}
	_, _ = fmt.Fprintf(w, `<html><head><title>Page %s</title></head><body><h1>%s</h1></body></html>`, r.URL.Path, r.URL.Path)
}

func (s *flakySite) url(path string) string { return s.srv.URL + path }

// set marks path down or hanging (false, false: served).
func (s *flakySite) set(path string, down, hang bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.down[path], s.hang[path] = down, hang
}

func (s *flakySite) hitsOf(path string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.hits[path]
}

// retryEngine is the engine with tpls on a fresh database, running until
// the test ends.
type retryEngine struct {
	eng *engine.Engine
}

func newRetryEngine(t *testing.T, tpls ...engine.Template) *retryEngine {
	t.Helper()
	store, err := db.Open(context.Background(), filepath.Join(t.TempDir(), "retry.db"))
	if err != nil {
		t.Fatal(err)
	}
	eng, err := engine.New(engine.Options{Store: store, Templates: tpls,
		Config: engine.Config{TrustLevel: "local", PollInterval: 50 * time.Millisecond, ShutdownGrace: time.Second},
		Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		store.Close()
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { _ = eng.Run(ctx); close(done) }()
	t.Cleanup(func() {
		cancel()
		<-done
		store.Close()
	})
	return &retryEngine{eng: eng}
}

// submit starts a run and returns its id.
func (r *retryEngine) submit(t *testing.T, templateID string, inputs map[string]any, schema string) string {
	t.Helper()
	req := engine.SubmitRequest{TemplateID: templateID, Mode: engine.ModeAsync, Inputs: json.RawMessage(mustJSON(t, inputs))}
	if schema != "" {
		req.OutputSchema = json.RawMessage(schema)
	}
	sub, err := r.eng.Submit(context.Background(), req)
	if err != nil {
		t.Fatalf("submit %s: %v", templateID, err)
	}
	return sub.Run.RunID
}

// wait returns the run once it is terminal.
func (r *retryEngine) wait(t *testing.T, runID string) *engine.Run {
	t.Helper()
	ctx, cancel := fixture.Context(t)
	defer cancel()
	run, err := r.eng.Wait(ctx, runID, nil)
	if err != nil {
		t.Fatalf("wait %s: %v", runID, err)
	}
	return run
}

// adopted returns the items count of each "adopted" event of a run.
func (r *retryEngine) adopted(t *testing.T, runID string) []int {
	t.Helper()
	evs, _, _, err := r.eng.EventsAfter(context.Background(), runID, 0, 500)
	if err != nil {
		t.Fatal(err)
	}
	var n []int
	for _, ev := range evs {
		if ev.Type == "adopted" {
			var d struct {
				Items int `json:"items"`
			}
			if err := json.Unmarshal(ev.Data, &d); err != nil {
				t.Fatal(err)
			}
			n = append(n, d.Items)
		}
	}
	return n
}

// items returns a run's checkpoints by key, failing on two for one key or
// two at one index.
func (r *retryEngine) items(t *testing.T, runID string) map[string]engine.Item {
	t.Helper()
	its, err := r.eng.Items(context.Background(), runID)
	if err != nil {
		t.Fatal(err)
	}
	byKey, byIndex := map[string]engine.Item{}, map[int]bool{}
	for _, it := range its {
		if _, dup := byKey[it.Key]; dup || byIndex[it.Index] {
			t.Fatalf("run %s has two checkpoints for %s or at index %d: %+v", runID, it.Key, it.Index, its)
		}
		byKey[it.Key], byIndex[it.Index] = it, true
	}
	return byKey
}

// waitHung waits until the site's hanging path is requested.
func waitHung(t *testing.T, site *flakySite, path string) {
	t.Helper()
	ctx, cancel := fixture.Context(t)
	defer cancel()
	select {
	case p := <-site.hung:
		if p != path {
			t.Fatalf("%s hung, want %s", p, path)
		}
	case <-ctx.Done():
		t.Fatalf("%s was never requested", path)
	}
}

// flakyModel is an OpenAI-compatible model that answers 401 while its
// key is refused, then a price.
type flakyModel struct {
	mu       sync.Mutex
	refused  bool
	requests int
}

func (m *flakyModel) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	m.mu.Lock()
	m.requests++
	refused := m.refused
	m.mu.Unlock()
	w.Header().Set("Content-Type", "application/json")
	if refused {
		w.WriteHeader(http.StatusUnauthorized)
		_, _ = io.WriteString(w, `{"error":{"message":"Incorrect API key provided","type":"invalid_request_error"}}`)
		return
	}
	_ = json.NewEncoder(w).Encode(map[string]any{
		"id": "chatcmpl-1", "object": "chat.completion", "created": 1, "model": "flaky",
		"choices": []any{map[string]any{"index": 0, "finish_reason": "stop",
			"message": map[string]any{"role": "assistant", "content": `{"price": 12}`}}},
		"usage": map[string]any{"prompt_tokens": 10, "completion_tokens": 2, "total_tokens": 12},
	})
}
