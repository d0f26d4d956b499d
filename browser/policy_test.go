package browser

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/browsertask/browsertask/engine"
	"github.com/browsertask/browsertask/internal/fixture"
)

// navigateCode loads url in a fresh tab of s and returns the error code
// ("" on success) and details.
func navigateCode(t *testing.T, m *Manager, sessionID, url string) (engine.ErrorCode, map[string]any) {
	t.Helper()
	return navigateWait(t, m, sessionID, url, WaitLoad)
}

// navigateWait is navigateCode with a wait condition. The navigation's
// deadline starts once the tab is ready: launching the browser (the first
// call) is not part of the page's time.
func navigateWait(t *testing.T, m *Manager, sessionID, url, waitFor string) (engine.ErrorCode, map[string]any) {
	t.Helper()
	tb := testTab(t, m, sessionID)
	defer tb.Release(true)
	_, err := tb.Navigate(testCtx(t), url, waitFor)
	if err == nil {
		return "", nil
	}
	e := engine.AsError(err)
	return e.Code, e.Details
}

// TestPolicyDeniedHostUnreachable: a page that redirects (HTTP or
// JavaScript), frames (same-site and cross-site, i.e. out-of-process) or
// embeds the daemon's own address fails, and the daemon never sees a
// request.
func TestPolicyDeniedHostUnreachable(t *testing.T) {
	site := fixture.New(t)
	daemon := fixture.New(t) // stands for the daemon's own listener
	m := newManager(t, Options{})
	m.DenyHost(daemon.Host())
	port := daemon.Host()[strings.LastIndexByte(daemon.Host(), ':')+1:]
	target := daemon.URL("/page/1")
	cases := map[string]string{
		"http redirect":      site.URL("/redirect?to=" + target),
		"same-site frame":    site.URL("/frame?src=" + target),
		"cross-site frame":   site.URL("/frame?src=http://localhost:" + port + "/page/1"),
		"image":              site.URL("/image?src=" + target),
		"direct (localhost)": "http://localhost:" + port + "/page/1",
	}
	for name, u := range cases {
		code, details := navigateCode(t, m, "sess_deny", u)
		if code != engine.StepExecutionFailed || details["policy"] != "daemon-address" {
			t.Errorf("%s: code %q details %v, want STEP_EXECUTION_FAILED with policy daemon-address", name, code, details)
		}
	}
	// A client-side redirect after the load event is caught by a wait that
	// outlasts it (networkidle).
	code, details := navigateWait(t, m, "sess_deny", site.URL("/jsredirect?to="+target), WaitNetworkIdle)
	if code != engine.StepExecutionFailed || details["policy"] != "daemon-address" {
		t.Errorf("js redirect: code %q details %v", code, details)
	}
	if n := daemon.TotalHits(); n != 0 {
		t.Fatalf("the denied host received %d requests", n)
	}
	// The same pages without the deny entry load normally.
	if code, _ := navigateCode(t, m, "sess_deny", site.URL("/frame?src="+site.URL("/page/2"))); code != "" {
		t.Fatalf("an allowed frame failed: %s", code)
	}
	if site.Hits("/page/2") != 1 {
		t.Fatalf("allowed frame fetched %d times", site.Hits("/page/2"))
	}
}

// TestPolicyRefusalWinsOverDeadline: a page whose refused request keeps
// it from loading fails with the refusal once its deadline passes, not with
// NAVIGATION_TIMEOUT. Here the frame to the daemon's address is refused,
// and its (error page's) load starts an image that never answers, so the
// page never loads; the deadline is ended by the test once that image was
// requested, i.e. after the refusal.
func TestPolicyRefusalWinsOverDeadline(t *testing.T) {
	site := fixture.New(t)
	daemon := fixture.New(t)
	page := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		fmt.Fprintf(w, `<!doctype html><title>Refused frame</title><iframe src=%q onload="document.body.appendChild(new Image()).src = '%s'"></iframe>`,
			daemon.URL("/page/1"), site.URL("/hang"))
	}))
	t.Cleanup(page.Close)
	m := newManager(t, Options{})
	m.DenyHost(daemon.Host())
	tb := testTab(t, m, "sess_refusal_deadline")
	defer tb.Release(true)
	ctx, endDeadline := context.WithCancelCause(testCtx(t))
	done := make(chan error, 1)
	go func() {
		_, err := tb.Navigate(ctx, page.URL, WaitLoad)
		done <- err
	}()
	select {
	case <-site.Hung():
	case err := <-done:
		t.Fatalf("Navigate returned %v before the page's image was requested", err)
	}
	endDeadline(context.DeadlineExceeded)
	e := engine.AsError(<-done)
	if e.Code != engine.StepExecutionFailed || e.Details["policy"] != "daemon-address" {
		t.Fatalf("got %v (details %v), want STEP_EXECUTION_FAILED with policy daemon-address", e, e.Details)
	}
	if n := daemon.TotalHits(); n != 0 {
		t.Fatalf("the denied host received %d requests", n)
	}
}

// TestPolicyRestrictedBlocksInternalHops: under trust restricted a page on
// a (pretend) public host loads, but its redirect, frame or sub-request to
// a loopback address fails with TRUST_LEVEL_NOT_ALLOWED and is never sent.
func TestPolicyRestrictedBlocksInternalHops(t *testing.T) {
	site := fixture.New(t)
	inner := fixture.New(t)
	pn := fixture.NewPublicNet()
	base := pn.Add("public.test", site.Host())
	m := newManager(t, Options{TrustLevel: "restricted", Resolve: pn.Resolve, Dial: pn.Dial})
	pub := func(path string) string { return base + path }
	if code, _ := navigateCode(t, m, "sess_r", pub("/page/1")); code != "" {
		t.Fatalf("public page: %s", code)
	}
	target := inner.URL("/page/9")
	for name, u := range map[string]string{
		"redirect": pub("/redirect?to=" + target),
		"frame":    pub("/frame?src=" + target),
		"image":    pub("/image?src=" + target),
	} {
		code, details := navigateCode(t, m, "sess_r", u)
		if code != engine.TrustLevelNotAllowed || details["blockedUrl"] != target {
			t.Errorf("%s: code %q details %v, want TRUST_LEVEL_NOT_ALLOWED for %s", name, code, details, target)
		}
	}
	if n := inner.TotalHits(); n != 0 {
		t.Fatalf("the internal server received %d requests", n)
	}
}
