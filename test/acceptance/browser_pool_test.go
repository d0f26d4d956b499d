package acceptance

// Issue 33, acceptance 5, black-box: `serve --browser A,capacity=4,B,capacity=4`
// with two Chromiums started here with remote debugging; a 200-page
// batch_extract_pages uses both; A is killed (SIGKILL) once it served 40
// pages; the run finishes succeeded on B with every page in pages.json
// exactly once. templates' TestPoolRunSurvivesALostBrowser checks the same
// against the run's checkpoints (none taken before the kill is fetched
// again), which the black box does not show.

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/browsertask/browsertask/internal/fixture"
)

// uaLog serves /p/N and records the User-Agent of each request per path.
type uaLog struct {
	srv  *httptest.Server
	mu   sync.Mutex
	hits map[string][]string
	byUA map[string]int
}

func newUALog(t *testing.T) *uaLog {
	l := &uaLog{hits: map[string][]string{}, byUA: map[string]int{}}
	l.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !strings.HasPrefix(r.URL.Path, "/p/") {
			http.NotFound(w, r)
			return
		}
		l.mu.Lock()
		l.hits[r.URL.Path] = append(l.hits[r.URL.Path], r.UserAgent())
		l.byUA[r.UserAgent()]++
		l.mu.Unlock()
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		_, _ = fmt.Fprintf(w, "<!doctype html><title>%s</title><h1>%s</h1>", r.URL.Path, r.URL.Path)
	}))
	t.Cleanup(l.srv.Close)
	return l
}

func TestBlackboxBrowserPoolFailover(t *testing.T) {
	fixture.NeedChromium(t)
	t.Parallel()
	const uaA, uaB, n, killAfter = "bt-pool-A", "bt-pool-B", 200, 40
	site := newUALog(t)
	a := fixture.StartRemoteChromium(t, "--user-agent="+uaA)
	b := fixture.StartRemoteChromium(t, "--user-agent="+uaB)
	p := startServe(t, "--browser", a.WS+",capacity=4,"+b.HTTP+",capacity=4")
	cs := connectHTTP(t, p, nil)
	urls := make([]any, n)
	for i := range urls {
		urls[i] = fmt.Sprintf("%s/p/%d", site.srv.URL, i)
	}
	id := submitAsync(t, cs, "batch_extract_pages", obj{"urls": urls, "render": "browser", "concurrency": 8,
		"fields": obj{"h": "h1"}}, obj{"timeoutMs": 600000})
	fixture.WaitUntil(t, "browser A to serve 40 pages", func() bool {
		site.mu.Lock()
		defer site.mu.Unlock()
		return site.byUA[uaA] >= killAfter
	})
	a.Kill()
	run := waitTerminal(t, cs, id)
	res := sub(run, "result")
	if s := sub(res, "summary"); run["status"] != "succeeded" || num(s, "total") != n || num(s, "succeeded") != n {
		t.Fatalf("run after losing browser A: %v %v summary %v\n%s", run["status"], run["error"], res["summary"], p.logTail(30))
	}
	whole, _, _ := readArtifact(t, cs, res["artifactId"].(string), 0, 256<<10)
	var pages []struct {
		URL    string         `json:"url"`
		Fields map[string]any `json:"fields"`
		Error  any            `json:"error"`
	}
	if err := json.Unmarshal(whole, &pages); err != nil {
		t.Fatalf("pages.json: %v", err)
	}
	seen := map[string]bool{}
	for _, pg := range pages {
		path := strings.TrimPrefix(pg.URL, site.srv.URL)
		if seen[path] || pg.Error != nil || pg.Fields["h"] != path {
			t.Fatalf("pages.json entry %+v (seen before: %v), want each page once, extracted", pg, seen[path])
		}
		seen[path] = true
	}
	if len(seen) != n {
		t.Fatalf("pages.json has %d pages, want %d", len(seen), n)
	}
	site.mu.Lock()
	defer site.mu.Unlock()
	twice := 0
	for i := range n {
		h := site.hits[fmt.Sprintf("/p/%d", i)]
		switch {
		case len(h) == 1:
		case len(h) == 2 && h[0] == uaA && h[1] == uaB:
			twice++ // in flight on A when it died
		default:
			t.Fatalf("/p/%d fetched by %v, want once (or by A then B when A died loading it)", i, h)
		}
	}
	if site.byUA[uaA] < killAfter || site.byUA[uaB] == 0 || twice > 4 {
		t.Fatalf("served per browser %v, %d pages fetched again; want both used and at most 4 (A's tabs) again", site.byUA, twice)
	}
	if !p.logLine("taken out of the pool") {
		t.Errorf("the daemon's log does not say A was taken out of the pool:\n%s", p.logTail(30))
	}
	t.Logf("served: %v; fetched twice: %d", site.byUA, twice)
}
