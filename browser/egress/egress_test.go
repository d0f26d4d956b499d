package egress

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"net/url"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/browsertask/browsertask/engine"
	"github.com/browsertask/browsertask/internal/fixture"
)

// tcpEcho is a raw TCP echo server on 127.0.0.1 that counts connections.
type tcpEcho struct {
	ln    net.Listener
	conns atomic.Int64
}

func newTCPEcho(t *testing.T) *tcpEcho {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	e := &tcpEcho{ln: ln}
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			e.conns.Add(1)
			go func() { defer c.Close(); _, _ = io.Copy(c, c) }()
		}
	}()
	t.Cleanup(func() { _ = ln.Close() })
	return e
}

func (e *tcpEcho) port() string {
	_, p, _ := net.SplitHostPort(e.ln.Addr().String())
	return p
}

// testProxy starts a restricted proxy over pn, counting Dial calls.
func testProxy(t *testing.T, pn *fixture.PublicNet, idle time.Duration) (*Proxy, *atomic.Int64) {
	t.Helper()
	var dials atomic.Int64
	p, err := Start(Options{
		Policy: func() engine.URLPolicy { return engine.URLPolicy{TrustLevel: "restricted", Resolve: pn.Resolve} },
		Dial: func(ctx context.Context, network, addr string) (net.Conn, error) {
			dials.Add(1)
			return pn.Dial(ctx, network, addr)
		},
		IdleTimeout: idle,
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = p.Close() })
	if !strings.HasPrefix(p.Addr(), "127.0.0.1:") {
		t.Fatalf("proxy listens on %s, want 127.0.0.1 only", p.Addr())
	}
	return p, &dials
}

// connectVia sends CONNECT target to the proxy and returns the status, the
// response body (for refusals) and, on 200, the open tunnel.
func connectVia(t *testing.T, p *Proxy, target string) (int, string, net.Conn, *bufio.Reader) {
	t.Helper()
	c, err := net.DialTimeout("tcp", p.Addr(), 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	_ = c.SetDeadline(time.Now().Add(10 * time.Second))
	fmt.Fprintf(c, "CONNECT %s HTTP/1.1\r\nHost: %s\r\n\r\n", target, target)
	br := bufio.NewReader(c)
	resp, err := http.ReadResponse(br, &http.Request{Method: http.MethodConnect})
	if err != nil {
		c.Close()
		t.Fatalf("CONNECT %s: %v", target, err)
	}
	if resp.StatusCode != http.StatusOK {
		body, _ := io.ReadAll(resp.Body)
		c.Close()
		return resp.StatusCode, resp.Header.Get("X-Browsertask-Refused") + " " + string(body), nil, nil
	}
	_ = c.SetDeadline(time.Time{})
	t.Cleanup(func() { c.Close() })
	return resp.StatusCode, "", c, br
}

// echoOnce writes msg to the tunnel and reads it back.
func echoOnce(t *testing.T, c net.Conn, br *bufio.Reader, msg string) {
	t.Helper()
	_ = c.SetDeadline(time.Now().Add(5 * time.Second))
	defer c.SetDeadline(time.Time{})
	if _, err := io.WriteString(c, msg); err != nil {
		t.Fatal(err)
	}
	got := make([]byte, len(msg))
	if _, err := io.ReadFull(br, got); err != nil || string(got) != msg {
		t.Fatalf("echo through the tunnel: %q, %v", got, err)
	}
}

// TestProxyRefusesInternalTargets: CONNECT, plain and upgrade requests to
// loopback, private and link-local addresses — as literals, as names that
// resolve there, or as names that do not resolve at all — get 403 with a
// text body; nothing is dialled and the target sees no connection.
func TestProxyRefusesInternalTargets(t *testing.T) {
	echo := newTCPEcho(t)
	pn := fixture.NewPublicNet()
	pn.Map("evil.test", netip.MustParseAddr("127.0.0.1"))
	pn.Map("mixed.test", netip.MustParseAddr("203.0.113.99"), netip.MustParseAddr("10.0.0.1"))
	p, dials := testProxy(t, pn, 0)
	port := echo.port()
	for _, target := range []string{
		"127.0.0.1:" + port, "[::1]:" + port, "10.0.0.1:" + port, "169.254.169.254:80", "0.0.0.0:" + port,
		"evil.test:" + port, "EVIL.test.:" + port, "mixed.test:" + port, "unknown.test:" + port,
		p.Addr(), // no relay through itself
	} {
		status, body, _, _ := connectVia(t, p, target)
		if status != http.StatusForbidden || !strings.Contains(body, "TRUST_LEVEL_NOT_ALLOWED") || !strings.Contains(body, "refused") {
			t.Errorf("CONNECT %s: %d %q, want 403 TRUST_LEVEL_NOT_ALLOWED", target, status, body)
		}
	}
	proxyURL, _ := url.Parse(p.URL())
	client := &http.Client{Transport: &http.Transport{Proxy: http.ProxyURL(proxyURL)}, Timeout: 10 * time.Second}
	for _, u := range []string{"http://127.0.0.1:" + port + "/x", "http://evil.test:" + port + "/x", "http://unknown.test/x"} {
		resp, err := client.Get(u)
		if err != nil {
			t.Fatalf("GET %s: %v", u, err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusForbidden || !strings.Contains(string(body), "refused") {
			t.Errorf("GET %s via proxy: %d %q, want 403", u, resp.StatusCode, body)
		}
	}
	req, _ := http.NewRequest("GET", "http://evil.test:"+port+"/ws", nil)
	req.Header.Set("Connection", "Upgrade")
	req.Header.Set("Upgrade", "websocket")
	resp, err := client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusForbidden {
		t.Errorf("upgrade to evil.test: %d, want 403", resp.StatusCode)
	}
	if n := echo.conns.Load(); n != 0 {
		t.Fatalf("the internal target received %d connections", n)
	}
	if n := dials.Load(); n != 0 {
		t.Fatalf("the proxy dialled %d times, want 0", n)
	}
	if n := p.Refused(); n != 14 {
		t.Fatalf("Refused() = %d, want 14", n)
	}
}

// TestProxyDNSChangeRefusedAtConnect: a name whose answer changes from a
// public address to 127.0.0.1 (rebinding) is allowed while it is public
// and refused on the next connection: the proxy resolves and checks at
// connect time and dials the address it checked.
func TestProxyDNSChangeRefusedAtConnect(t *testing.T) {
	echo := newTCPEcho(t)
	pn := fixture.NewPublicNet()
	pn.Add("site-a.test", echo.ln.Addr().String())
	if a := pn.Addr("site-a.test"); a != netip.MustParseAddr("203.0.113.10") {
		t.Fatalf("site-a.test is %s, want 203.0.113.10", a)
	}
	pn.Sequence("rebind.test", []netip.Addr{pn.Addr("site-a.test")}, []netip.Addr{netip.MustParseAddr("127.0.0.1")})
	p, dials := testProxy(t, pn, 0)
	target := "rebind.test:" + echo.port()
	status, _, c, br := connectVia(t, p, target)
	if status != http.StatusOK {
		t.Fatalf("first CONNECT (public answer): %d", status)
	}
	echoOnce(t, c, br, "hello")
	status, body, _, _ := connectVia(t, p, target)
	if status != http.StatusForbidden || !strings.Contains(body, "127.0.0.1") {
		t.Fatalf("second CONNECT (answer now 127.0.0.1): %d %q, want 403 naming the address", status, body)
	}
	if pn.Lookups("rebind.test") != 2 || dials.Load() != 1 || echo.conns.Load() != 1 || p.Refused() != 1 {
		t.Fatalf("lookups %d dials %d conns %d refused %d, want 2 1 1 1",
			pn.Lookups("rebind.test"), dials.Load(), echo.conns.Load(), p.Refused())
	}
}

// wsHandshake is a WebSocket client handshake for host, in the request
// form the caller picks (absolute URL through a proxy, or origin form).
func wsHandshake(requestTarget, host string) string {
	return "GET " + requestTarget + " HTTP/1.1\r\nHost: " + host + "\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n" +
		"Proxy-Connection: keep-alive\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n"
}

// wsRoundTrip reads the 101, sends one masked text frame and reads the
// echo.
func wsRoundTrip(t *testing.T, c net.Conn, br *bufio.Reader, msg string) {
	t.Helper()
	_ = c.SetDeadline(time.Now().Add(10 * time.Second))
	resp, err := http.ReadResponse(br, &http.Request{Method: "GET"})
	if err != nil || resp.StatusCode != http.StatusSwitchingProtocols {
		t.Fatalf("handshake: %v %v", resp, err)
	}
	mask := [4]byte{1, 2, 3, 4}
	frame := []byte{0x81, 0x80 | byte(len(msg)), mask[0], mask[1], mask[2], mask[3]}
	for i := range len(msg) {
		frame = append(frame, msg[i]^mask[i%4])
	}
	if _, err := c.Write(frame); err != nil {
		t.Fatal(err)
	}
	head := make([]byte, 2)
	if _, err := io.ReadFull(br, head); err != nil || head[0] != 0x81 || int(head[1]) != len(msg) {
		t.Fatalf("echo frame head %v: %v", head, err)
	}
	got := make([]byte, len(msg))
	if _, err := io.ReadFull(br, got); err != nil || string(got) != msg {
		t.Fatalf("echo frame %q: %v", got, err)
	}
}

// TestProxyAllowedTraffic: a public host is reachable through the proxy
// as plain HTTP, HTTPS in a CONNECT tunnel, and WebSocket both as a plain
// HTTP upgrade (ws:// in absolute form) and inside a CONNECT tunnel.
func TestProxyAllowedTraffic(t *testing.T) {
	site := fixture.New(t)
	ws := fixture.NewWebSocketEcho(t)
	tlsSrv := newTLSServer(t)
	pn := fixture.NewPublicNet()
	base := pn.Add("site-a.test", site.Host())
	pn.Add("ws.test", ws.Host())
	pn.Add("secure.test", tlsSrv.Listener.Addr().String())
	p, _ := testProxy(t, pn, 0)
	proxyURL, _ := url.Parse(p.URL())

	tr := tlsSrv.Client().Transport.(*http.Transport).Clone()
	tr.Proxy = http.ProxyURL(proxyURL)
	tr.TLSClientConfig.ServerName = "example.com" // in httptest's certificate
	client := &http.Client{Transport: tr, Timeout: 10 * time.Second}
	resp, err := client.Get(base + "/page/3")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 || !strings.Contains(string(body), "Item 3") || site.Hits("/page/3") != 1 {
		t.Fatalf("plain HTTP: %d %q hits %d", resp.StatusCode, body, site.Hits("/page/3"))
	}
	_, tlsPort, _ := net.SplitHostPort(tlsSrv.Listener.Addr().String())
	resp, err = client.Get("https://secure.test:" + tlsPort + "/tls")
	if err != nil {
		t.Fatalf("HTTPS via CONNECT: %v", err)
	}
	body, _ = io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 || string(body) != "secure /tls" {
		t.Fatalf("HTTPS via CONNECT: %d %q", resp.StatusCode, body)
	}

	_, wsPort, _ := net.SplitHostPort(ws.Host())
	wsHost := "ws.test:" + wsPort
	c, err := net.Dial("tcp", p.Addr())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	io.WriteString(c, wsHandshake("http://"+wsHost+"/", wsHost))
	wsRoundTrip(t, c, bufio.NewReader(c), "over plain upgrade")

	status, _, tc, br := connectVia(t, p, wsHost)
	if status != http.StatusOK {
		t.Fatalf("CONNECT to ws.test: %d", status)
	}
	io.WriteString(tc, wsHandshake("/", wsHost))
	wsRoundTrip(t, tc, br, "inside a tunnel")
	if ws.Upgrades() != 2 || p.Refused() != 0 {
		t.Fatalf("upgrades %d refused %d, want 2 0", ws.Upgrades(), p.Refused())
	}
}

// newTLSServer is an HTTPS server answering "secure PATH".
func newTLSServer(t *testing.T) *httptest.Server {
	t.Helper()
	s := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprint(w, "secure "+r.URL.Path)
	}))
	t.Cleanup(s.Close)
	return s
}

// TestProxyOriginFormAndClose: the proxy is no web server (origin-form
// requests get 400), and Close stops the listener and ends open tunnels.
func TestProxyOriginFormAndClose(t *testing.T) {
	echo := newTCPEcho(t)
	pn := fixture.NewPublicNet()
	pn.Add("site-a.test", echo.ln.Addr().String())
	p, _ := testProxy(t, pn, 0)
	resp, err := http.Get(p.URL() + "/")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusBadRequest {
		t.Fatalf("origin-form GET: %d, want 400", resp.StatusCode)
	}
	status, _, c, br := connectVia(t, p, "site-a.test:"+echo.port())
	if status != http.StatusOK {
		t.Fatalf("CONNECT: %d", status)
	}
	echoOnce(t, c, br, "before close")
	if err := p.Close(); err != nil {
		t.Fatal(err)
	}
	_ = c.SetReadDeadline(time.Now().Add(3 * time.Second))
	if _, err := br.ReadByte(); err == nil || isTimeout(err) {
		t.Fatalf("tunnel still open after Close: %v", err)
	}
	if c2, err := net.DialTimeout("tcp", p.Addr(), time.Second); err == nil {
		c2.Close()
		t.Fatal("the proxy still accepts connections after Close")
	}
	_ = p.Close() // idempotent
}

func isTimeout(err error) bool {
	ne, ok := err.(net.Error)
	return ok && ne.Timeout()
}

// TestProxyIdleTimeout: a tunnel with traffic in either direction stays
// open; one idle for IdleTimeout is closed.
func TestProxyIdleTimeout(t *testing.T) {
	if testing.Short() {
		t.Skip("long by nature (keeps a tunnel busy for two idle timeouts, then idle for one); the full suite runs it")
	}
	echo := newTCPEcho(t)
	pn := fixture.NewPublicNet()
	pn.Add("site-a.test", echo.ln.Addr().String())
	const idle = time.Second
	p, _ := testProxy(t, pn, idle)
	status, _, c, br := connectVia(t, p, "site-a.test:"+echo.port())
	if status != http.StatusOK {
		t.Fatalf("CONNECT: %d", status)
	}
	// Traffic for more than twice the idle timeout: the tunnel must stay
	// open while it is used. The echoes follow one another without pauses,
	// so the only gaps are the round trips themselves (a test that slept
	// between them made gaps of its own, a quarter of the timeout, that a
	// loaded machine stretched past it).
	n := 0
	for began := time.Now(); time.Since(began) < 2*idle+200*time.Millisecond; n++ {
		echoOnce(t, c, br, "ping")
	}
	// ...and close once it is idle. Only the order is asserted: how soon
	// after the last byte depends on scheduling, not on the promise.
	start := time.Now()
	_ = c.SetReadDeadline(time.Now().Add(5 * idle))
	_, err := br.ReadByte()
	if err == nil || isTimeout(err) {
		t.Fatalf("idle tunnel not closed within %s of its last byte (idle timeout %s): %v", 5*idle, idle, err)
	}
	t.Logf("%d echoes kept the tunnel open; idle, it closed %s after its last byte (idle timeout %s)", n, time.Since(start), idle)
}
