package web_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/browsertask/browsertask/db"
	"github.com/browsertask/browsertask/engine"
	"github.com/browsertask/browsertask/internal/devtpl"
	"github.com/browsertask/browsertask/internal/fixture"
	"github.com/browsertask/browsertask/web"
)

// request sends method path to the live env's dashboard with headers
// (and the bearer token when set) and returns the status, the content type
// and the first 4 KiB of the body.
func (e *liveEnv) request(method, path, token, contentType, body string, headers map[string]string) (int, string, string) {
	e.t.Helper()
	ctx, cancel := fixture.Context(e.t)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, method, e.srv.URL+path, strings.NewReader(body))
	if err != nil {
		e.t.Fatal(err)
	}
	if contentType != "" {
		req.Header.Set("Content-Type", contentType)
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	for k, v := range headers {
		req.Header.Set(k, v)
	}
	noRedirect := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	res, err := noRedirect.Do(req)
	if err != nil {
		e.t.Fatal(err)
	}
	defer res.Body.Close()
	b := make([]byte, 4096)
	n, _ := io.ReadAtLeast(res.Body, b, 1)
	return res.StatusCode, res.Header.Get("Content-Type"), string(b[:n])
}

// TestLiveRoutesRefuseOtherOrigins: a page on another origin can neither
// open a run's frame stream, send input to its tabs nor take it over (403),
// with and without --token (the token does not help it); the run's own
// dashboard can open the stream; input is refused (409) while the run does
// not wait for a takeover, and bad input names the field.
func TestLiveRoutesRefuseOtherOrigins(t *testing.T) {
	for _, token := range []string{"", "s3cret-token"} {
		t.Run(fmt.Sprintf("token=%t", token != ""), func(t *testing.T) {
			e := newLiveEnv(t, token)
			sub, err := e.eng.Submit(context.Background(), engine.SubmitRequest{TemplateID: devtpl.ToolJobID, Mode: engine.ModeAsync,
				Inputs: json.RawMessage(`{"tool":"t","ask":[{"requestId":"q","kind":"text","message":"Anything?"}]}`)})
			if err != nil {
				t.Fatal(err)
			}
			id := sub.Run.RunID
			ctx, cancel := fixture.Context(t)
			defer cancel()
			if _, err := e.eng.WaitSettled(ctx, id, nil); err != nil {
				t.Fatal(err)
			}
			stream := "/runs/" + id + "/live/stream"
			input := "/runs/" + id + "/live/tab1/input"
			events := `{"events":[{"type":"mousedown","x":0.5,"y":0.5,"button":"left","buttons":1,"clickCount":1}]}`
			other := []map[string]string{
				{"Origin": "http://evil.example", "Sec-Fetch-Site": "cross-site"},
				{"Sec-Fetch-Site": "cross-site"},
				{"Sec-Fetch-Site": "same-site", "Origin": "http://127.0.0.1:3000"},
				{"Referer": "http://evil.example/page"},
				{"Origin": "null"},
			}
			for _, h := range other {
				if st, _, _ := e.request("GET", stream, token, "", "", h); st != http.StatusForbidden {
					t.Errorf("cross-origin stream %v: status %d, want 403", h, st)
				}
				if st, _, _ := e.request("POST", input, token, "application/json", events, h); st != http.StatusForbidden {
					t.Errorf("cross-origin input %v: status %d, want 403", h, st)
				}
				if st, _, _ := e.request("POST", "/runs/"+id+"/takeover", token, "", "", h); st != http.StatusForbidden {
					t.Errorf("cross-origin takeover %v: status %d, want 403", h, st)
				}
			}
			if token != "" {
				if st, _, _ := e.request("GET", stream, "", "", "", nil); st != http.StatusUnauthorized {
					t.Errorf("stream without the token: status %d, want 401", st)
				}
			}
			own := map[string]string{"Sec-Fetch-Site": "same-origin"}
			st, ct, body := e.request("GET", stream, token, "", "", own)
			if st != http.StatusOK || ct != "text/event-stream" || !strings.HasPrefix(body, "event: tabs\n") {
				t.Fatalf("own stream: %d %q %.200q", st, ct, body)
			}
			st, ct, body = e.request("POST", input, token, "application/json", events, map[string]string{"Origin": e.srv.URL})
			if st != http.StatusConflict || ct != "application/json" || !strings.Contains(body, `"INVALID_PARAMETER"`) || !strings.Contains(body, "not waiting for a takeover") {
				t.Fatalf("input outside a takeover: %d %q %s", st, ct, body)
			}
			if st, _, body := e.request("POST", input, token, "text/plain", events, nil); st != http.StatusUnsupportedMediaType || !strings.Contains(body, "application/json") {
				t.Fatalf("input as text/plain: %d %s", st, body)
			}
			// Take over (same origin): input now passes the takeover check
			// and reaches the browser side, which names the unknown tab.
			if st, _, body := e.request("POST", "/runs/"+id+"/takeover", token, "", "", map[string]string{"Origin": e.srv.URL}); st != http.StatusSeeOther {
				t.Fatalf("take over: %d %s", st, body)
			}
			st, _, body = e.request("POST", input, token, "application/json", events, nil)
			if st != http.StatusBadRequest || !strings.Contains(body, `"field":"tab"`) {
				t.Fatalf("input during a takeover to an unknown tab: %d %s", st, body)
			}
			if st, _, body := e.request("POST", input, token, "application/json", `{"events":[{"type":"fly"}]}`, nil); st != http.StatusBadRequest || !strings.Contains(body, `"field":"type"`) {
				t.Fatalf("bad event during a takeover: %d %s", st, body)
			}
		})
	}
}

// TestLiveViewOfAnotherProcess: the dashboard of a process that does not
// run the run says which process does and links to its live view, on the
// page and in the stream (which then ends), never an error page.
func TestLiveViewOfAnotherProcess(t *testing.T) {
	path := filepath.Join(t.TempDir(), "bt.db")
	open := func() *db.DB {
		s, err := db.Open(context.Background(), path)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { s.Close() })
		return s
	}
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	cfg := engine.Config{PollInterval: 20 * time.Millisecond, ShutdownGrace: 100 * time.Millisecond}
	exec, err := engine.New(engine.Options{Store: open(), Templates: []engine.Template{devtpl.ToolJob{}}, Logger: log, Config: cfg})
	if err != nil {
		t.Fatal(err)
	}
	const base = "http://127.0.0.1:45678"
	exec.SetLiveBase(base)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { _ = exec.Run(ctx); close(done) }()
	t.Cleanup(func() { cancel(); <-done })
	viewer, err := engine.New(engine.Options{Store: open(), Templates: []engine.Template{devtpl.ToolJob{}}, Logger: log, Config: cfg})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(web.New(web.Options{Engine: viewer, Logger: log}))
	t.Cleanup(srv.Close)

	sub, err := exec.Submit(context.Background(), engine.SubmitRequest{TemplateID: devtpl.ToolJobID, Mode: engine.ModeAsync,
		Inputs: json.RawMessage(`{"tool":"t","ask":[{"requestId":"q","kind":"text","message":"Anything?"}]}`)})
	if err != nil {
		t.Fatal(err)
	}
	id := sub.Run.RunID
	wctx, wcancel := fixture.Context(t)
	defer wcancel()
	if _, err := viewer.WaitSettled(wctx, id, nil); err != nil {
		t.Fatal(err)
	}
	want := base + "/runs/" + id + "#live"
	page := readAll(t, srv.URL+"/runs/"+id)
	if !strings.Contains(page, fmt.Sprintf("Another browsertask process (pid %d) runs this run", os.Getpid())) || !strings.Contains(page, `href="`+want+`"`) {
		t.Fatalf("run page does not say where the live view is (want a link to %s):\n%s", want, page)
	}
	res, err := http.Get(srv.URL + "/runs/" + id + "/live/stream")
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	var events []string
	sc := bufio.NewScanner(res.Body)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	var data strings.Builder
	for sc.Scan() {
		line := sc.Text()
		if ev, ok := strings.CutPrefix(line, "event: "); ok {
			events = append(events, ev)
		}
		if d, ok := strings.CutPrefix(line, "data: "); ok {
			data.WriteString(d)
		}
	}
	if strings.Join(events, ",") != "tabs,end" || !strings.Contains(data.String(), want) {
		t.Fatalf("stream events %v, data %.300q; want tabs (with the link) then end", events, data.String())
	}
}

// readAll GETs url and returns the body.
func readAll(t *testing.T, url string) string {
	t.Helper()
	res, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
