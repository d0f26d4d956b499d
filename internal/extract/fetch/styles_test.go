package fetch

import (
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/browsertask/browsertask/engine"
	"github.com/browsertask/browsertask/internal/extract/page"
	"github.com/browsertask/browsertask/internal/fixture"
)

// counted serves h and counts requests by path.
type counted struct {
	mu   sync.Mutex
	hits map[string]int
	h    http.Handler
}

func (c *counted) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	c.mu.Lock()
	c.hits[r.URL.Path]++
	c.mu.Unlock()
	c.h.ServeHTTP(w, r)
}

func (c *counted) count(path string) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.hits[path]
}

// textOf fetches u, loads its sheets and returns its text and report.
func textOf(t *testing.T, f *Fetcher, u string) (string, []page.SheetUse) {
	t.Helper()
	ctx, cancel := fixture.Context(t)
	defer cancel()
	pg, err := f.Fetch(ctx, u)
	if err != nil {
		t.Fatal(err)
	}
	d, err := f.Document(ctx, pg)
	if err != nil {
		t.Fatal(err)
	}
	text, _ := d.Text(1 << 20)
	report, _ := d.StyleReport()
	return text, report
}

// TestDocumentLoadsSameOriginSheets: the page's own origin's sheets (and
// their @import) apply, fetched once per run for all its pages with
// Accept text/css; another origin's sheet is never requested and its rule
// is missing (the text shows what a browser would hide); a 404 sheet or
// one served as text/plain gives no rule, and the page is read.
func TestDocumentLoadsSameOriginSheets(t *testing.T) {
	other := &counted{hits: map[string]int{}, h: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/css")
		_, _ = w.Write([]byte(".b { display: none }"))
	})}
	srvB := httptest.NewServer(other)
	defer srvB.Close()
	accept := make(chan string, 10)
	mux := http.NewServeMux()
	mux.HandleFunc("GET /p/{n}", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		_, _ = w.Write([]byte(`<!doctype html><link rel=stylesheet href="/s/a.css"><link rel=stylesheet href="` + srvB.URL + `/s/b.css">` +
			`<link rel=stylesheet href="/s/missing.css"><link rel=stylesheet href="/s/plain.css">` +
			`<p class=a>a</p><p class=i>imported</p><p class=b>b</p><p class=m>m</p><p class=t>t</p><p>end</p>`))
	})
	mux.HandleFunc("GET /s/a.css", func(w http.ResponseWriter, r *http.Request) {
		accept <- r.Header.Get("Accept")
		w.Header().Set("Content-Type", "text/css; charset=utf-8")
		_, _ = w.Write([]byte(`@import "i.css"; .a { display: none }`))
	})
	mux.HandleFunc("GET /s/i.css", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/css")
		_, _ = w.Write([]byte(`.i { display: none }`))
	})
	mux.HandleFunc("GET /s/plain.css", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/plain")
		_, _ = w.Write([]byte(`.t { display: none }`))
	})
	own := &counted{hits: map[string]int{}, h: mux}
	srvA := httptest.NewServer(own)
	defer srvA.Close()

	f := newFetcher(t, Options{Policy: engine.URLPolicy{TrustLevel: "local"}})
	for _, n := range []string{"1", "2", "3"} {
		text, report := textOf(t, f, srvA.URL+"/p/"+n)
		if text != "b\n\nm\n\nt\n\nend" {
			t.Fatalf("page %s: text %q", n, text)
		}
		applied := 0
		for _, s := range report {
			if s.Applied {
				applied++
			}
		}
		if len(report) != 5 || applied != 2 {
			t.Fatalf("page %s: report %+v, want 5 sheets, 2 applied (i.css, a.css)", n, report)
		}
	}
	if got := <-accept; !strings.HasPrefix(got, "text/css") {
		t.Fatalf("sheet requested with Accept %q", got)
	}
	for path, want := range map[string]int{"/s/a.css": 1, "/s/i.css": 1, "/s/missing.css": 1, "/s/plain.css": 1, "/p/1": 1} {
		if got := own.count(path); got != want {
			t.Errorf("%s requested %d times, want %d", path, got, want)
		}
	}
	if n := other.count("/s/b.css"); n != 0 {
		t.Fatalf("another origin's sheet requested %d times", n)
	}
}

// TestDocumentSheetsShareThePageBudget: a sheet that never answers ends
// at the page's deadline (the Fetcher's Timeout from the page's fetch);
// the page is read without its rules.
func TestDocumentSheetsShareThePageBudget(t *testing.T) {
	release := make(chan struct{})
	mux := http.NewServeMux()
	mux.HandleFunc("GET /p", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		_, _ = w.Write([]byte(`<link rel=stylesheet href="/hang.css"><p class=h>shown</p>`))
	})
	mux.HandleFunc("GET /hang.css", func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-r.Context().Done():
		case <-release:
		}
	})
	srv := httptest.NewServer(mux)
	defer srv.Close()
	defer close(release)
	const budget = 500 * time.Millisecond
	f := newFetcher(t, Options{Policy: engine.URLPolicy{TrustLevel: "local"}, Timeout: budget})
	start := time.Now()
	text, report := textOf(t, f, srv.URL+"/p")
	if text != "shown" || len(report) != 1 || report[0].Applied {
		t.Fatalf("text %q report %+v", text, report)
	}
	// The promise is about time: the sheet waits no longer than the
	// page's budget (10 s of slack for a loaded machine).
	if el := time.Since(start); el > budget+10*time.Second {
		t.Fatalf("the page with a hanging sheet took %v, budget %v", el, budget)
	}
}

// TestDocumentPythonDocHeaderlink: python3-doc served over HTTP, its h1
// without the ¶ its basic.css hides (issue 28 item 2).
func TestDocumentPythonDocHeaderlink(t *testing.T) {
	const dir = "/usr/share/doc/python3/html"
	if _, err := os.Stat(dir + "/using/index.html"); err != nil {
		if os.Getenv("CI") != "" {
			t.Fatalf("python3-doc is not installed: %v", err)
		}
		t.Skipf("python3-doc is not installed (apt-get install -y python3-doc): %v", err)
	}
	srv := httptest.NewServer(http.FileServer(http.Dir(dir)))
	defer srv.Close()
	f := newFetcher(t, Options{Policy: engine.URLPolicy{TrustLevel: "local"}})
	ctx, cancel := fixture.Context(t)
	defer cancel()
	pg, err := f.Fetch(ctx, srv.URL+"/using/index.html")
	if err != nil {
		t.Fatal(err)
	}
	d, err := f.Document(ctx, pg)
	if err != nil {
		t.Fatal(err)
	}
	r := d.Extract(page.Options{Fields: map[string]page.Field{"h1": {Selector: "h1"}, "h2s": {Selector: "h2", All: true}}})
	if r.Fields["h1"] != "Python Setup and Usage" {
		t.Fatalf("h1 = %q", r.Fields["h1"])
	}
	for _, v := range r.Fields["h2s"].([]any) {
		if strings.Contains(v.(string), "¶") {
			t.Fatalf("h2 %q keeps the ¶", v)
		}
	}
}
