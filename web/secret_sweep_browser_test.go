package web_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"html"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"regexp"
	"strings"
	"sync"
	"testing"

	"golang.org/x/text/encoding/htmlindex"

	"github.com/browsertask/browsertask/engine"
	"github.com/browsertask/browsertask/internal/fixture"
)

// formSite serves one GET form per charset and records what the browser
// submits: /form/{charset} is a page encoded and declared in that charset
// whose form sends the field pin to /page/{charset}, which keeps the raw
// query it got and answers "Landed" with the pin (decoded) in its title,
// as a search page repeats the query: the tab's title carries the secret
// too.
type formSite struct {
	srv *httptest.Server
	mu  sync.Mutex
	got []string // raw queries of /page, in order
}

// formPage is the form, styled so that a screenshot shows the field's
// text large and the same in every run (no caret blinking).
const formPage = `<!doctype html><html><head><title>PIN form</title></head><body style="margin:0">
<form action="/page/%[1]s" method="get" accept-charset="%[1]s"><input id="pin" name="pin" type="text" autocomplete="off" spellcheck="false"
style="font: 40px monospace; width: 900px; height: 64px; caret-color: transparent; outline: none; border: 2px solid #000">
<button id="go" type="submit">Go</button></form></body></html>`

func newFormSite(t *testing.T) *formSite {
	t.Helper()
	fs := &formSite{}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /form/{cs}", func(w http.ResponseWriter, r *http.Request) {
		cs := r.PathValue("cs")
		enc, err := htmlindex.Get(cs)
		if err != nil {
			http.NotFound(w, r)
			return
		}
		body, err := enc.NewEncoder().String(fmt.Sprintf(formPage, cs))
		if err != nil {
			http.Error(w, err.Error(), http.StatusInternalServerError)
			return
		}
		w.Header().Set("Content-Type", "text/html; charset="+cs)
		_, _ = io.WriteString(w, body)
	})
	mux.HandleFunc("GET /page/{cs}", func(w http.ResponseWriter, r *http.Request) {
		fs.mu.Lock()
		fs.got = append(fs.got, r.URL.RawQuery)
		fs.mu.Unlock()
		pin, err := decodeForm(r.PathValue("cs"), r.URL.Query().Get("pin"))
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		fmt.Fprintf(w, `<!doctype html><title>Landed: %s</title><p id="landed">Landed</p>`, html.EscapeString(pin))
	})
	fs.srv = httptest.NewServer(mux)
	t.Cleanup(fs.srv.Close)
	return fs
}

// decodeForm decodes a form value sent in charset cs (characters the
// charset lacks come as decimal references).
func decodeForm(cs, v string) (string, error) {
	enc, err := htmlindex.Get(cs)
	if err != nil {
		return "", err
	}
	s, err := enc.NewDecoder().String(v)
	return html.UnescapeString(s), err
}

// lastQuery is the raw query of the last /page request.
func (fs *formSite) lastQuery() string {
	fs.mu.Lock()
	defer fs.mu.Unlock()
	if len(fs.got) == 0 {
		return ""
	}
	return fs.got[len(fs.got)-1]
}

// waitQuestion waits until run id asks requestID.
func (e *liveEnv) waitQuestion(id, requestID string) {
	e.t.Helper()
	fixture.WaitUntil(e.t, "run "+id+" to ask "+requestID, func() bool {
		pending, err := e.eng.PendingQuestions(context.Background(), id)
		if err != nil {
			e.t.Fatal(err)
		}
		for _, q := range pending {
			if q.RequestID == requestID {
				return true
			}
		}
		if r, err := e.eng.Get(context.Background(), id); err != nil || r.Status.Terminal() {
			e.t.Fatalf("run %s never asked %s (%+v, %v)", id, requestID, r, err)
		}
		return false
	})
}

// confirm answers yes to run id's question requestID.
func (e *liveEnv) confirm(id, requestID string) {
	e.t.Helper()
	yes := true
	if _, err := e.eng.AnswerQuestion(context.Background(), id, requestID, engine.Answer{Confirm: &yes}); err != nil {
		e.t.Fatal(err)
	}
}

// get returns the body of a dashboard page.
func (e *liveEnv) get(path string) string {
	e.t.Helper()
	res, err := http.Get(e.srv.URL + path)
	if err != nil {
		e.t.Fatal(err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	if res.StatusCode != http.StatusOK {
		e.t.Fatalf("GET %s: %d %s", path, res.StatusCode, b)
	}
	return string(b)
}

// streamUntil reads run id's live stream until an event whose name has
// prefix event and whose data contains want, and returns that data.
func (e *liveEnv) streamUntil(id, event, want string) string {
	e.t.Helper()
	ctx, cancel := fixture.Context(e.t)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, e.srv.URL+"/runs/"+id+"/live/stream", nil)
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		e.t.Fatal(err)
	}
	defer res.Body.Close()
	sc := bufio.NewScanner(res.Body)
	sc.Buffer(make([]byte, 1<<20), 16<<20)
	var name string
	var data []string
	for sc.Scan() {
		line := sc.Text()
		switch {
		case strings.HasPrefix(line, "event: "):
			name, data = strings.TrimPrefix(line, "event: "), nil
		case strings.HasPrefix(line, "data: "):
			data = append(data, strings.TrimPrefix(line, "data: "))
		case line == "":
			if d := strings.Join(data, "\n"); strings.HasPrefix(name, event) && strings.Contains(d, want) {
				return d
			}
		}
	}
	e.t.Fatalf("run %s: the live stream ended (%v) without a %q event holding %q", id, sc.Err(), event, want)
	return ""
}

// secretCase is a secret typed into a form of one charset.
type secretCase struct {
	charset string
	secret  string
	// sent is how the charset's form spells a character of the secret
	// (proof the form was submitted in that charset).
	sent string
}

// TestSecretSweepFormCharsets (issue 26, items 4 and 5; acceptance 6): a
// run_steps run types a secret (marked secret) into a GET form in
// UTF-8, windows-1252, ISO-8859-1 and Shift_JIS, submits it and stops at
// a confirm question on the landing page, whose address and title carry
// the secret as that charset's form encoding sent it. While the run
// waits, the run page (In flight, the live view's tab header) and the
// "tabs" event of the live stream show the address with pin=***; after it,
// the result's finalUrl is …/page?pin=***, and neither the dashboard
// (run page, runs list), the events, the process log (debug level) nor the
// database file, its -wal and -shm hold the secret in any spelling. Before the fix the masker knew UTF-8 spellings
// only (finalUrl kept pin=Zq9+x%2By%2F%E9…) and the tab address and title
// were shown verbatim (pin=UniqPin+4711%2Bx).
func TestSecretSweepFormCharsets(t *testing.T) {
	logs := &fixture.Buffer{}
	e := newLiveEnvWith(t, liveOptions{Log: logs})
	fs := newFormSite(t)
	cases := []secretCase{
		{charset: "utf-8", secret: "UniqPin 4711+x", sent: "UniqPin+4711%2Bx"},
		{charset: "windows-1252", secret: `Zq9 x+y/é%&<"'K2`, sent: "%E9"},
		{charset: "iso-8859-1", secret: `Zq9 x+y/é%&<"'K2`, sent: "%E9"},
		{charset: "shift_jis", secret: "Zq9 ソフト+é€K2", sent: "%83%5C%83t%83g"},
	}
	for _, c := range cases {
		t.Run(c.charset, func(t *testing.T) {
			e.t = t
			id := e.submitSteps(map[string]any{"startUrl": fs.srv.URL + "/form/" + c.charset, "navigationTimeoutMs": 30000,
				"steps": []map[string]any{
					{"action": "type", "selector": "#pin", "text": c.secret, "secret": true},
					{"action": "click", "selector": "#go"},
					{"action": "wait_for", "selector": "#landed", "timeoutMs": 30000},
					{"action": "confirm", "message": "The tab is on the landing page; go on?"},
				}})
			e.waitQuestion(id, "step-3")
			q, _ := url.ParseQuery(fs.lastQuery())
			raw := strings.TrimPrefix(fs.lastQuery(), "pin=")
			if got, _ := decodeForm(c.charset, q.Get("pin")); got != c.secret || !strings.Contains(raw, c.sent) {
				t.Fatalf("the form sent pin=%s (%q decoded), want %q in %s spelling %s", raw, got, c.secret, c.charset, c.sent)
			}
			leaks := secretSpellings(c.secret, raw, q.Get("pin"))

			// While it runs: the run page and the stream show the tab
			// with its address masked.
			page := e.get("/runs/" + id)
			tabs := e.streamUntil(id, "tabs", "/page/"+c.charset+"?pin=")
			masked := "/page/" + c.charset + "?pin=***"
			for what, body := range map[string]string{"run page": page, "live stream tabs event": tabs} {
				if !strings.Contains(body, masked) || !strings.Contains(body, "Landed: ***") {
					t.Errorf("%s: no tab on %s titled \"Landed: ***\":\n%s", what, masked, clip(body))
				}
				noLeak(t, what, body, leaks)
			}
			if !strings.Contains(page, `in-flight-url" title="`+fs.srv.URL+masked) {
				t.Errorf("run page: no In flight entry for %s:\n%s", masked, clip(page))
			}

			e.confirm(id, "step-3")
			run := e.waitRun(id)
			var res struct {
				FinalURL string `json:"finalUrl"`
			}
			if run.Status != engine.StatusSucceeded || json.Unmarshal(run.Result, &res) != nil {
				t.Fatalf("run %s %+v %s", run.Status, run.Error, run.Result)
			}
			if want := fs.srv.URL + "/page/" + c.charset + "?pin=***"; res.FinalURL != want {
				t.Errorf("finalUrl %q, want %q", res.FinalURL, want)
			}
			evs, _, _, err := e.eng.EventsAfter(context.Background(), id, 0, 1000)
			if err != nil {
				t.Fatal(err)
			}
			b, _ := json.Marshal(evs)
			noLeak(t, "events", string(b), leaks)
			noLeak(t, "finished run page", e.get("/runs/"+id), leaks)
			noLeak(t, "runs list", e.get("/"), leaks)
			if !strings.Contains(logs.String(), "runId="+id) {
				t.Errorf("the process log says nothing of run %s: the check below would prove nothing", id)
			}
			noLeak(t, "process log", logs.String(), leaks)
			for _, p := range []string{e.db, e.db + "-wal", e.db + "-shm"} {
				data, err := os.ReadFile(p)
				if err != nil && !os.IsNotExist(err) {
					t.Fatal(err)
				}
				noLeak(t, p, string(data), leaks)
			}
		})
	}
}

// secretSpellings are the ways a secret could be shown: itself, the
// query value the form sent (raw, with the other hex case and the other
// space spelling) and its bytes in the form's charset; then its first
// five characters, with either space spelling (every spelling starts
// with them), so a half-masked one is caught too.
func secretSpellings(secret, sent, bytes string) []string {
	head := secret[:5]
	return []string{secret, sent, lowerHex(sent), strings.ReplaceAll(sent, "+", "%20"), bytes,
		head, strings.ReplaceAll(head, " ", "+"), strings.ReplaceAll(head, " ", "%20")}
}

// lowerHex lower-cases the hex digits of the %XX escapes in s.
func lowerHex(s string) string {
	return regexp.MustCompile(`%[0-9A-F]{2}`).ReplaceAllStringFunc(s, strings.ToLower)
}

// dataURL matches an image embedded in a page (a live frame), whose
// base64 text may hold any short string by chance.
var dataURL = regexp.MustCompile(`data:image/[a-z]+;base64,[A-Za-z0-9+/=]+`)

// noLeak fails when body holds one of leaks (outside embedded images).
func noLeak(t *testing.T, what, body string, leaks []string) {
	t.Helper()
	body = dataURL.ReplaceAllString(body, "data:…")
	for _, l := range leaks {
		if i := strings.Index(body, l); i >= 0 {
			t.Errorf("%s holds the secret as %q: …%s…", what, l, body[max(0, i-80):min(len(body), i+len(l)+80)])
		}
	}
}

// clip shortens a page for a failure message.
func clip(s string) string {
	if len(s) > 4000 {
		return s[:4000] + "…"
	}
	return s
}
