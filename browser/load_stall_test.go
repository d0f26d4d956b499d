package browser

import (
	"io"
	"net/http"
	"net/http/httptest"
	"testing"
)

// svgUsePage is the smallest page found that reproduces the stall of
// TestLoadBesideAnIdleTab: an inline SVG whose <use> references a symbol
// in an external SVG document (here one that is missing, as on saved pages
// of the trafilatura corpus: dvgw.de, falstaff.de, …).
const svgUsePage = `<!doctype html><title>use</title><p>text</p><svg><use href="/missing.svg#a"/></svg>`

// TestLoadBesideAnIdleTab reproduces issue 28's browser-path stall (round
// two, finding 1): a page whose inline SVG <use>s an external SVG document
// (missing or present) loads in one tab while another tab of the same
// session sits idle on about:blank: the page's load event never comes.
// DOMContentLoaded fired, every request of the page finished (Network
// events), no child target attached; the frame stops loading only at
// Page.stopLoading, and the tab stays stalled for later navigations. It
// happens whether or not the idle tab is sent a command; ruled out: request
// interception (it stalls with no Fetch patterns), the auto-attach of
// child targets, creating the tabs in front (only the last one is). Alone in its session, or
// without the <use>, the page loads; the idle tab stalls it just as well
// when it holds a loaded page (same origin, or data:) instead of
// about:blank, so any run with two or more tabs meets it. An idle tab of
// another session (another browser context) does not stall it: the two
// tabs must share a browser context. Cause, as far as measured: the
// loading tab is not the visible tab of its window (tabs are created in
// the background, Session.takeTab): Page.bringToFront on it before the
// navigation lets the page load (3.6 s test), an idle tab on another site
// (another renderer process) still stalls it, and the Chromium flags
// --disable-renderer-backgrounding, --disable-backgrounding-occluded-windows
// and --disable-background-timer-throttling do not help. Only one tab of
// a window can be in front, so bringing each to front is no fix for
// concurrent tabs (one window per tab, or a visibility override, are the
// candidates). The fix:
// watchTab turns on focus emulation on every tab.
func TestLoadBesideAnIdleTab(t *testing.T) {
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
	s, err := m.Session(testCtx(t), "s")
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
	_, err = tb.Navigate(testCtx(t), site.URL+"/", "")
	if err != nil {
		t.Fatalf("the page with an SVG <use> did not load beside an idle tab: %v", err)
	}
}
