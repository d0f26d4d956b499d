package templates

import (
	"bytes"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/browsertask/browsertask/engine"
	"github.com/browsertask/browsertask/internal/extract/fetch"
)

// TestPageFailuresAdviseWhatHelps: a 404 says the page does not exist
// (not "retry"), for the page and for the run whose pages all failed; a
// page over the HTTP limit says it failed and that render "browser"
// reads it.
func TestPageFailuresAdviseWhatHelps(t *testing.T) {
	// One text node: cheap to parse, so the test stays fast under -race.
	big := append([]byte("<title>big</title><p>"), bytes.Repeat([]byte("x"), fetch.DefaultMaxBytes+1024)...)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/big":
			w.Header().Set("Content-Type", "text/html")
			_, _ = w.Write(big)
		default:
			http.NotFound(w, r)
		}
	}))
	t.Cleanup(srv.Close)
	env := newEnv(t, mustJSON(t, map[string]any{"urls": []string{srv.URL + "/gone", srv.URL + "/big"}, "render": "http"}))
	_, err := runTemplate(t, NewBatchExtractPages(nil), env)
	var e *engine.Error
	if !asEngineError(err, &e) {
		t.Fatalf("all pages failed: %v", err)
	}
	if e.Code != engine.StepExecutionFailed || !strings.HasPrefix(e.Recovery, "The page does not exist: check the URL") {
		t.Fatalf("all pages failed: %v (recovery %q)", err, e.Recovery)
	}
	errs := e.Details["errors"].([]map[string]any)
	if len(errs) != 2 || !strings.Contains(errs[1]["message"].(string), "failed: its body is larger than the 10 MiB limit of render \"http\", so it was not extracted") {
		t.Fatalf("errors %v", errs)
	}
	if strings.Contains(errs[1]["message"].(string), "only its beginning") {
		t.Fatalf("the message says a page that failed was read: %v", errs[1])
	}
	tl := tooLargeError("u", fetch.DefaultMaxBytes)
	if !strings.Contains(tl.Recovery, `render "browser" (no size limit)`) || tl.Details["limitBytes"] != int64(fetch.DefaultMaxBytes) {
		t.Fatalf("too large: %+v", tl)
	}
	for status, want := range map[int]string{404: "retrying will not help", 410: "retrying will not help", 403: "log in with the login template",
		429: "lower concurrency", 503: "retry later", 418: "HTTP 418"} {
		if got := httpStatusError("u", status, "").Recovery; !strings.Contains(got, want) {
			t.Errorf("HTTP %d: %q, want %q", status, got, want)
		}
	}
}
