package browser

import (
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"sync"
	"testing"
	"time"
)

// svgUsePage is the smallest page found that reproduces the stall of
// TestLoadBesideABusyTab: an inline SVG whose <use> references a symbol
// in an external SVG document (here one that is missing, as on the
// saved pages of the trafilatura corpus: dvgw.de, falstaff.de, …).
const svgUsePage = `<!doctype html><title>use</title><p>text</p><svg><use href="/missing.svg#a"/></svg>`

// TestLoadBesideABusyTab reproduces issue 28's browser-path stall (round
// two, finding 1): a page whose inline SVG <use>s an external SVG
// document loads in one tab while another tab of the same session
// evaluates a script (Tab.Healthy, as every Release(true) does; any
// Runtime.evaluate does) and stays open: the page's load event never
// comes. DOMContentLoaded fired, every request of the page finished
// (Network events), no child target attached; the frame stops loading
// only at Page.stopLoading, and the tab stays stalled for later
// navigations. Ruled out: request interception (it stalls with no Fetch
// patterns), the auto-attach of child targets, the tabs' background
// creation; without the evaluation in the other tab, or without the
// <use>, the page loads. The fix is not written yet: the test runs only
// with BROWSERTASK_REPRO_LOAD_STALL=1.
func TestLoadBesideABusyTab(t *testing.T) {
	if os.Getenv("BROWSERTASK_REPRO_LOAD_STALL") == "" {
		t.Skip("known stall (issue 28 round two, not fixed); set BROWSERTASK_REPRO_LOAD_STALL=1 to reproduce it")
	}
	site := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/" {
			http.NotFound(w, r)
			return
		}
		w.Header().Set("Content-Type", "text/html")
		_, _ = io.WriteString(w, svgUsePage)
	}))
	t.Cleanup(site.Close)
	m := newManager(t, Options{})
	s, err := m.Session(testCtx(t, 30*time.Second), "s")
	if err != nil {
		t.Fatal(err)
	}
	idle, err := s.AcquireTab(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	defer idle.Release(false)
	tb, err := s.AcquireTab(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	defer tb.Release(false)
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		time.Sleep(300 * time.Millisecond) // while the page loads; repro only
		idle.Healthy()
	}()
	_, err = tb.Navigate(testCtx(t, 15*time.Second), site.URL+"/", "")
	wg.Wait()
	if err != nil {
		t.Fatalf("the page with an SVG <use> did not load beside a tab that evaluated a script: %v", err)
	}
}
