package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/browsertask/browsertask/internal/extract/modelfill"
)

// TestModelFlags: the model flags are checked with errors that name the
// flag and the fix; the key comes from --model-key-file, else
// BROWSERTASK_MODEL_KEY, reaches the server and no error or log.
func TestModelFlags(t *testing.T) {
	noEnv := func(string) string { return "" }
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--model", "llama3.2"}, "--model and --model-key-file need --model-url"},
		{[]string{"--model-key-file", "/nope"}, "--model and --model-key-file need --model-url"},
		{[]string{"--model-url", "http://localhost:11434/v1"}, "--model is required with --model-url"},
		{[]string{"--model-url", "localhost:11434", "--model", "llama3.2"}, "--model-url: "},
	} {
		if _, err := parseFlags("serve", c.args, noEnv, nil); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%v: %v, want an error containing %q", c.args, err, c.want)
		}
	}
	cfg, err := parseFlags("serve", nil, noEnv, nil)
	if err != nil {
		t.Fatal(err)
	}
	if m, err := cfg.newModel(slog.New(slog.DiscardHandler)); m != nil || err != nil {
		t.Fatalf("no --model-url: model %v, %v", m, err)
	}

	var (
		mu    sync.Mutex
		auths []string
	)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		auths = append(auths, r.Header.Get("Authorization"))
		mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(map[string]any{
			"id": "c1", "object": "chat.completion", "created": 1, "model": "m",
			"choices": []any{map[string]any{"index": 0, "finish_reason": "stop", "message": map[string]any{"role": "assistant", "content": "{}"}}},
		})
	}))
	defer srv.Close()
	const fileKey, envKey = "sk-from-file-31ab", "sk-from-env-77cd"
	keyFile := filepath.Join(t.TempDir(), "key")
	if err := os.WriteFile(keyFile, []byte(fileKey+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	env := func(k string) string {
		switch k {
		case "BROWSERTASK_MODEL_KEY":
			return envKey
		case "BROWSERTASK_MODEL":
			return "m"
		}
		return ""
	}
	var logs bytes.Buffer
	log := slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--model-url", srv.URL + "/v1"}, envKey},
		{[]string{"--model-url", srv.URL + "/v1", "--model-key-file", keyFile}, fileKey},
	} {
		cfg, err := parseFlags("serve", c.args, env, nil)
		if err != nil {
			t.Fatal(err)
		}
		m, err := cfg.newModel(log)
		if err != nil || m == nil {
			t.Fatalf("%v: model %v, %v", c.args, m, err)
		}
		if _, err := m.Sample(context.Background(), modelfill.SampleRequest{Messages: []modelfill.Message{{Role: "user", Content: "hi"}}}); err != nil {
			t.Fatal(err)
		}
		mu.Lock()
		got := auths[len(auths)-1]
		mu.Unlock()
		if got != "Bearer "+c.want {
			t.Errorf("%v: Authorization %q, want the key %q", c.args, got, c.want)
		}
	}
	missing := filepath.Join(t.TempDir(), "absent")
	cfg, err = parseFlags("serve", []string{"--model-url", srv.URL + "/v1", "--model-key-file", missing}, env, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := cfg.newModel(log); err == nil || !strings.HasPrefix(err.Error(), "--model-key-file: ") || strings.Contains(err.Error(), envKey) {
		t.Fatalf("unreadable key file: %v", err)
	}
	if s := logs.String(); logs.Len() == 0 || strings.Contains(s, fileKey) || strings.Contains(s, envKey) {
		t.Fatalf("the model's log is empty or holds a key:\n%s", s)
	}
}
