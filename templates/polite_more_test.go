package templates

import (
	"context"
	"encoding/base64"
	"errors"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/browsertask/browsertask/engine"
	"github.com/browsertask/browsertask/internal/fixture"
)

// TestPoliteRetryAfterOverTheCap: a 429 asking for 120 s is not waited
// for: one attempt, and the page's error names the Retry-After and the cap.
func TestPoliteRetryAfterOverTheCap(t *testing.T) {
	site := newPoliteSite(t)
	p := onePage(t, runPolite(t, renderHTTP, map[string]any{"urls": []string{site.url("/ra-long")}}))
	if n := len(site.hitTimes("/ra-long")); n != 1 || p.Attempts != 1 {
		t.Fatalf("requests %d, attempts %d; want 1 and 1", n, p.Attempts)
	}
	if p.Error == nil || p.Error.Code != engine.StepExecutionFailed || !strings.Contains(p.Error.Message, "Retry-After") ||
		p.Error.Details["retryAfterMs"] != float64(120000) {
		t.Fatalf("error %+v, want STEP_EXECUTION_FAILED naming Retry-After with details.retryAfterMs 120000", p.Error)
	}
}

// TestPoliteCancelDuringRetryWait: a run waiting to retry a 503 ends
// within 2 s of its cancellation, without another request.
func TestPoliteCancelDuringRetryWait(t *testing.T) {
	site := newPoliteSite(t)
	env := newEnv(t, mustJSON(t, map[string]any{"urls": []string{site.url("/down")}, "render": "http", "retries": 10}))
	ctx, cancel := context.WithCancelCause(context.Background())
	done := make(chan error, 1)
	go func() {
		_, err := NewBatchExtractPages(nil).Run(ctx, env)
		done <- err
	}()
	fixture.WaitUntil(t, "the first request", func() bool { return len(site.hitTimes("/down")) == 1 })
	stop := errors.New("canceled by the test")
	at := time.Now()
	cancel(stop)
	err := <-done
	if took := time.Since(at); took > 2*time.Second {
		t.Fatalf("Run returned %v after the cancel, want < 2s", took)
	}
	if !errors.Is(err, stop) {
		t.Fatalf("Run = %v, want the cancel's cause", err)
	}
	if n := len(site.hitTimes("/down")); n != 1 {
		t.Fatalf("/down requested %d times, want 1 (the retry was waiting)", n)
	}
}

// TestPoliteProxyCredentialsAreSecret: over HTTP a proxy's user:password
// is sent as Proxy-Authorization and is masked in the run's stored inputs,
// as a secret header value is.
func TestPoliteProxyCredentialsAreSecret(t *testing.T) {
	site := newPoliteSite(t)
	proxy := newForwardProxy(t, "Basic "+base64.StdEncoding.EncodeToString([]byte("bot:pw-s3cret")))
	e := newRetryEngine(t, NewBatchExtractPages(nil))
	proxyURL := strings.Replace(proxy.srv.URL, "http://", "http://bot:pw-s3cret@", 1)
	id := e.submit(t, "batch_extract_pages", map[string]any{"urls": []string{site.url("/s")}, "render": "http", "proxy": proxyURL,
		"headers": map[string]any{"X-Api-Key": map[string]any{"value": "key-s3cret", "secret": true}}}, "")
	run := e.wait(t, id)
	if run.Status != engine.StatusSucceeded {
		t.Fatalf("run %s %+v, want succeeded", run.Status, run.Error)
	}
	if seen := proxy.seen(); len(seen) != 1 || seen[0] != site.url("/s") {
		t.Fatalf("the proxy carried %v, want just %s", seen, site.url("/s"))
	}
	if h := site.headersOf("/s"); len(h) != 1 || h[0].Get("X-Api-Key") != "key-s3cret" {
		t.Fatalf("the site saw %v, want one request with the secret header", h)
	}
	stored := string(run.Inputs)
	if strings.Contains(stored, "pw-s3cret") || strings.Contains(stored, "key-s3cret") || !strings.Contains(stored, engine.SecretMask) {
		t.Fatalf("stored inputs %s hold a secret or no mask", stored)
	}
}

// TestPoliteInputsRefused: the politeness inputs a run cannot use are
// refused at submission, naming the field.
func TestPoliteInputsRefused(t *testing.T) {
	cases := []struct {
		name  string
		in    map[string]any
		trust string
		code  engine.ErrorCode
		field string
	}{
		{"ftp proxy", map[string]any{"proxy": "ftp://127.0.0.1:21", "render": "http"}, "local", engine.InvalidParameter, "inputs.proxy"},
		{"proxy path", map[string]any{"proxy": "http://127.0.0.1:8080/x", "render": "http"}, "local", engine.InvalidParameter, "inputs.proxy"},
		{"loopback proxy restricted", map[string]any{"proxy": "http://127.0.0.1:8080", "render": "http"}, "restricted", engine.TrustLevelNotAllowed, "inputs.proxy"},
		{"browser proxy restricted", map[string]any{"proxy": "http://93.184.215.14:8080"}, "restricted", engine.TrustLevelNotAllowed, "inputs.proxy"},
		{"user agent line break", map[string]any{"userAgent": "a\r\nX-Evil: 1", "render": "http"}, "local", engine.InvalidParameter, "inputs.userAgent"},
		{"header value line break", map[string]any{"headers": map[string]string{"X-A": "1\r\nX-B: 2"}, "render": "http"}, "local", engine.InvalidParameter, "inputs.headers.X-A"},
		{"accept-encoding", map[string]any{"headers": map[string]string{"accept-encoding": "gzip"}, "render": "http"}, "local", engine.InvalidParameter, "inputs.headers.accept-encoding"},
	}
	for _, c := range cases {
		c.in["urls"] = []string{"http://93.184.215.14/"}
		raw := []byte(mustJSON(t, c.in))
		e := engine.AsError(NewBatchExtractPages(nil).Check(raw, engine.Profile{MaxURLs: 10, MaxTabsPerSession: 20, TrustLevel: c.trust}))
		if e == nil || e.Code != c.code || e.Details["field"] != c.field {
			t.Errorf("%s: Check = %+v, want %s naming %s", c.name, e, c.code, c.field)
		}
	}
}

// TestPoliteCrawlSendsHeaders: crawl_site applies the same inputs: every
// request of the crawl, robots.txt included, carries the run's User-Agent.
func TestPoliteCrawlSendsHeaders(t *testing.T) {
	log := &agentLog{}
	srv := httptest.NewServer(log.wrap(http.HandlerFunc(newFlakySite(t).serve)))
	t.Cleanup(srv.Close)
	env := newEnv(t, mustJSON(t, map[string]any{"startUrl": srv.URL + "/", "render": "http", "maxDepth": 1,
		"userAgent": "CrawlBot/2", "perHostConcurrency": 1, "minDelayMs": 10}))
	if _, err := NewCrawlSite(nil).Run(t.Context(), env); err != nil {
		t.Fatalf("Run: %v", err)
	}
	agents := log.seen()
	if len(agents) != 5 {
		t.Fatalf("the site saw %d requests, want 5 (robots.txt, home and 3 pages)", len(agents))
	}
	for _, a := range agents {
		if a != "CrawlBot/2" {
			t.Fatalf("User-Agents seen %v, want CrawlBot/2 on every request", agents)
		}
	}
	for _, p := range env.pagesJSON(t) {
		if p.Attempts != 1 {
			t.Fatalf("%s: attempts %d, want 1", p.URL, p.Attempts)
		}
	}
}

// agentLog records the User-Agent of every request a handler serves.
type agentLog struct {
	mu     sync.Mutex
	agents []string
}

func (l *agentLog) wrap(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		l.mu.Lock()
		l.agents = append(l.agents, r.Header.Get("User-Agent"))
		l.mu.Unlock()
		h.ServeHTTP(w, r)
	})
}

func (l *agentLog) seen() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]string(nil), l.agents...)
}

// FuzzPolitenessInputs: whatever a client sends as proxy, User-Agent or
// header, Check answers without panicking, and a refusal names its field;
// an accepted proxy has a scheme the clients speak and a port.
func FuzzPolitenessInputs(f *testing.F) {
	for _, s := range []string{"http://127.0.0.1:8080", "socks5://u:p@[::1]:1080", "https://proxy.example", "ftp://x", "http://%zz", "http://u:p@:1", "X-Test", "Cookie", "a\r\nb", ""} {
		f.Add(s, s)
	}
	f.Fuzz(func(t *testing.T, proxy, header string) {
		p := &politeness{Proxy: proxy, UserAgent: header, Headers: map[string]headerValue{header: {Value: proxy}}}
		err := p.check(engine.URLPolicy{TrustLevel: "local"}, renderHTTP)
		if e := engine.AsError(err); e != nil {
			if f, _ := e.Details["field"].(string); !strings.HasPrefix(f, "inputs.") {
				t.Fatalf("refusal %+v names no field", e)
			}
			return
		}
		if proxy == "" {
			return
		}
		u, perr := parseProxy(proxy)
		if perr != nil || u.Port() == "" || (u.Scheme != "http" && u.Scheme != "https" && u.Scheme != "socks5" && u.Scheme != "socks5h") {
			t.Fatalf("accepted proxy %q parses to %v, %v", proxy, u, perr)
		}
		_ = p.secretValues()
	})
}

// TestPoliteMinDelay: with minDelayMs 300 the host sees the run's
// requests arrive about 300 ms apart or more, whatever the concurrency.
func TestPoliteMinDelay(t *testing.T) {
	site := newPoliteSite(t)
	var urls []string
	for _, p := range []string{"/d1", "/d2", "/d3", "/d4"} {
		urls = append(urls, site.url(p))
	}
	runPolite(t, renderHTTP, map[string]any{"urls": urls, "concurrency": 4, "perHostConcurrency": 4, "minDelayMs": 300})
	var starts []time.Time
	for _, p := range []string{"/d1", "/d2", "/d3", "/d4"} {
		h := site.hitTimes(p)
		if len(h) != 1 {
			t.Fatalf("%s requested %d times, want 1", p, len(h))
		}
		starts = append(starts, h[0])
	}
	slices.SortFunc(starts, func(a, b time.Time) int { return a.Compare(b) })
	// The gate spaces the client's starts; the host sees arrivals, which a
	// dial or a busy scheduler can delay unevenly: 100 ms of slack per gap,
	// none on the whole (three gaps of 300 ms).
	for i := 1; i < len(starts); i++ {
		if gap := starts[i].Sub(starts[i-1]); gap < 200*time.Millisecond {
			t.Fatalf("requests %d and %d started %v apart, want about 300ms or more", i-1, i, gap)
		}
	}
	if span := starts[3].Sub(starts[0]); span < 900*time.Millisecond-100*time.Millisecond {
		t.Fatalf("the 4 requests arrived within %v, want >= 3 x 300ms (less the first dial)", span)
	}
}
