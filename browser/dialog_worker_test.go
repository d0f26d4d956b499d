package browser

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"

	"github.com/browsertask/browsertask/internal/fixture"
)

// dialogWorkerSite serves pages that open dialogs on load and a page whose
// dedicated worker fetches /from-worker; it counts hits per path.
func dialogWorkerSite(t *testing.T) (*httptest.Server, func(string) int) {
	var mu sync.Mutex
	hits := map[string]int{}
	mux := http.NewServeMux()
	page := func(body string) http.HandlerFunc {
		return func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "text/html; charset=utf-8")
			fmt.Fprintf(w, "<!doctype html><title>t</title><body>%s</body>", body)
		}
	}
	mux.HandleFunc("/alert", page(`<script>alert("hi")</script><h1>after alert</h1>`))
	mux.HandleFunc("/confirm", page(`<script>document.title = confirm("ok?") ? "yes" : "no"</script>`))
	mux.HandleFunc("/prompt", page(`<script>prompt("name?")</script><h1>after prompt</h1>`))
	mux.HandleFunc("/worker", page(`<script>new Worker("/worker.js")</script>`))
	mux.HandleFunc("/worker.js", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/javascript")
		fmt.Fprint(w, `fetch("/from-worker")`)
	})
	mux.HandleFunc("/from-worker", func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		hits[r.URL.Path]++
		mu.Unlock()
	})
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	return srv, func(p string) int {
		mu.Lock()
		defer mu.Unlock()
		return hits[p]
	}
}

// TestDialogsAreAnswered: a page that opens alert, confirm or prompt while
// loading used to block its renderer until the page timeout; the dialogs
// are now answered at once (alert accepted, confirm and prompt dismissed).
func TestDialogsAreAnswered(t *testing.T) {
	srv, _ := dialogWorkerSite(t)
	m := newManager(t, Options{DenyHosts: []string{"127.0.0.1:1"}})
	for _, path := range []string{"/alert", "/confirm", "/prompt"} {
		if code, details := navigateCode(t, m, "sess_dialogs", srv.URL+path); code != "" {
			t.Errorf("%s: code %q details %v, want the page loaded", path, code, details)
		}
	}
}

// TestDedicatedWorkersRun: a dedicated worker used to stay paused for ever
// (its target has no Fetch domain, so setting up interception failed and
// the child was left waiting for the debugger); it now runs, under trust
// local with a deny list (interception on) as in `serve`.
func TestDedicatedWorkersRun(t *testing.T) {
	srv, hits := dialogWorkerSite(t)
	m := newManager(t, Options{DenyHosts: []string{"127.0.0.1:1"}})
	ctx := testCtx(t)
	sess, err := m.Session(ctx, "sess_worker")
	if err != nil {
		t.Fatal(err)
	}
	tb, err := sess.AcquireTab(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer tb.Release(true) // the tab stays on the page while its worker runs
	if _, err := tb.Navigate(ctx, srv.URL+"/worker", WaitLoad); err != nil {
		t.Fatalf("worker page: %v", err)
	}
	fixture.WaitUntil(t, "the dedicated worker's fetch of /from-worker", func() bool { return hits("/from-worker") > 0 })
}
