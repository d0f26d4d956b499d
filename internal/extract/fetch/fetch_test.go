package fetch

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/browsertask/browsertask/engine"
	"github.com/browsertask/browsertask/internal/fixture"
	"github.com/browsertask/browsertask/internal/netpolicy"
)

// newFetcher builds a Fetcher or fails the test.
func newFetcher(t *testing.T, o Options) *Fetcher {
	t.Helper()
	f, err := New(o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(f.Close)
	return f
}

// fetch fetches u within the test's deadline.
func fetch(t *testing.T, f *Fetcher, u string) (*Page, error) {
	t.Helper()
	ctx, cancel := fixture.Context(t)
	defer cancel()
	return f.Fetch(ctx, u)
}

// wantCode asserts err is an *engine.Error with code (and, when policy is
// not empty, details.policy).
func wantCode(t *testing.T, err error, code engine.ErrorCode, policy string) *engine.Error {
	t.Helper()
	e := engine.AsError(err)
	if e == nil {
		t.Fatalf("err = %v (%T), want %s", err, err, code)
	}
	if e.Code != code {
		t.Fatalf("code = %s (%s), want %s", e.Code, e.Message, code)
	}
	if policy != "" && e.Details["policy"] != policy {
		t.Fatalf("details.policy = %v, want %s (%s)", e.Details["policy"], policy, e.Message)
	}
	return e
}

func TestFetchPage(t *testing.T) {
	srv := fixture.New(t)
	f := newFetcher(t, Options{Policy: engine.URLPolicy{TrustLevel: "local"}})
	pg, err := fetch(t, f, srv.URL("/redirect?to=/page/3"))
	if err != nil {
		t.Fatal(err)
	}
	if pg.URL != srv.URL("/page/3") || pg.Status != 200 || pg.StatusText != "OK" || pg.ContentType != "text/html" || pg.Charset != "utf-8" {
		t.Fatalf("page = %+v", pg)
	}
	if len(pg.Redirects) != 1 || pg.Redirects[0] != srv.URL("/redirect?to=/page/3") {
		t.Fatalf("redirects = %q", pg.Redirects)
	}
	if !strings.Contains(pg.Body, `<h1 id="name">Item 3</h1>`) || pg.Truncated || pg.Bytes != int64(len(pg.Body)) {
		t.Fatalf("body = %q truncated=%v bytes=%d", pg.Body, pg.Truncated, pg.Bytes)
	}
	pg, err = fetch(t, f, srv.URL("/status/404"))
	if err != nil || pg.Status != 404 || pg.StatusText != "Not Found" || !strings.Contains(pg.Body, "Status 404") {
		t.Fatalf("404 page = %+v, %v", pg, err)
	}
}

// TestRestrictedRedirectToLoopback: under trust restricted, a public page
// that redirects to loopback (by address, or by a name that resolves to
// 127.0.0.1) is refused before anything connects to loopback.
func TestRestrictedRedirectToLoopback(t *testing.T) {
	srv := fixture.New(t)
	pn := fixture.NewPublicNet()
	base := pn.Add("site.test", srv.Host())
	pn.Map("evil.test", netip.MustParseAddr("127.0.0.1"))
	f := newFetcher(t, Options{Policy: engine.URLPolicy{TrustLevel: "restricted", Resolve: pn.Resolve}, Dial: pn.Dial})

	pg, err := fetch(t, f, base+"/page/1")
	if err != nil || pg.Status != 200 {
		t.Fatalf("public page: %+v, %v", pg, err)
	}
	for _, target := range []string{srv.URL("/page/2"), "http://evil.test:" + port(srv) + "/page/2", "http://localhost:" + port(srv) + "/page/2"} {
		_, err := fetch(t, f, base+"/redirect?to="+url.QueryEscape(target))
		e := wantCode(t, err, engine.TrustLevelNotAllowed, "trust-restricted")
		if e.Details["blockedUrl"] != target {
			t.Errorf("blockedUrl = %v, want %s", e.Details["blockedUrl"], target)
		}
	}
	if n := srv.HostHits("127.0.0.1", "/page/2") + srv.HostHits("evil.test", "/page/2") + srv.HostHits("localhost", "/page/2"); n != 0 {
		t.Fatalf("loopback reached %d times", n)
	}
	if srv.HostHits("site.test", "/redirect") != 3 {
		t.Fatalf("redirects served = %d, want 3", srv.HostHits("site.test", "/redirect"))
	}
}

// TestRestrictedRebindingRefusedAtDial: the name answers a public address
// to the policy check and 127.0.0.1 to the connection's own lookup; the
// dialer checks the address it connects to and refuses, with the real
// dialer, before any connection is made.
func TestRestrictedRebindingRefusedAtDial(t *testing.T) {
	srv := fixture.New(t)
	pn := fixture.NewPublicNet()
	public := netip.MustParseAddr("203.0.113.77")
	loop := netip.MustParseAddr("127.0.0.1")
	pn.Sequence("rebind.test", []netip.Addr{public}, []netip.Addr{loop})
	var mu sync.Mutex
	var lookups []string
	res := ResolverFunc(func(_ context.Context, _, host string) ([]netip.Addr, error) {
		mu.Lock()
		lookups = append(lookups, host)
		mu.Unlock()
		return pn.Resolve(host)
	})
	// Dial nil: the real net.Dialer, which would reach the fixture on
	// 127.0.0.1 if the check let it through.
	f := newFetcher(t, Options{Policy: engine.URLPolicy{TrustLevel: "restricted"}, Resolver: res})
	_, err := fetch(t, f, "http://rebind.test:"+port(srv)+"/page/1")
	e := wantCode(t, err, engine.TrustLevelNotAllowed, "trust-restricted")
	if !strings.Contains(e.Message, "connects to the internal address 127.0.0.1:"+port(srv)) {
		t.Fatalf("not refused at the connection: %s", e.Message)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(lookups) != 2 {
		t.Fatalf("lookups = %q, want one for the check and one for the connection", lookups)
	}
	var ref *netpolicy.RefusedError
	if !errors.As(refusalOf(t, f, "rebind.test", port(srv)), &ref) || ref.Addr.Addr() != loop {
		t.Fatalf("the dialer did not refuse 127.0.0.1 itself (%v)", ref)
	}
	if srv.TotalHits() != 0 {
		t.Fatalf("the fixture on loopback got %d requests", srv.TotalHits())
	}
}

// refusalOf dials host:port with f's dialer directly and returns its
// error.
func refusalOf(t *testing.T, f *Fetcher, host, port string) error {
	t.Helper()
	d := newDialer(f.opts.Policy, ResolverFunc(func(context.Context, string, string) ([]netip.Addr, error) {
		return []netip.Addr{netip.MustParseAddr("127.0.0.1")}, nil
	}), nil)
	c, err := d.DialContext(context.Background(), "tcp", host+":"+port)
	if err == nil {
		c.Close()
		t.Fatal("the dialer connected to 127.0.0.1")
	}
	return err
}

// TestRestrictedMulticastAndUnresolvable: multicast (once refused by the
// dialer only, now by the one classifier CheckURL shares) and names that do
// not resolve.
func TestRestrictedMulticastAndUnresolvable(t *testing.T) {
	pn := fixture.NewPublicNet()
	pn.Map("multicast.test", netip.MustParseAddr("239.1.2.3"))
	f := newFetcher(t, Options{Policy: engine.URLPolicy{TrustLevel: "restricted", Resolve: pn.Resolve}, Dial: pn.Dial})
	_, err := fetch(t, f, "http://multicast.test/")
	if e := wantCode(t, err, engine.TrustLevelNotAllowed, ""); !strings.Contains(e.Message, "multicast 224.0.0.0/4") {
		t.Fatalf("message does not name the range: %s", e.Message)
	}
	_, err = fetch(t, f, "http://nowhere.test/")
	e := wantCode(t, err, engine.TrustLevelNotAllowed, "")
	if e.Details["reason"] != engine.ReasonUnresolvable {
		t.Fatalf("details = %v, want reason unresolvable", e.Details)
	}
}

// TestDaemonAddressNeverReachable: under trust local the daemon's own
// listener is refused by address, by a loopback name, after a redirect,
// and when a name resolves to it at connection time.
func TestDaemonAddressNeverReachable(t *testing.T) {
	daemon := fixture.New(t)
	other := fixture.New(t)
	res := ResolverFunc(func(_ context.Context, _, host string) ([]netip.Addr, error) {
		if host == "daemon.test" {
			return []netip.Addr{netip.MustParseAddr("127.0.0.1")}, nil
		}
		return nil, fmt.Errorf("no such host %s", host)
	})
	f := newFetcher(t, Options{Policy: engine.URLPolicy{TrustLevel: "local", DenyHosts: []string{daemon.Host()}}, Resolver: res})

	_, err := fetch(t, f, daemon.URL("/page/1"))
	wantCode(t, err, engine.InvalidParameter, "")
	_, err = fetch(t, f, "http://localhost:"+port(daemon)+"/page/1")
	wantCode(t, err, engine.InvalidParameter, "")
	_, err = fetch(t, f, other.URL("/redirect?to="+url.QueryEscape(daemon.URL("/page/1"))))
	wantCode(t, err, engine.StepExecutionFailed, "daemon-address")
	// Local trust does not resolve names before connecting: the dialer's
	// check is what refuses.
	_, err = fetch(t, f, "http://daemon.test:"+port(daemon)+"/page/1")
	wantCode(t, err, engine.StepExecutionFailed, "daemon-address")
	if daemon.TotalHits() != 0 {
		t.Fatalf("the daemon got %d requests", daemon.TotalHits())
	}
	if pg, err := fetch(t, f, other.URL("/page/5")); err != nil || pg.Status != 200 {
		t.Fatalf("another local server: %+v, %v", pg, err)
	}
}

// TestWildcardDenyCoversOwnAddresses: a daemon listening on 0.0.0.0:PORT
// is refused on every address of this machine at that port.
func TestWildcardDenyCoversOwnAddresses(t *testing.T) {
	own := netip.MustParseAddr("192.0.2.44")
	pol := engine.URLPolicy{TrustLevel: "local", DenyHosts: []string{"0.0.0.0:7788"},
		LocalAddrs: func() []netip.Addr { return []netip.Addr{netip.MustParseAddr("127.0.0.1"), own} }}
	var dials []string
	d := newDialer(pol, ResolverFunc(func(context.Context, string, string) ([]netip.Addr, error) {
		return nil, errors.New("literals only")
	}), func(_ context.Context, _, addr string) (net.Conn, error) {
		dials = append(dials, addr)
		return nil, errors.New("not dialled in this test")
	})
	for _, ap := range []string{"192.0.2.44:7788", "127.0.0.1:7788", "0.0.0.0:7788"} {
		_, err := d.DialContext(context.Background(), "tcp", ap)
		var ref *netpolicy.RefusedError
		if !errors.As(err, &ref) || engine.AsError(ref.Err).Code != engine.InvalidParameter {
			t.Errorf("%s: err = %v, want a refusal", ap, err)
		}
	}
	if len(dials) != 0 {
		t.Fatalf("refused addresses dialled: %q", dials)
	}
	for _, ap := range []string{"192.0.2.44:7789", "192.0.2.45:7788"} {
		_, err := d.DialContext(context.Background(), "tcp", ap)
		var ref *netpolicy.RefusedError
		if errors.As(err, &ref) {
			t.Errorf("%s: refused: %v", ap, err)
		}
	}
	if len(dials) != 2 {
		t.Fatalf("allowed addresses dialled %q, want both", dials)
	}
}

// TestRedirectPolicy: a redirect to another scheme is refused, a redirect
// loop ends after MaxRedirects, an invalid Location fails.
func TestRedirectPolicy(t *testing.T) {
	hops := 0
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/file":
			w.Header().Set("Location", "file:///etc/passwd")
			w.WriteHeader(http.StatusFound)
		case "/loop":
			hops++
			http.Redirect(w, r, "/loop", http.StatusMovedPermanently)
		case "/bad":
			w.Header().Set("Location", "http://[::1/")
			w.WriteHeader(http.StatusSeeOther)
		}
	}))
	t.Cleanup(srv.Close)
	f := newFetcher(t, Options{Policy: engine.URLPolicy{TrustLevel: "local"}, MaxRedirects: 5})
	_, err := fetch(t, f, srv.URL+"/file")
	e := wantCode(t, err, engine.StepExecutionFailed, "scheme")
	if e.Details["blockedUrl"] != "file:///etc/passwd" {
		t.Fatalf("details = %v", e.Details)
	}
	_, err = fetch(t, f, srv.URL+"/loop")
	e = wantCode(t, err, engine.StepExecutionFailed, "")
	if e.Details["netError"] != "net::ERR_TOO_MANY_REDIRECTS" || hops != 6 {
		t.Fatalf("details = %v after %d hops, want 6", e.Details, hops)
	}
	_, err = fetch(t, f, srv.URL+"/bad")
	wantCode(t, err, engine.StepExecutionFailed, "")
}

// TestSizeBound cuts a large body at MaxBytes and says so.
func TestSizeBound(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		fmt.Fprint(w, "<p>"+strings.Repeat("x", 100_000)+"</p>")
	}))
	t.Cleanup(srv.Close)
	f := newFetcher(t, Options{Policy: engine.URLPolicy{TrustLevel: "local"}, MaxBytes: 1000})
	pg, err := fetch(t, f, srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	if !pg.Truncated || pg.Bytes != 1000 || len(pg.Body) != 1000 || !strings.HasPrefix(pg.Body, "<p>xxx") {
		t.Fatalf("truncated=%v bytes=%d len=%d", pg.Truncated, pg.Bytes, len(pg.Body))
	}
	f2 := newFetcher(t, Options{Policy: engine.URLPolicy{TrustLevel: "local"}, MaxBytes: 100_007})
	pg, err = fetch(t, f2, srv.URL)
	if err != nil || pg.Truncated || pg.Bytes != 100_007 {
		t.Fatalf("exact fit: truncated=%v bytes=%d err=%v", pg.Truncated, pg.Bytes, err)
	}
}

// TestTimeBound: a page that never answers ends with NAVIGATION_TIMEOUT at
// Options.Timeout and the connection is closed (the server sees its
// client go away); the caller's cancellation is returned as such.
func TestTimeBound(t *testing.T) {
	srv := fixture.New(t)
	f := newFetcher(t, Options{Policy: engine.URLPolicy{TrustLevel: "local"}, Timeout: 300 * time.Millisecond})
	start := time.Now()
	_, err := fetch(t, f, srv.URL("/hang"))
	e := wantCode(t, err, engine.NavigationTimeout, "")
	if el := time.Since(start); el < 300*time.Millisecond || el > 5*time.Second {
		t.Fatalf("gave up after %v, want about 300ms", el)
	}
	if e.Details["url"] != srv.URL("/hang") {
		t.Fatalf("details = %v", e.Details)
	}
	wctx, wcancel := fixture.Context(t)
	defer wcancel()
	select {
	case <-srv.Aborted():
	case <-wctx.Done():
		t.Fatal("the server never saw the request end")
	}

	ctx, cancel := context.WithCancel(context.Background())
	go func() {
		<-srv.Hung()
		cancel()
	}()
	f2 := newFetcher(t, Options{Policy: engine.URLPolicy{TrustLevel: "local"}})
	_, err = f2.Fetch(ctx, srv.URL("/hang"))
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v, want context.Canceled", err)
	}
}

// TestCharsets decodes the fixture's encoded pages to the text a browser
// shows.
func TestCharsets(t *testing.T) {
	srv := fixture.New(t)
	f := newFetcher(t, Options{Policy: engine.URLPolicy{TrustLevel: "local"}})
	cases := []struct{ name, charset, want string }{
		{"sjis-header", "shift_jis", "<title>日本語のページ「見出し」</title>"},
		{"sjis-meta", "shift_jis", "メタで宣言された文字コード。"},
		{"eucjp-meta", "euc-jp", "<title>EUC-JPのページ</title>"},
		{"gbk-header", "gbk", "简体中文的段落。"},
		{"cp1252-meta", "windows-1252", "Curly ‘single’ and “double” quotes, an en dash –, the euro €, naïve façade."},
		{"latin1-header", "windows-1252", "Latin-1 label: € ‰ œ Ÿ and ÀÉÎÕÜ."},
		{"utf8-bom", "utf-8", "A BOM says UTF-8: ✓ 日本 ü."},
		{"meta-late", "shift_jis", "宣言が遅い。"},
		// Undeclared: read as windows-1252, as Chromium does.
		{"utf8-undeclared", "windows-1252", "Undeclared UTF-8: âœ“ Ã¼ Ã©."},
		// One U+FFFD per maximal invalid sequence, as the Encoding
		// Standard's decoder gives.
		{"utf8-invalid", "utf-8", "Broken bytes: [\uFFFD] [\uFFFD\uFFFD\uFFFD] [\uFFFD] [\uFFFD] end"},
	}
	for _, c := range cases {
		pg, err := fetch(t, f, srv.URL("/x/charset/"+c.name))
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		if pg.Charset != c.charset || !strings.Contains(pg.Body, c.want) {
			t.Errorf("%s: charset %s, body %q; want %s with %q", c.name, pg.Charset, pg.Body, c.charset, c.want)
		}
		if strings.HasPrefix(pg.Body, "\uFEFF") {
			t.Errorf("%s: the BOM is left in the body", c.name)
		}
	}
}

// TestCookies: seeded cookies are sent where they belong, cookies a page
// sets are kept for the next fetch.
func TestCookies(t *testing.T) {
	srv := fixture.New(t)
	f := newFetcher(t, Options{Policy: engine.URLPolicy{TrustLevel: "local"}, Cookies: []*http.Cookie{
		{Name: "sid", Value: "abc", Domain: "127.0.0.1", Path: "/"},
		{Name: "other", Value: "x", Domain: "example.com", Path: "/"},
		{Name: "deep", Value: "y", Domain: "127.0.0.1", Path: "/nested"},
	}})
	pg, err := fetch(t, f, srv.URL("/cookies"))
	if err != nil || strings.TrimSpace(pg.Body) != "sid=abc" {
		t.Fatalf("cookies sent = %q, %v; want sid=abc", pg.Body, err)
	}
	if _, err := fetch(t, f, srv.URL("/set-cookie?name=lang&value=fr")); err != nil {
		t.Fatal(err)
	}
	pg, err = fetch(t, f, srv.URL("/cookies"))
	if err != nil || pg.Body != "sid=abc; lang=fr" {
		t.Fatalf("cookies sent = %q, %v; want sid=abc; lang=fr", pg.Body, err)
	}
	if _, err := New(Options{Cookies: []*http.Cookie{{Name: "x", Value: "1"}}}); err == nil || !strings.Contains(err.Error(), "Cookies[0]") {
		t.Fatalf("a cookie without a domain: err = %v", err)
	}
}

// port returns a fixture server's port.
func port(s *fixture.Server) string {
	h := s.Host()
	return h[strings.LastIndexByte(h, ':')+1:]
}
