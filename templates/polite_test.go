package templates

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"runtime"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/browsertask/browsertask/engine"
)

// The tests of this file show issue 30's acceptance 4–6 on a fixture host
// that counts what it sees: retries of transient failures, per-host
// concurrency, headers and User-Agent, proxies. Each runs on both paths:
// render "http" (no browser) and "browser" (Chromium; skipped with
// -short).

// politeRuns numbers the test runs' sessions.
var politeRuns atomic.Int64

// politeRenders are the two paths every politeness test runs on.
var politeRenders = []string{renderHTTP, renderBrowser}

// runPolite runs batch_extract_pages with inputs (plus render) through
// the schema, Check and Run, and returns pages.json.
func runPolite(t *testing.T, render string, inputs map[string]any) []pageOut {
	t.Helper()
	inputs["render"] = render
	env := newEnv(t, mustJSON(t, inputs))
	// Each run owns a session of its own, as the engine gives it.
	env.sessionID = fmt.Sprintf("sess_polite_%d", politeRuns.Add(1))
	var tpl engine.Template
	if render == renderHTTP {
		tpl = NewBatchExtractPages(nil)
	} else {
		m := testManager(t)
		tpl = NewBatchExtractPages(m)
		defer func() { _ = m.CloseSession(context.Background(), env.sessionID) }()
	}
	schema, err := engine.CompileSchema(tpl.Info().InputSchema)
	if err != nil {
		t.Fatal(err)
	}
	if verr := schema.Validate(env.inputs, "inputs"); verr != nil {
		t.Fatalf("inputs rejected by the schema: %v", verr)
	}
	if err := tpl.Check(env.inputs, env.profile); err != nil {
		t.Fatalf("Check: %v", err)
	}
	if _, err := tpl.Run(t.Context(), env); err != nil {
		if e := engine.AsError(err); e == nil || e.Code != engine.StepExecutionFailed {
			t.Fatalf("Run: %v", err)
		}
	}
	return env.pagesJSON(t)
}

// TestPoliteRetryAfter429: a host that answers 429 with Retry-After: 1
// and then 200 is asked again no sooner than 1 s later (server-side
// timestamps) and the page succeeds on its second attempt, which it
// records with the first attempt's status and wait.
func TestPoliteRetryAfter429(t *testing.T) {
	for _, render := range politeRenders {
		t.Run(render, func(t *testing.T) {
			site := newPoliteSite(t)
			pages := runPolite(t, render, map[string]any{"urls": []string{site.url("/ra/1")}, "fields": map[string]string{"h": "h1"}})
			p := onePage(t, pages)
			if p.Error != nil || p.HTTPStatus != 200 || p.Fields["h"] != "/ra/1" {
				t.Fatalf("page: status %d, error %+v, fields %v; want 200, none, h=/ra/1", p.HTTPStatus, p.Error, p.Fields)
			}
			hits := site.hitTimes("/ra/1")
			if len(hits) != 2 || p.Attempts != 2 {
				t.Fatalf("requested %d times, page says %d attempts; want 2 and 2", len(hits), p.Attempts)
			}
			if gap := hits[1].Sub(hits[0]); gap < time.Second {
				t.Fatalf("second request %v after the 429, want >= 1s (Retry-After: 1)", gap)
			}
			if len(p.FailedAttempts) != 1 || p.FailedAttempts[0].HTTPStatus != 429 || p.FailedAttempts[0].WaitedMs < 1000 ||
				p.FailedAttempts[0].Error == nil {
				t.Fatalf("failedAttempts = %s, want one with httpStatus 429, an error and waitedMs >= 1000", asJSON(p.FailedAttempts))
			}
			if render == renderHTTP && p.FailedAttempts[0].RetryAfterMs != 1000 {
				t.Fatalf("retryAfterMs = %d, want 1000 (the header, read over HTTP)", p.FailedAttempts[0].RetryAfterMs)
			}
		})
	}
}

// TestPoliteRetryConnectionReset: a host that closes the first connection
// without an answer: the page succeeds; over HTTP on its second attempt
// (Chromium may retry a reset itself, so the browser's count is 1 or 2,
// and the host saw one more request than the failures the page lists).
func TestPoliteRetryConnectionReset(t *testing.T) {
	for _, render := range politeRenders {
		t.Run(render, func(t *testing.T) {
			site := newPoliteSite(t)
			pages := runPolite(t, render, map[string]any{"urls": []string{site.url("/reset/1")}})
			p := onePage(t, pages)
			if p.Error != nil || p.HTTPStatus != 200 {
				t.Fatalf("page: status %d, error %+v; want 200 and none", p.HTTPStatus, p.Error)
			}
			hits := len(site.hitTimes("/reset/1"))
			if render == renderHTTP && (p.Attempts != 2 || hits != 2) {
				t.Fatalf("attempts %d, requests %d; want 2 and 2", p.Attempts, hits)
			}
			if p.Attempts < 1 || p.Attempts > 2 || len(p.FailedAttempts) != p.Attempts-1 || hits < 2 {
				t.Fatalf("attempts %d, failedAttempts %s, requests %d; want 1–2 attempts, one note per failed one, 2+ requests", p.Attempts, asJSON(p.FailedAttempts), hits)
			}
		})
	}
}

// TestPolite404OneAttempt: a 404 is the page's answer: one request, one
// attempt, the page fails with its status.
func TestPolite404OneAttempt(t *testing.T) {
	for _, render := range politeRenders {
		t.Run(render, func(t *testing.T) {
			site := newPoliteSite(t)
			pages := runPolite(t, render, map[string]any{"urls": []string{site.url("/missing")}, "retries": 5})
			p := onePage(t, pages)
			if p.Error == nil || p.Error.Code != engine.StepExecutionFailed || p.HTTPStatus != 404 {
				t.Fatalf("page: status %d, error %+v; want 404 and STEP_EXECUTION_FAILED", p.HTTPStatus, p.Error)
			}
			if n := len(site.hitTimes("/missing")); n != 1 || p.Attempts != 1 || len(p.FailedAttempts) != 0 {
				t.Fatalf("requests %d, attempts %d, failedAttempts %d; want 1, 1, 0", n, p.Attempts, len(p.FailedAttempts))
			}
		})
	}
}

// TestPolitePerHostConcurrency: 8 tabs (or connections), perHostConcurrency
// 2, 8 pages on one host that holds its requests until 2 are in flight
// and the 6 other workers wait at the gate (or a third arrives): the host
// never sees more than 2 at once, and sees 2.
func TestPolitePerHostConcurrency(t *testing.T) {
	for _, render := range politeRenders {
		t.Run(render, func(t *testing.T) {
			site := newPoliteSite(t)
			var urls []string
			for i := range 8 {
				urls = append(urls, site.url(fmt.Sprintf("/hold/%d", i)))
			}
			// The held requests go once more than 2 are in flight (the
			// gate failed) or 2 are and the 6 other workers wait at the
			// gate: nothing else could send a third.
			site.releaseWhen(t, func(n int) bool { return n > 2 || (n == 2 && waitingAtGate() >= 6) })
			pages := runPolite(t, render, map[string]any{"urls": urls, "concurrency": 8, "perHostConcurrency": 2})
			for _, p := range pages {
				if p.Error != nil {
					t.Fatalf("%s: %+v", p.URL, p.Error)
				}
			}
			if len(pages) != 8 {
				t.Fatalf("%d pages, want 8", len(pages))
			}
			if m := site.maxInFlight(); m != 2 {
				t.Fatalf("the host saw %d requests in flight at most, want exactly 2", m)
			}
		})
	}
}

// waitingAtGate counts the goroutines waiting in hostgate's Acquire.
func waitingAtGate() int {
	buf := make([]byte, 1<<20)
	for {
		n := runtime.Stack(buf, true)
		if n < len(buf) {
			return strings.Count(string(buf[:n]), "hostgate.(*Gate).Acquire(")
		}
		buf = make([]byte, 2*len(buf))
	}
}

// onePage is the only page of pages.
func onePage(t *testing.T, pages []pageOut) pageOut {
	t.Helper()
	if len(pages) != 1 {
		t.Fatalf("%d pages, want 1", len(pages))
	}
	return pages[0]
}

// asJSON shows v in a failure message.
func asJSON(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

// TestPoliteHeadersAndUserAgent: the run's userAgent and headers reach the
// fixture host on both paths, for every page; the Cookie header is refused
// naming the field.
func TestPoliteHeadersAndUserAgent(t *testing.T) {
	for _, render := range politeRenders {
		t.Run(render, func(t *testing.T) {
			site := newPoliteSite(t)
			pages := runPolite(t, render, map[string]any{"urls": []string{site.url("/a"), site.url("/b")},
				"userAgent": "PoliteBot/1.0 (+https://example.com/bot)",
				"headers":   map[string]any{"X-Run-Tag": "tag-7", "Accept-Language": "de-CH", "Authorization": map[string]any{"value": "Bearer tok-123", "secret": true}}})
			if len(pages) != 2 {
				t.Fatalf("%d pages, want 2", len(pages))
			}
			for _, path := range []string{"/a", "/b"} {
				hs := site.headersOf(path)
				if len(hs) != 1 {
					t.Fatalf("%s requested %d times, want 1", path, len(hs))
				}
				h := hs[0]
				if h.Get("User-Agent") != "PoliteBot/1.0 (+https://example.com/bot)" || h.Get("X-Run-Tag") != "tag-7" ||
					h.Get("Accept-Language") != "de-CH" || h.Get("Authorization") != "Bearer tok-123" {
					t.Fatalf("%s was requested with User-Agent %q, X-Run-Tag %q, Accept-Language %q, Authorization %q",
						path, h.Get("User-Agent"), h.Get("X-Run-Tag"), h.Get("Accept-Language"), h.Get("Authorization"))
				}
			}
		})
	}
	for name, want := range map[string]string{"Cookie": "inputs.headers.Cookie", "connection": "inputs.headers.connection",
		"Proxy-Authorization": "inputs.headers.Proxy-Authorization", "Host": "inputs.headers.Host", "bad name": "inputs.headers.bad name"} {
		in := mustJSON(t, map[string]any{"urls": []string{"http://127.0.0.1:1/"}, "render": "http", "headers": map[string]string{name: "x"}})
		e := engine.AsError(NewBatchExtractPages(nil).Check([]byte(in), newEnv(t, in).profile))
		if e == nil || e.Code != engine.InvalidParameter || e.Details["field"] != want {
			t.Fatalf("header %q: Check = %+v, want INVALID_PARAMETER naming %s", name, e, want)
		}
	}
}

// TestPoliteProxy: a run that names the proxy fixture sends every page
// request through it, with its credentials; a run that does not name it
// sends none through it. The credentials are a secret of the run.
func TestPoliteProxy(t *testing.T) {
	for _, render := range politeRenders {
		t.Run(render, func(t *testing.T) {
			site := newPoliteSite(t)
			proxy := newForwardProxy(t, "")
			urls := []string{site.url("/p1"), site.url("/p2"), site.url("/p3")}
			pages := runPolite(t, render, map[string]any{"urls": urls, "proxy": proxy.srv.URL})
			for _, p := range pages {
				if p.Error != nil || p.HTTPStatus != 200 {
					t.Fatalf("%s through the proxy: status %d, %+v", p.URL, p.HTTPStatus, p.Error)
				}
			}
			seen := proxy.seen()
			for _, u := range urls {
				if !slices.Contains(seen, u) {
					t.Fatalf("the proxy carried %v, not %s", seen, u)
				}
			}
			before := len(seen)
			runPolite(t, render, map[string]any{"urls": []string{site.url("/direct")}})
			if n := len(proxy.seen()); n != before {
				t.Fatalf("a run without a proxy sent %d requests through it: %v", n-before, proxy.seen()[before:])
			}
			if n := len(site.hitTimes("/direct")); n != 1 {
				t.Fatalf("/direct requested %d times, want 1 (straight to the site)", n)
			}
		})
	}
}

// TestPoliteSocks5Proxy: a socks5:// proxy carries the run's connections
// on both paths.
func TestPoliteSocks5Proxy(t *testing.T) {
	for _, render := range politeRenders {
		t.Run(render, func(t *testing.T) {
			site := newPoliteSite(t)
			proxy := newSocksProxy(t)
			pages := runPolite(t, render, map[string]any{"urls": []string{site.url("/s1")}, "proxy": "socks5://" + proxy.ln.Addr().String()})
			if p := onePage(t, pages); p.Error != nil || p.HTTPStatus != 200 {
				t.Fatalf("page through SOCKS5: status %d, %+v", p.HTTPStatus, p.Error)
			}
			if seen := proxy.seen(); len(seen) == 0 || seen[0] != strings.TrimPrefix(site.srv.URL, "http://") {
				t.Fatalf("the SOCKS5 proxy connected to %v, want %s", seen, strings.TrimPrefix(site.srv.URL, "http://"))
			}
		})
	}
}

// TestPoliteServerUserAgent: the server's --user-agent (the profile's
// userAgent) is sent when the inputs name none; inputs.userAgent wins.
func TestPoliteServerUserAgent(t *testing.T) {
	site := newPoliteSite(t)
	for _, c := range []struct{ path, input, want string }{{"/u1", "", "ServerBot/3"}, {"/u2", "RunBot/1", "RunBot/1"}} {
		in := map[string]any{"urls": []string{site.url(c.path)}, "render": "http"}
		if c.input != "" {
			in["userAgent"] = c.input
		}
		env := newEnv(t, mustJSON(t, in))
		env.profile.UserAgent = "ServerBot/3"
		if _, err := NewBatchExtractPages(nil).Run(t.Context(), env); err != nil {
			t.Fatal(err)
		}
		if h := site.headersOf(c.path); len(h) != 1 || h[0].Get("User-Agent") != c.want {
			t.Fatalf("%s: requests %v, want one with User-Agent %s", c.path, h, c.want)
		}
	}
}

// TestPoliteProxyWithCredentials: a proxy that requires user:password gets
// them on both paths (over HTTP as Proxy-Authorization up front, in the
// browser in answer to its 407) and carries the page.
func TestPoliteProxyWithCredentials(t *testing.T) {
	for _, render := range politeRenders {
		t.Run(render, func(t *testing.T) {
			site := newPoliteSite(t)
			proxy := newForwardProxy(t, "Basic "+base64.StdEncoding.EncodeToString([]byte("bot:pw-s3cret")))
			pu := strings.Replace(proxy.srv.URL, "http://", "http://bot:pw-s3cret@", 1)
			p := onePage(t, runPolite(t, render, map[string]any{"urls": []string{site.url("/c1")}, "proxy": pu}))
			if p.Error != nil || p.HTTPStatus != 200 {
				t.Fatalf("page through the authenticating proxy: status %d, %+v", p.HTTPStatus, p.Error)
			}
			if seen := proxy.seen(); !slices.Contains(seen, site.url("/c1")) {
				t.Fatalf("the proxy carried %v, not %s", seen, site.url("/c1"))
			}
		})
	}
}
