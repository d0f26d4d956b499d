package web_test

import (
	"context"
	"encoding/json"
	"html"
	"io"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/browsertask/browsertask/engine"
)

func get(t *testing.T, e *env, path string, hdr map[string]string) (int, string) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodGet, e.srv.URL+path, nil)
	for k, v := range hdr {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

func TestNewRunFormGivesTheToolsErrors(t *testing.T) {
	e := newEnv(t, "", false)
	for _, inputs := range []string{`{"sleepMs":"slow"}`, `{"items":0}`, `{"nope":1}`} {
		resp, err := http.PostForm(e.srv.URL+"/runs", url.Values{"templateId": {"dev_echo"}, "inputs": {inputs}})
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		// The same submission through the engine, as run_task_template makes it.
		_, serr := e.eng.Submit(context.Background(), engine.SubmitRequest{TemplateID: "dev_echo", Inputs: json.RawMessage(inputs), Mode: engine.ModeAsync})
		want := engine.AsError(serr)
		if resp.StatusCode != http.StatusUnprocessableEntity || want.Code != engine.InvalidParameter ||
			!strings.Contains(html.UnescapeString(string(b)), want.Message) {
			t.Fatalf("inputs %s: status %d, want 422 with %q", inputs, resp.StatusCode, want.Message)
		}
	}
	resp, err := http.PostForm(e.srv.URL+"/runs", url.Values{"templateId": {"dev_echo"}, "inputs": {`[1,2]`}})
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if !strings.Contains(string(b), "inputs must be an object") {
		t.Fatalf("array inputs: %s", b)
	}
	resp, err = http.PostForm(e.srv.URL+"/runs", url.Values{"templateId": {"no_such"}, "inputs": {`{}`}})
	if err != nil {
		t.Fatal(err)
	}
	b, _ = io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusUnprocessableEntity || !strings.Contains(string(b), "TEMPLATE_NOT_FOUND") {
		t.Fatalf("unknown template: %d", resp.StatusCode)
	}
}

func TestPagesAndFragments(t *testing.T) {
	e := newEnv(t, "", false)
	if code, body := get(t, e, "/", nil); code != 200 || !strings.Contains(body, "No runs yet") || !strings.Contains(body, `data-live="false"`) {
		t.Fatalf("empty list: %d", code)
	}
	id := e.submit(map[string]any{"items": 2})
	code, body := get(t, e, "/", map[string]string{"HX-Request": "true"})
	if code != 200 || strings.Contains(body, "<html") || !strings.Contains(body, `id="runs"`) || !strings.Contains(body, `hx-trigger="every 1s"`) {
		t.Fatalf("htmx fragment of a live list: %d %s", code, body)
	}
	if _, body := get(t, e, "/?status=succeeded", nil); !strings.Contains(body, "No runs match these filters") {
		t.Fatal("filtered empty state missing")
	}
	code, body = get(t, e, "/runs/"+id, nil)
	if code != 200 || !strings.Contains(body, "<html") || !strings.Contains(body, `data-status="queued"`) {
		t.Fatalf("detail: %d", code)
	}
	code, body = get(t, e, "/runs/"+id, map[string]string{"HX-Request": "true"})
	if code != 200 || strings.Contains(body, "<html") || !strings.HasPrefix(strings.TrimSpace(body), `<div id="run-live"`) {
		t.Fatalf("detail fragment: %d %.80s", code, body)
	}
	if code, _ := get(t, e, "/runs/run_nope", nil); code != http.StatusNotFound {
		t.Fatalf("unknown run: %d", code)
	}
	for _, p := range []string{"/templates", "/profile", "/sessions", "/runs/new", "/runs/new?template=dev_echo_once", "/static/htmx.min.js"} {
		if code, _ := get(t, e, p, nil); code != 200 {
			t.Fatalf("%s: %d", p, code)
		}
	}
	if _, body := get(t, e, "/profile", nil); !strings.Contains(body, "claude mcp add") || !strings.Contains(body, "/mcp") {
		t.Fatal("profile lacks the client snippets")
	}
	if _, body := get(t, e, "/sessions", nil); !strings.Contains(body, "sess_") {
		t.Fatal("sessions page does not list the queued run's session")
	}
}
