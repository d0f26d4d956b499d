package browser

import (
	"encoding/json"
	"net"
	"net/netip"
	"strings"
	"testing"
	"time"

	"github.com/browsertask/browsertask/engine"
	"github.com/browsertask/browsertask/internal/fixture"
)

// Trust restricted fails closed (issue 9, defect 6): names the daemon
// cannot resolve are refused, and every connection of the browser goes
// through the egress proxy, which checks the address it connects to — so
// a name resolvable only by Chromium, a name that points into loopback,
// and WebSockets (which the Fetch domain never sees) cannot reach
// internal addresses.

// onlyChromiumRule makes Chromium's own resolver map onlychromium.test to
// loopback; the daemon's resolver (a fixture.PublicNet) does not know it.
const onlyChromiumRule = "--host-resolver-rules=MAP onlychromium.test 127.0.0.1"

// portOf returns the port of a host:port.
func portOf(t *testing.T, hostport string) string {
	t.Helper()
	_, p, err := net.SplitHostPort(hostport)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// restrictedManager is a Manager under trust restricted whose "Internet"
// is pn.
func restrictedManager(t *testing.T, pn *fixture.PublicNet, extra ...string) *Manager {
	t.Helper()
	return newManager(t, Options{TrustLevel: "restricted", Resolve: pn.Resolve, Dial: pn.Dial, ExtraArgs: extra})
}

// TestRestrictedNameOnlyChromiumResolves: a name Chromium resolves (to
// 127.0.0.1, by its host-resolver rules) but the daemon cannot is refused
// under restricted — as the run URL (CheckURL) and as a frame of a public
// page — and the loopback server it points at sees no request. Under
// trust local the same URL loads (so the test can fail).
func TestRestrictedNameOnlyChromiumResolves(t *testing.T) {
	inner := fixture.New(t)
	control := fixture.New(t)
	site := fixture.New(t)
	pn := fixture.NewPublicNet()
	base := pn.Add("site-a.test", site.Host())
	target := "http://onlychromium.test:" + portOf(t, inner.Host()) + "/page/1"

	// Control: Chromium does resolve the name (to loopback) by itself.
	local := newManager(t, Options{Resolve: pn.Resolve, ExtraArgs: []string{onlyChromiumRule}})
	controlURL := "http://onlychromium.test:" + portOf(t, control.Host()) + "/page/1"
	if code, _ := navigateCode(t, local, "sess_local", controlURL); code != "" || control.Hits("/page/1") != 1 {
		t.Fatalf("control under trust local: code %q hits %d, want the page loaded once", code, control.Hits("/page/1"))
	}

	m := restrictedManager(t, pn, onlyChromiumRule)
	e := engine.AsError(engine.CheckURL(target, m.Policy()))
	if e == nil || e.Code != engine.TrustLevelNotAllowed || e.Details["reason"] != engine.ReasonUnresolvable ||
		!strings.Contains(e.Message, target) || !strings.Contains(e.Message, "trust level local") {
		t.Fatalf("CheckURL(%s) = %+v, want TRUST_LEVEL_NOT_ALLOWED naming the URL and the fix", target, e)
	}
	if code, details := navigateCode(t, m, "sess_r", target); code != engine.TrustLevelNotAllowed || details["policy"] != "unresolvable" {
		t.Errorf("run URL: code %q details %v, want TRUST_LEVEL_NOT_ALLOWED policy unresolvable", code, details)
	}
	// A redirect of the main document to the name fails the page; a frame
	// or an image on it is refused (never fetched) while the page itself
	// loads: an unresolvable sub-resource host is usually a dead ad or
	// tracker domain, which must not fail the page.
	if code, details := navigateCode(t, m, "sess_r", base+"/redirect?to="+target); code != engine.TrustLevelNotAllowed || details["blockedUrl"] != target {
		t.Errorf("redirect: code %q details %v, want TRUST_LEVEL_NOT_ALLOWED for %s", code, details, target)
	}
	for name, u := range map[string]string{
		"frame": base + "/frame?src=" + target,
		"image": base + "/image?src=" + target,
	} {
		if code, details := navigateCode(t, m, "sess_r", u); code != "" {
			t.Errorf("%s: code %q details %v, want the page loaded with the sub-resource refused", name, code, details)
		}
	}
	if n := inner.TotalHits(); n != 0 {
		t.Fatalf("the loopback server received %d requests", n)
	}
	if site.Hits("/frame") != 1 || site.Hits("/redirect") != 1 || site.Hits("/image") != 1 {
		t.Fatalf("the public pages were not loaded once each: frame %d redirect %d image %d",
			site.Hits("/frame"), site.Hits("/redirect"), site.Hits("/image"))
	}
}

// TestRestrictedNameResolvingToLoopback: a name the daemon resolves to
// 127.0.0.1 is refused as the run URL (CheckURL and navigation) and as the
// redirect, frame, image or client-side redirect target of an allowed
// public page, which itself loads; the loopback server sees nothing.
func TestRestrictedNameResolvingToLoopback(t *testing.T) {
	inner := fixture.New(t)
	site := fixture.New(t)
	pn := fixture.NewPublicNet()
	base := pn.Add("site-a.test", site.Host())
	pn.Map("evil.test", netip.MustParseAddr("127.0.0.1"))
	target := "http://evil.test:" + portOf(t, inner.Host()) + "/page/9"
	m := restrictedManager(t, pn)

	if e := engine.AsError(engine.CheckURL(target, m.Policy())); e == nil || e.Code != engine.TrustLevelNotAllowed || !strings.Contains(e.Message, "127.0.0.1") {
		t.Fatalf("CheckURL(%s) = %v, want TRUST_LEVEL_NOT_ALLOWED naming 127.0.0.1", target, e)
	}
	if code, details := navigateCode(t, m, "sess_r", target); code != engine.TrustLevelNotAllowed || details["policy"] != "trust-restricted" {
		t.Errorf("run URL: code %q details %v", code, details)
	}
	if code, _ := navigateCode(t, m, "sess_r", base+"/page/1"); code != "" || site.Hits("/page/1") != 1 {
		t.Fatalf("the public page: code %q hits %d, want loaded once", code, site.Hits("/page/1"))
	}
	for name, u := range map[string]string{
		"redirect": base + "/redirect?to=" + target,
		"frame":    base + "/frame?src=" + target,
		"image":    base + "/image?src=" + target,
	} {
		code, details := navigateCode(t, m, "sess_r", u)
		if code != engine.TrustLevelNotAllowed || details["blockedUrl"] != target {
			t.Errorf("%s: code %q details %v, want TRUST_LEVEL_NOT_ALLOWED for %s", name, code, details, target)
		}
	}
	code, details := navigateWait(t, m, "sess_r", base+"/jsredirect?to="+target, WaitNetworkIdle)
	if code != engine.TrustLevelNotAllowed || details["blockedUrl"] != target {
		t.Errorf("js redirect: code %q details %v", code, details)
	}
	if n := inner.TotalHits(); n != 0 {
		t.Fatalf("the loopback server received %d requests", n)
	}
}

// wsProbeJS opens a WebSocket to url, sends "ping" and resolves with
// "echo:ping", "error" or "timeout".
func wsProbeJS(url string) string {
	u, _ := json.Marshal(url)
	return `new Promise(resolve => {
	let ws;
	try { ws = new WebSocket(` + string(u) + `) } catch (e) { resolve('throw:' + e.message); return }
	const timer = setTimeout(() => resolve('timeout'), 8000);
	ws.onopen = () => ws.send('ping');
	ws.onmessage = e => { clearTimeout(timer); resolve('echo:' + e.data); ws.close() };
	ws.onerror = () => { clearTimeout(timer); resolve('error') };
})`
}

// wsProbe loads page in a tab of the session and runs wsProbeJS there for
// each url, returning the outcomes.
func wsProbe(t *testing.T, m *Manager, sessionID, page string, urls ...string) []string {
	t.Helper()
	tb := testTab(t, m, sessionID)
	defer tb.Release(true)
	ctx := testCtx(t)
	if _, err := tb.Navigate(ctx, page, WaitLoad); err != nil {
		t.Fatalf("load %s: %v", page, err)
	}
	var out []string
	for _, u := range urls {
		raw, err := tb.Eval(ctx, wsProbeJS(u))
		if err != nil {
			t.Fatalf("WebSocket probe of %s: %v", u, err)
		}
		var got string
		_ = json.Unmarshal(raw, &got)
		out = append(out, got)
	}
	return out
}

// TestRestrictedWebSocketToLoopback: under restricted a page on an
// allowed public host cannot open a WebSocket to a loopback echo server —
// by address, as localhost, through a name resolving to 127.0.0.1, or
// through a name only Chromium resolves — and the server sees 0
// connections; a WebSocket to a public host works through the proxy.
// Under trust local the loopback WebSocket does arrive (control).
func TestRestrictedWebSocketToLoopback(t *testing.T) {
	ws := fixture.NewWebSocketEcho(t)
	site := fixture.New(t)
	pn := fixture.NewPublicNet()
	base := pn.Add("site-a.test", site.Host())
	pn.Map("evil.test", netip.MustParseAddr("127.0.0.1"))
	port := portOf(t, ws.Host())
	m := restrictedManager(t, pn, onlyChromiumRule)

	refused := []string{
		"ws://127.0.0.1:" + port + "/",
		"ws://localhost:" + port + "/",
		"ws://[::1]:" + port + "/",
		"ws://evil.test:" + port + "/",
		"ws://onlychromium.test:" + port + "/",
	}
	for i, got := range wsProbe(t, m, "sess_r", base+"/page/1", refused...) {
		if got != "error" {
			t.Errorf("restricted: WebSocket to %s: %q, want error", refused[i], got)
		}
	}
	if n := ws.Conns(); n != 0 {
		t.Fatalf("restricted: the loopback WebSocket server saw %d connections, want 0", n)
	}

	// A public WebSocket host goes through the proxy and works.
	pubWS := pn.Add("ws.site-a.test", ws.Host())
	pubWS = "ws" + strings.TrimPrefix(pubWS, "http") + "/"
	if got := wsProbe(t, m, "sess_r", base+"/page/2", pubWS); got[0] != "echo:ping" {
		t.Fatalf("restricted: WebSocket to the public host %s: %q, want echo:ping", pubWS, got[0])
	}
	if ws.Upgrades() != 1 {
		t.Fatalf("public WebSocket: %d upgrades, want 1", ws.Upgrades())
	}

	// Control: under trust local the loopback WebSocket arrives.
	local := newManager(t, Options{})
	before := ws.Conns()
	if got := wsProbe(t, local, "sess_local", site.URL("/page/3"), refused[0]); got[0] != "echo:ping" {
		t.Fatalf("local: WebSocket to %s: %q, want echo:ping", refused[0], got[0])
	}
	if ws.Conns() <= before || ws.Upgrades() != 2 {
		t.Fatalf("local: conns %d (before %d) upgrades %d, want a new connection and 2 upgrades", ws.Conns(), before, ws.Upgrades())
	}
}

// TestRestrictedEgressLifecycle: under restricted the launched browser
// runs with the proxy switches (loopback not bypassed), the proxy listens
// on 127.0.0.1 only, and Close stops it; under trust local there is no
// proxy.
func TestRestrictedEgressLifecycle(t *testing.T) {
	site := fixture.New(t)
	pn := fixture.NewPublicNet()
	base := pn.Add("site-a.test", site.Host())
	m := restrictedManager(t, pn)
	if code, _ := navigateCode(t, m, "sess_r", base+"/page/1"); code != "" {
		t.Fatalf("public page: %s", code)
	}
	m.mu.Lock()
	px := m.egress
	m.mu.Unlock()
	if px == nil || !strings.HasPrefix(px.Addr(), "127.0.0.1:") {
		t.Fatalf("egress proxy %v, want one on 127.0.0.1", px)
	}
	cmd := strings.Join(m.instances[0].proc.cmd.Args, " ")
	for _, want := range []string{"--proxy-server=" + px.URL(), "--proxy-bypass-list=<-loopback>"} {
		if !strings.Contains(cmd, want) {
			t.Fatalf("browser command line lacks %s: %s", want, cmd)
		}
	}
	_ = m.Close()
	if c, err := net.DialTimeout("tcp", px.Addr(), time.Second); err == nil {
		c.Close()
		t.Fatal("the egress proxy still listens after Manager.Close")
	}

	local := newManager(t, Options{})
	if code, _ := navigateCode(t, local, "sess_l", site.URL("/page/2")); code != "" {
		t.Fatalf("local page: %s", code)
	}
	if local.egress != nil || strings.Contains(strings.Join(local.instances[0].proc.cmd.Args, " "), "--proxy-server") {
		t.Fatal("trust local started an egress proxy")
	}
}
