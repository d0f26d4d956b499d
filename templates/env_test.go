package templates

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"os"
	"sync"
	"testing"

	"github.com/browsertask/browsertask/browser"
	"github.com/browsertask/browsertask/engine"
	"github.com/browsertask/browsertask/internal/fixture"
)

// fakeEnv is a minimal in-memory engine.Env.
type fakeEnv struct {
	sessionID string
	inputs    json.RawMessage
	profile   engine.Profile
	done      map[string]engine.Item
	// onCheckpoint, when set, runs after each checkpoint with the count so far.
	onCheckpoint func(n int)
	// ask, when set, answers Ask with an MCP elicitation result (see
	// elicitAccept); nil refuses every question.
	ask func(engine.Question) (json.RawMessage, error)
	// sampling is what ClientCanSample reports.
	sampling bool

	mu        sync.Mutex
	items     []engine.Item
	progress  []engine.Progress
	artifacts map[string][]byte
	mimes     map[string]string
	usage     engine.ModelUsage
}

func newEnv(t *testing.T, inputs string) *fakeEnv {
	t.Helper()
	return &fakeEnv{
		sessionID: "sess_" + t.Name(),
		inputs:    json.RawMessage(inputs),
		profile:   engine.Profile{MaxURLs: 1000, MaxTabsPerSession: 20, TrustLevel: "local"},
		artifacts: map[string][]byte{},
		mimes:     map[string]string{},
	}
}

func (e *fakeEnv) RunID() string                         { return "run_test" }
func (e *fakeEnv) SessionID() string                     { return e.sessionID }
func (e *fakeEnv) BrowserProfile() string                { return "" }
func (e *fakeEnv) Inputs() json.RawMessage               { return e.inputs }
func (e *fakeEnv) OutputSchema() json.RawMessage         { return nil }
func (e *fakeEnv) Profile() engine.Profile               { return e.profile }
func (e *fakeEnv) FinishedItems() map[string]engine.Item { return e.done }
func (e *fakeEnv) Logger() *slog.Logger                  { return slog.New(slog.DiscardHandler) }
func (e *fakeEnv) ClientCanSample() bool                 { return e.sampling }
func (e *fakeEnv) CountModelUsage(u engine.ModelUsage) {
	e.mu.Lock()
	e.usage.Calls += u.Calls
	e.usage.PromptTokens += u.PromptTokens
	e.usage.CompletionTokens += u.CompletionTokens
	e.mu.Unlock()
}
func (e *fakeEnv) SetProgress(p engine.Progress) {
	e.mu.Lock()
	e.progress = append(e.progress, p)
	e.mu.Unlock()
}

func (e *fakeEnv) Checkpoint(ctx context.Context, it engine.Item, p engine.Progress) error {
	e.mu.Lock()
	e.items = append(e.items, it)
	e.progress = append(e.progress, p)
	n := len(e.items)
	e.mu.Unlock()
	if e.onCheckpoint != nil {
		e.onCheckpoint(n)
	}
	return ctx.Err()
}

func (e *fakeEnv) PutArtifact(ctx context.Context, name, mime string, data []byte) (string, error) {
	if mime == "" {
		return "", fmt.Errorf("artifact %s without a mime type", name)
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	e.artifacts[name] = data
	e.mimes[name] = mime
	return "art_" + name, nil
}

// artifact returns a stored artifact's bytes and mime type.
func (e *fakeEnv) artifact(name string) ([]byte, string) {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.artifacts[name], e.mimes[name]
}

// pagesJSON decodes the pages.json artifact.
func (e *fakeEnv) pagesJSON(t *testing.T) []pageOut {
	t.Helper()
	e.mu.Lock()
	defer e.mu.Unlock()
	var out []pageOut
	if err := json.Unmarshal(e.artifacts["pages.json"], &out); err != nil {
		t.Fatalf("pages.json: %v (%s)", err, e.artifacts["pages.json"])
	}
	return out
}

var (
	sharedOnce sync.Once
	shared     *browser.Manager
	sharedDir  string
)

// testManager returns a browser manager shared by the package's tests,
// skipping when Chromium is missing (failing when CI is set).
func testManager(t *testing.T) *browser.Manager {
	t.Helper()
	fixture.NeedChromium(t)
	sharedOnce.Do(func() {
		sharedDir, _ = os.MkdirTemp("", "templates-test-")
		shared = browser.NewManager(browser.Options{TempDir: sharedDir})
	})
	return shared
}

func TestMain(m *testing.M) {
	code := m.Run()
	if shared != nil {
		_ = shared.Close()
		_ = os.RemoveAll(sharedDir)
	}
	os.Exit(code)
}

// Ask answers with e.ask, or refuses when the test set none.
func (e *fakeEnv) Ask(_ context.Context, q engine.Question) (json.RawMessage, error) {
	if e.ask != nil {
		return e.ask(q)
	}
	return nil, engine.Errorf(engine.ExecutionError, "fakeEnv: no one to ask")
}

// elicitAccept is the elicitation result of an accepted answer: field
// "value" (a string, for text and secret questions) or "confirm" (a bool).
func elicitAccept(field string, v any) json.RawMessage {
	b, _ := json.Marshal(map[string]any{"action": "accept", "content": map[string]any{field: v}})
	return b
}

// elicitDecline is the elicitation result of a declined question.
func elicitDecline() json.RawMessage { return json.RawMessage(`{"action":"decline"}`) }
