package acceptance

// Issue 26, item 4 and acceptance 6: the secrets sweep of the first round
// (TestBlackboxSessionsAndLogin: database, -wal, -shm, the log, events
// and runs) on GET forms in windows-1252, ISO-8859-1 and Shift_JIS, with
// the dashboard's run page besides, on the built binary.

import (
	"fmt"
	"html"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"golang.org/x/text/encoding/htmlindex"

	"github.com/browsertask/browsertask/internal/fixture"
)

// charsetForms serves /form/{charset}, a page encoded and declared in that
// charset with a GET form whose field pin goes to /page/{charset}, and
// records the raw queries /page gets.
func charsetForms(t *testing.T) (*httptest.Server, func() string) {
	t.Helper()
	var mu sync.Mutex
	last := ""
	mux := http.NewServeMux()
	mux.HandleFunc("GET /form/{cs}", func(w http.ResponseWriter, r *http.Request) {
		cs := r.PathValue("cs")
		enc, err := htmlindex.Get(cs)
		if err != nil {
			http.NotFound(w, r)
			return
		}
		body, _ := enc.NewEncoder().String(`<!doctype html><title>PIN</title><form action="/page/` + cs +
			`" method="get"><input id="pin" name="pin"><button id="go">Go</button></form>`)
		w.Header().Set("Content-Type", "text/html; charset="+cs)
		_, _ = io.WriteString(w, body)
	})
	mux.HandleFunc("GET /page/{cs}", func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		last = r.URL.RawQuery
		mu.Unlock()
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		_, _ = io.WriteString(w, `<!doctype html><title>Landed</title><p id="landed">Landed</p>`)
	})
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	return srv, func() string {
		mu.Lock()
		defer mu.Unlock()
		return last
	}
}

func TestBlackboxSecretFormCharsets(t *testing.T) {
	fixture.NeedChromium(t)
	t.Parallel()
	site, lastQuery := charsetForms(t)
	p := startServe(t, "--log-level", "debug")
	cs := connectHTTP(t, p, nil)
	cases := []struct{ charset, secret, sent string }{
		{"windows-1252", `Zq9 x+y/é%&<"'K2`, "Zq9+x%2By%2F%E9%25%26%3C%22%27K2"},
		{"iso-8859-1", `Zq9 x+y/é%&<"'K2`, "Zq9+x%2By%2F%E9%25%26%3C%22%27K2"},
		{"shift_jis", "Zq9 ソフト+é€K2", "Zq9+%83%5C%83t%83g%2B%26%23233%3B%26%238364%3BK2"},
	}
	var leaks []string
	var runIDs []string
	for _, c := range cases {
		run, isErr := runSync(t, cs, "run_steps", "", obj{"startUrl": site.URL + "/form/" + c.charset, "steps": []any{
			obj{"action": "type", "selector": "#pin", "text": c.secret, "secret": true},
			obj{"action": "click", "selector": "#go"},
			obj{"action": "wait_for", "selector": "#landed"},
		}})
		if isErr || run["status"] != "succeeded" {
			t.Fatalf("%s: %v %v", c.charset, run["status"], run["error"])
		}
		// The form really went in that charset.
		if q := lastQuery(); q != "pin="+c.sent {
			t.Fatalf("%s: the form sent %q, want pin=%s", c.charset, q, c.sent)
		}
		if got, want := sub(run, "result")["finalUrl"], site.URL+"/page/"+c.charset+"?pin=***"; got != want {
			t.Errorf("%s: finalUrl %v, want %s", c.charset, got, want)
		}
		runIDs = append(runIDs, run["runId"].(string))
		raw, _ := url.QueryUnescape(c.sent)
		leaks = append(leaks, c.secret, c.sent, strings.ToLower(c.sent), strings.ReplaceAll(c.sent, "+", "%20"), raw, "Zq9 x", "Zq9+x", "Zq9%20x")
	}
	var shown strings.Builder
	for _, id := range runIDs {
		fmt.Fprint(&shown, callOK(t, cs, "get_task_run_events", obj{"runId": id}), getRun(t, cs, id))
		res, err := http.Get("http://" + p.addr + "/runs/" + id)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(res.Body)
		res.Body.Close()
		if res.StatusCode != http.StatusOK || !strings.Contains(string(b), html.EscapeString("pin=***")) {
			t.Fatalf("run page %s: %d, want 200 with pin=***", id, res.StatusCode)
		}
		shown.Write(b)
	}
	check := func(when string) {
		for _, l := range leaks {
			if hits := fileContains(t, l, p.db, p.db+"-wal", p.db+"-shm", p.logPath); len(hits) > 0 {
				t.Errorf("%s: the secret as %q is in %v", when, l, hits)
			}
			if strings.Contains(shown.String(), l) {
				t.Errorf("%s: the secret as %q is in an MCP answer or the dashboard", when, l)
			}
		}
	}
	check("while running")
	p.stop(5 * time.Second)
	check("after shutdown")
	if !p.logLine("runId="+runIDs[0]) && !strings.Contains(p.log(), runIDs[0]) {
		t.Fatal("the log file checked says nothing of the runs")
	}
}
