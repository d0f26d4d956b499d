package web_test

import (
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"

	"github.com/browsertask/browsertask/engine"
	"github.com/browsertask/browsertask/internal/fixture"
	"github.com/browsertask/browsertask/web"
)

// TestAnswerForm drives POST /runs/{id}/answer over HTTP on a run that asks
// a secret, a confirm and a text question: the guard refuses cross-site posts and
// posts without the token (nothing is answered), answers of the wrong kind
// get 400 with the engine's message (200 in the live region for htmx),
// the runs list and the run page mark the waiting run, a right answer
// redirects with a notice, and the secret is in no response body, no
// redirect and no log line.
func TestAnswerForm(t *testing.T) {
	const otp = "731902"
	const token = "tok-answer"
	e := newEnv(t, "", true)
	logs := &fixture.Buffer{}
	dash := web.New(web.Options{Engine: e.eng, Token: token, Version: "test",
		Logger: slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug}))})
	srv := httptest.NewServer(dash)
	t.Cleanup(srv.Close)
	own := srv.URL

	id := e.submitAsking(`{"tool":"t","ask":[{"requestId":"otp","kind":"secret","message":"Enter the code"},{"requestId":"go","kind":"confirm","message":"Buy it?"},{"requestId":"name","kind":"text","message":"Your name?"}]}`)
	e.waitQuestions(id, 3)

	client := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	var bodies []string
	do := func(method, path string, hdr map[string]string, form url.Values) (*http.Response, string) {
		t.Helper()
		req, _ := http.NewRequest(method, own+path, strings.NewReader(form.Encode()))
		if form != nil {
			req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		}
		for k, v := range hdr {
			req.Header.Set(k, v)
		}
		resp, err := client.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		bodies = append(bodies, string(b))
		return resp, string(b)
	}
	bearer := "Bearer " + token
	answer := "/runs/" + id + "/answer"
	secret := url.Values{"requestId": {"otp"}, "value": {otp}}
	pending := func() int {
		p, err := e.eng.PendingQuestions(t.Context(), id)
		if err != nil {
			t.Fatal(err)
		}
		return len(p)
	}

	// The guard: the same checks as the cancel button and the new-run form.
	for _, c := range []struct {
		name string
		hdr  map[string]string
		want int
	}{
		{"no token", map[string]string{"Origin": own}, http.StatusUnauthorized},
		{"wrong token", map[string]string{"Authorization": "Bearer nope"}, http.StatusUnauthorized},
		{"cross-site Origin", map[string]string{"Authorization": bearer, "Origin": "http://evil.example", "Sec-Fetch-Site": "cross-site"}, http.StatusForbidden},
		{"cross-site Origin only", map[string]string{"Authorization": bearer, "Origin": "http://evil.example"}, http.StatusForbidden},
		{"cross-site Referer", map[string]string{"Authorization": bearer, "Referer": "http://evil.example/"}, http.StatusForbidden},
		{"Origin null", map[string]string{"Authorization": bearer, "Origin": "null"}, http.StatusForbidden},
	} {
		if resp, _ := do(http.MethodPost, answer, c.hdr, secret); resp.StatusCode != c.want {
			t.Errorf("%s: status %d, want %d", c.name, resp.StatusCode, c.want)
		}
	}
	if n := pending(); n != 3 {
		t.Fatalf("%d questions pending after refused posts, want 3 (nothing answered)", n)
	}
	// GET is not a state change.
	if resp, _ := do(http.MethodGet, answer+"?requestId=otp&value=1", map[string]string{"Authorization": bearer}, nil); resp.StatusCode != http.StatusNotFound {
		t.Errorf("GET answer: %d, want 404", resp.StatusCode)
	}

	// The runs list marks the waiting run and counts it.
	_, list := do(http.MethodGet, "/", map[string]string{"Authorization": bearer}, nil)
	if !strings.Contains(list, `<tr data-run-id="`+id+`" data-waiting="true" class="waiting">`) ||
		!strings.Contains(list, `>waiting for you</span>`) || !strings.Contains(list, `id="waiting-count"`) || !strings.Contains(list, `data-count="1"`) {
		t.Errorf("runs list does not mark the waiting run:\n%s", list)
	}
	// The run page shows the three questions with their forms.
	_, page := do(http.MethodGet, "/runs/"+id, map[string]string{"Authorization": bearer}, nil)
	for _, want := range []string{"This run is waiting for you", "Enter the code", "Buy it?",
		`type="password"`, `name="value" autocomplete="one-time-code"`, `action="/runs/` + id + `/answer"`,
		`name="confirm" value="yes"`, `name="confirm" value="no"`, `data-waiting="true"`, `hx-preserve="true"`,
		"Your name?", `type="text" id="answer-6e616d65-value" name="value"`} {
		if !strings.Contains(page, want) {
			t.Errorf("run page lacks %q", want)
		}
	}

	// Wrong kinds and bad values: 400 with the message, nothing answered.
	for _, c := range []struct {
		name   string
		form   url.Values
		status int
		msg    string
	}{
		{"confirm for a secret", url.Values{"requestId": {"otp"}, "confirm": {"yes"}}, 400, "asks for a secret value: give value"},
		{"value for a confirm", url.Values{"requestId": {"go"}, "value": {otp}}, 400, "asks to confirm: give confirm"},
		{"confirm neither yes nor no", url.Values{"requestId": {"go"}, "confirm": {"maybe"}}, 400, "confirm must be yes or no"},
		{"unknown request", url.Values{"requestId": {"nope"}, "value": {otp}}, 400, "not waiting for an answer to requestId"},
		{"three waiting, none named", url.Values{"value": {otp}}, 400, "waits for 3 answers"},
		{"nothing for a text", url.Values{"requestId": {"name"}}, 400, "asks for a text value: give value"},
	} {
		resp, body := do(http.MethodPost, answer, map[string]string{"Authorization": bearer, "Origin": own}, c.form)
		if resp.StatusCode != c.status || !strings.Contains(body, "INVALID_PARAMETER") || !strings.Contains(body, c.msg) {
			t.Errorf("%s: status %d, want %d with %q", c.name, resp.StatusCode, c.status, c.msg)
		}
		if !strings.Contains(body, `id="answer-status"`) || !strings.Contains(body, "Enter the code") {
			t.Errorf("%s: the error is not shown on the run page", c.name)
		}
	}
	// htmx gets the live region and the error out of band, as 200 so it swaps.
	resp, body := do(http.MethodPost, answer, map[string]string{"Authorization": bearer, "Origin": own, "HX-Request": "true"}, url.Values{"requestId": {"otp"}, "confirm": {"no"}})
	if resp.StatusCode != http.StatusOK || !strings.HasPrefix(body, `<div id="run-live"`) || !strings.Contains(body, `id="answer-status" hx-swap-oob="true"`) ||
		!strings.Contains(body, "asks for a secret value") || strings.Contains(body, "<html") {
		t.Errorf("htmx wrong kind: %d %s", resp.StatusCode, body)
	}
	if resp, body := do(http.MethodPost, "/runs/run_nope/answer", map[string]string{"Authorization": bearer}, secret); resp.StatusCode != http.StatusNotFound || !strings.Contains(body, "RUN_NOT_FOUND") {
		t.Errorf("unknown run: %d", resp.StatusCode)
	}
	if n := pending(); n != 3 {
		t.Fatalf("%d questions pending after refused answers, want 3", n)
	}

	// The right answer: 303 to the run page with a notice; then the confirm
	// through htmx.
	resp, _ = do(http.MethodPost, answer, map[string]string{"Authorization": bearer, "Origin": own, "Referer": own + "/runs/" + id}, secret)
	loc := resp.Header.Get("Location")
	if resp.StatusCode != http.StatusSeeOther || loc != "/runs/"+id+"?answered=otp" {
		t.Fatalf("answer: %d Location %q, want 303 to /runs/%s?answered=otp", resp.StatusCode, loc, id)
	}
	if _, body := do(http.MethodGet, loc, map[string]string{"Authorization": bearer}, nil); !strings.Contains(body, "Answer sent (otp).") ||
		strings.Contains(body, `<p class="message">Enter the code</p>`) || !strings.Contains(body, "Buy it?") {
		t.Errorf("run page after the answer: no notice, or the answered question still asked")
	}
	resp, body = do(http.MethodPost, answer, map[string]string{"Authorization": bearer, "Origin": own}, secret)
	if resp.StatusCode != http.StatusBadRequest || !strings.Contains(body, "answered already") {
		t.Errorf("second answer: %d, want 400 answered already", resp.StatusCode)
	}
	resp, body = do(http.MethodPost, answer, map[string]string{"Authorization": bearer, "Origin": own, "HX-Request": "true"}, url.Values{"requestId": {"go"}, "confirm": {"yes"}})
	if resp.StatusCode != http.StatusOK || !strings.Contains(body, "Answer sent (go).") || !strings.Contains(body, `hx-swap-oob="true"`) {
		t.Errorf("htmx confirm: %d %s", resp.StatusCode, body)
	}
	if resp, _ := do(http.MethodPost, answer, map[string]string{"Authorization": bearer}, url.Values{"requestId": {"name"}, "value": {"Ada"}}); resp.StatusCode != http.StatusSeeOther {
		t.Errorf("text answer: %d, want 303", resp.StatusCode)
	}
	run := e.waitStatus(id, engine.StatusSucceeded)
	var res struct {
		Answers map[string]map[string]any `json:"answers"`
	}
	if err := json.Unmarshal(run.Result, &res); err != nil || res.Answers["otp"]["value"] != engine.SecretMask || res.Answers["go"]["confirm"] != true || res.Answers["name"]["value"] != "Ada" {
		t.Fatalf("result %s (%v): want otp masked, go confirmed, name Ada", run.Result, err)
	}
	_, page = do(http.MethodGet, "/runs/"+id, map[string]string{"Authorization": bearer}, nil)
	if !strings.Contains(page, `&#34;value&#34;: &#34;***&#34;`) || strings.Contains(page, "This run is waiting for you") {
		t.Errorf("finished run page: no masked value, or still asking")
	}

	for i, b := range bodies {
		if strings.Contains(b, otp) {
			t.Errorf("response %d holds the secret", i)
		}
	}
	if l := logs.String(); strings.Contains(l, otp) || !strings.Contains(l, "question answered from the dashboard") {
		t.Errorf("logs hold the secret, or no answer was logged:\n%s", l)
	}
}
