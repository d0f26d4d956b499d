package browser

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/browsertask/browsertask/internal/fixture"
)

// TestLoopbackResolverRules proves that fixture.LoopbackResolverRules,
// given in Options.ExtraArgs as the corpus tests and the fidelity bench do,
// stops the browser from reaching any host name but 127.0.0.1 and
// localhost. The probe is a name Chromium would otherwise reach without
// asking any resolver (probe.localhost is loopback to Chromium): without the
// rule the page's image and script reach the local server; with it they do
// not, and the page itself (127.0.0.1) still loads. Nothing leaves the
// machine in either case.
func TestLoopbackResolverRules(t *testing.T) {
	var probes atomic.Int64
	mux := http.NewServeMux()
	mux.HandleFunc("/probe/", func(w http.ResponseWriter, r *http.Request) {
		probes.Add(1)
		w.Header().Set("Content-Type", "image/gif")
		fmt.Fprint(w, "GIF89a")
	})
	srv := httptest.NewServer(mux)
	defer srv.Close()
	port := srv.URL[strings.LastIndex(srv.URL, ":")+1:]
	mux.HandleFunc("/page", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		fmt.Fprintf(w, `<title>probe</title><img src="http://probe.localhost:%s/probe/img.gif">`+
			`<script src="http://probe.localhost:%s/probe/a.js"></script><h1>here</h1>`, port, port)
	})
	for _, c := range []struct {
		name   string
		args   []string
		probes int64
	}{
		{"without the rule", nil, 2},
		{"with the rule", []string{fixture.LoopbackResolverRules}, 0},
	} {
		t.Run(c.name, func(t *testing.T) {
			probes.Store(0)
			m := newManager(t, Options{ExtraArgs: c.args})
			tb := testTab(t, m, "sess_probe")
			defer tb.Release(false)
			res, err := tb.Navigate(testCtx(t), srv.URL+"/page", WaitLoad)
			if err != nil {
				t.Fatal(err)
			}
			if res.Status != http.StatusOK {
				t.Fatalf("the loopback page answered %d, want 200", res.Status)
			}
			// The load event waits for the image and the blocking script,
			// so every probe request has ended (answered or refused).
			if got := probes.Load(); got != c.probes {
				t.Errorf("probe.localhost got %d requests, want %d", got, c.probes)
			}
		})
	}
}
