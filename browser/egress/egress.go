// Package egress is the forward proxy that launched browsers use under trust
// restricted, so Chromium connects only to addresses the URL policy checked.
//
// Why: the policy used to resolve a hostname in the daemon while Chromium
// resolved it again on its own. The two answers can differ (caches, hosts
// rules, a DNS server that answers "public" first and 127.0.0.1 next), and
// the CDP Fetch domain that pauses requests for the check never sees
// WebSockets at all. With Chromium started with
// --proxy-server=http://127.0.0.1:PORT and --proxy-bypass-list=<-loopback>
// (which removes Chromium's implicit "loopback goes direct" rule), every
// connection a page makes — documents, sub-resources, redirects, iframes,
// workers, ws:// and wss:// — is opened by this proxy instead. Chromium does
// no DNS of its own for proxied requests; the proxy connects through the
// URL policy's one checked dialer (engine.NewCheckedDialer, shared with the
// HTTP fetch path): it resolves the host, checks every address of the
// answer with engine.CheckAddr (every address netpolicy.Classify calls
// internal is refused under restricted, the machine's own included; the
// daemon's own listener always) and connects to exactly the address it
// checked. DNS races, redirects and WebSockets are closed in one place.
//
// What it serves: absolute-form HTTP requests (plain http://, proxied with
// an http.Transport whose dialer is the checked dial), HTTP upgrades such as
// ws:// (the request is written to the checked connection and, on 101, the
// raw connections are tunnelled) and CONNECT tunnels (https://, wss://, and
// ws:// when Chromium tunnels it). Origin-form requests get 400: the proxy
// is no web server. A refusal answers 403 with a short text body and is
// logged; a host that cannot be resolved is refused the same way (fail
// closed). The listener binds 127.0.0.1 only, and because the proxy refuses
// internal targets, it is no relay into loopback for pages or for other
// local processes.
//
// Timeouts: request headers must arrive within ReadHeaderTimeout; keep-alive
// connections, tunnels and upgraded connections close after IdleTimeout
// without traffic in either direction. Close stops the listener and closes
// every connection, tunnels included.
package egress

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httputil"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/browsertask/browsertask/engine"
	"github.com/browsertask/browsertask/internal/netpolicy"
)

// Defaults for the zero values of Options.
const (
	// DefaultIdleTimeout closes a tunnel or keep-alive connection without
	// traffic for this long (a WebSocket that sends nothing for two minutes
	// is closed; pages reconnect).
	DefaultIdleTimeout = 2 * time.Minute
	// DefaultReadHeaderTimeout bounds how long a client may take to send a
	// request's headers.
	DefaultReadHeaderTimeout = 10 * time.Second
)

// Options configure a Proxy.
type Options struct {
	// Policy returns the URL policy every connection is checked against
	// (its trust level, deny list and resolver). It is called once per
	// connection, so deny-list changes apply at once. Required.
	Policy func() engine.URLPolicy
	// Dial connects to an address that passed the check ("ip:port"; never a
	// hostname). Nil uses the checked dialer's net.Dialer, which checks the
	// socket's address once more. Tests replace it to present loopback
	// fixture servers as public hosts.
	Dial func(ctx context.Context, network, addr string) (net.Conn, error)
	// Logger receives one line per refusal (nil = discard).
	Logger *slog.Logger
	// IdleTimeout closes idle tunnels and keep-alive connections
	// (0 = DefaultIdleTimeout).
	IdleTimeout time.Duration
	// ReadHeaderTimeout bounds reading a request's headers
	// (0 = DefaultReadHeaderTimeout).
	ReadHeaderTimeout time.Duration
}

// Proxy is a running forward proxy on 127.0.0.1. Its methods are safe for
// concurrent use.
type Proxy struct {
	opts     Options
	log      *slog.Logger
	ln       net.Listener
	srv      *http.Server
	rp       *httputil.ReverseProxy
	tr       *http.Transport
	dialer   *netpolicy.Dialer
	refused  atomic.Int64
	served   chan struct{} // closed when Serve returned
	closeErr error

	mu      sync.Mutex
	closed  bool
	tunnels map[net.Conn]struct{} // hijacked client and upstream connections
}

// Start listens on 127.0.0.1 (a free port) and serves until Close.
// Errors: a missing Options.Policy, or the listener's error.
func Start(o Options) (*Proxy, error) {
	if o.Policy == nil {
		return nil, errors.New("egress.Options.Policy is nil; pass the Manager's URL policy function")
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	if o.IdleTimeout <= 0 {
		o.IdleTimeout = DefaultIdleTimeout
	}
	if o.ReadHeaderTimeout <= 0 {
		o.ReadHeaderTimeout = DefaultReadHeaderTimeout
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("egress proxy: listen on 127.0.0.1: %w", err)
	}
	p := &Proxy{opts: o, log: o.Logger, ln: ln, served: make(chan struct{}), tunnels: map[net.Conn]struct{}{},
		dialer: engine.NewCheckedDialer(o.Policy, nil, o.Dial)}
	p.tr = &http.Transport{
		Proxy:              nil, // never chain to $HTTP_PROXY: the check must be ours
		DialContext:        p.dialChecked,
		DisableCompression: true, // pass the browser's Accept-Encoding through
		MaxIdleConns:       64,
		IdleConnTimeout:    o.IdleTimeout,
	}
	p.rp = &httputil.ReverseProxy{
		Rewrite:      func(pr *httputil.ProxyRequest) { pr.Out.Host = pr.In.Host },
		Transport:    p.tr,
		ErrorHandler: p.proxyError,
		ErrorLog:     slog.NewLogLogger(o.Logger.Handler(), slog.LevelDebug),
	}
	p.srv = &http.Server{
		Handler:           p,
		ReadHeaderTimeout: o.ReadHeaderTimeout,
		IdleTimeout:       o.IdleTimeout,
		ErrorLog:          slog.NewLogLogger(o.Logger.Handler(), slog.LevelDebug),
	}
	engine.Go(context.Background(), p.log, "egress.serve", func() {
		_ = p.srv.Serve(ln)
		close(p.served)
	}, func(*engine.Panic) { close(p.served) })
	return p, nil
}

// Addr returns the listener's address, 127.0.0.1:PORT.
func (p *Proxy) Addr() string { return p.ln.Addr().String() }

// URL returns the proxy's URL for Chromium's --proxy-server.
func (p *Proxy) URL() string { return "http://" + p.Addr() }

// ChromiumArgs returns the command-line switches that send every
// connection of a launched Chromium through the proxy: the proxy itself,
// an empty bypass list that also removes the implicit loopback bypass,
// WebRTC kept off direct UDP (it would not go through an HTTP proxy), and
// QUIC off (HTTP/3 does not go through an HTTP proxy either).
func (p *Proxy) ChromiumArgs() []string {
	return []string{
		"--proxy-server=" + p.URL(),
		"--proxy-bypass-list=<-loopback>",
		"--force-webrtc-ip-handling-policy=disable_non_proxied_udp",
		"--disable-quic",
	}
}

// Refused returns how many connections the proxy refused so far.
func (p *Proxy) Refused() int64 { return p.refused.Load() }

// Close stops the listener and closes every connection, tunnels included.
// It is idempotent.
func (p *Proxy) Close() error {
	p.mu.Lock()
	if p.closed {
		p.mu.Unlock()
		return p.closeErr
	}
	p.closed = true
	tunnels := p.tunnels
	p.tunnels = map[net.Conn]struct{}{}
	p.mu.Unlock()
	err := p.srv.Close()
	for c := range tunnels {
		_ = c.Close()
	}
	p.tr.CloseIdleConnections()
	<-p.served
	p.mu.Lock()
	p.closeErr = err
	p.mu.Unlock()
	return err
}

// ServeHTTP dispatches one client request: CONNECT, an upgrade, or a plain
// absolute-form request.
func (p *Proxy) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	switch {
	case r.Method == http.MethodConnect:
		p.connect(w, r)
	case !r.URL.IsAbs() || r.URL.Host == "":
		http.Error(w, "browsertask egress proxy: only proxy requests (absolute http:// URLs and CONNECT) are served", http.StatusBadRequest)
	case !strings.EqualFold(r.URL.Scheme, "http"):
		http.Error(w, "browsertask egress proxy: the "+r.URL.Scheme+": scheme is not proxied; use CONNECT for TLS", http.StatusBadRequest)
	case isUpgrade(r):
		p.upgrade(w, r)
	default:
		p.rp.ServeHTTP(w, r)
	}
}

// isUpgrade reports an HTTP/1.1 protocol upgrade request (WebSocket).
func isUpgrade(r *http.Request) bool {
	if r.Header.Get("Upgrade") == "" {
		return false
	}
	for _, v := range r.Header.Values("Connection") {
		for _, tok := range strings.Split(v, ",") {
			if strings.EqualFold(strings.TrimSpace(tok), "upgrade") {
				return true
			}
		}
	}
	return false
}

// hostPort returns the request's target authority with the scheme's
// default port filled in.
func hostPort(u string, scheme string) string {
	if _, _, err := net.SplitHostPort(u); err == nil {
		return u
	}
	port := "80"
	if strings.EqualFold(scheme, "https") || strings.EqualFold(scheme, "wss") {
		port = "443"
	}
	return net.JoinHostPort(strings.Trim(u, "[]"), port)
}

// dialChecked connects to hostport through the URL policy's one checked
// dialer (engine.NewCheckedDialer, the HTTP fetch path's too): the host is
// resolved once, every address of the answer is checked, and only a
// checked address is dialled. A refusal is counted and logged. Errors: a
// *netpolicy.RefusedError when an address is refused or the host cannot
// be resolved; the dial error otherwise.
func (p *Proxy) dialChecked(ctx context.Context, network, hostport string) (net.Conn, error) {
	c, err := p.dialer.DialContext(ctx, network, hostport)
	var ref *netpolicy.RefusedError
	if errors.As(err, &ref) {
		p.refused.Add(1)
		e := engine.AsError(ref.Err)
		p.log.Warn("egress proxy refused a connection", "host", ref.Host, "code", e.Code, "reason", e.Message)
	}
	return c, err
}

// writeError answers a failed dial: 403 for a refusal, 502 otherwise,
// with a short text body.
func writeError(w http.ResponseWriter, err error) {
	var ref *netpolicy.RefusedError
	if errors.As(err, &ref) {
		e := engine.AsError(ref.Err)
		w.Header().Set("X-Browsertask-Refused", string(e.Code))
		http.Error(w, "browsertask egress proxy refused this connection: "+e.Message, http.StatusForbidden)
		return
	}
	http.Error(w, "browsertask egress proxy could not connect: "+err.Error(), http.StatusBadGateway)
}

// proxyError is the ReverseProxy's error handler.
func (p *Proxy) proxyError(w http.ResponseWriter, r *http.Request, err error) {
	if r.Context().Err() != nil {
		return // the browser went away
	}
	writeError(w, err)
}

// connect serves CONNECT host:port: a checked dial, then a raw tunnel.
func (p *Proxy) connect(w http.ResponseWriter, r *http.Request) {
	up, err := p.dialChecked(r.Context(), "tcp", hostPort(r.Host, "https"))
	if err != nil {
		writeError(w, err)
		return
	}
	client, brw, err := hijack(w)
	if err != nil {
		_ = up.Close()
		http.Error(w, "browsertask egress proxy: "+err.Error(), http.StatusInternalServerError)
		return
	}
	if _, err := io.WriteString(client, "HTTP/1.1 200 Connection Established\r\n\r\n"); err != nil {
		_ = client.Close()
		_ = up.Close()
		return
	}
	p.tunnel(client, brw.Reader, up, nil)
}

// upgrade serves an absolute-form upgrade request (ws:// sent as plain
// HTTP): the request goes to a checked connection in origin form; on 101
// the two connections are tunnelled raw, any other answer is relayed as
// an ordinary response.
func (p *Proxy) upgrade(w http.ResponseWriter, r *http.Request) {
	up, err := p.dialChecked(r.Context(), "tcp", hostPort(r.URL.Host, r.URL.Scheme))
	if err != nil {
		writeError(w, err)
		return
	}
	out := r.Clone(r.Context())
	out.RequestURI = ""
	out.Header.Del("Proxy-Connection")
	out.Header.Del("Proxy-Authorization")
	_ = up.SetDeadline(time.Now().Add(p.opts.IdleTimeout))
	if err := out.Write(up); err != nil {
		_ = up.Close()
		writeError(w, err)
		return
	}
	upr := bufio.NewReader(up)
	resp, err := http.ReadResponse(upr, out)
	if err != nil {
		_ = up.Close()
		writeError(w, err)
		return
	}
	if resp.StatusCode != http.StatusSwitchingProtocols {
		defer up.Close()
		defer resp.Body.Close()
		for k, vs := range resp.Header {
			w.Header()[k] = vs
		}
		w.WriteHeader(resp.StatusCode)
		_, _ = io.Copy(w, resp.Body)
		return
	}
	_ = up.SetDeadline(time.Time{})
	client, brw, err := hijack(w)
	if err != nil {
		_ = up.Close()
		return
	}
	if err := resp.Write(client); err != nil { // the 101 head; it has no body
		_ = client.Close()
		_ = up.Close()
		return
	}
	p.tunnel(client, brw.Reader, up, upr)
}

// hijack takes over the client connection, clearing the server's
// deadlines (the tunnel sets its own).
func hijack(w http.ResponseWriter) (net.Conn, *bufio.ReadWriter, error) {
	hj, ok := w.(http.Hijacker)
	if !ok {
		return nil, nil, errors.New("connection cannot be taken over")
	}
	c, brw, err := hj.Hijack()
	if err != nil {
		return nil, nil, err
	}
	_ = c.SetDeadline(time.Time{})
	return c, brw, nil
}

// tunnel copies bytes both ways between client and up until both sides are
// done, either side fails, the tunnel is idle for IdleTimeout, or the
// proxy closes. clientBuf and upBuf hold bytes already read from each side
// (nil = none).
func (p *Proxy) tunnel(client net.Conn, clientBuf *bufio.Reader, up net.Conn, upBuf *bufio.Reader) {
	p.mu.Lock()
	if p.closed {
		p.mu.Unlock()
		_ = client.Close()
		_ = up.Close()
		return
	}
	p.tunnels[client] = struct{}{}
	p.tunnels[up] = struct{}{}
	p.mu.Unlock()
	defer func() {
		p.mu.Lock()
		delete(p.tunnels, client)
		delete(p.tunnels, up)
		p.mu.Unlock()
		_ = client.Close()
		_ = up.Close()
	}()
	var last atomic.Int64
	last.Store(time.Now().UnixNano())
	var wg sync.WaitGroup
	wg.Add(2)
	broken := func(*engine.Panic) {
		_ = client.Close() // the other direction ends too
		_ = up.Close()
		wg.Done()
	}
	engine.Go(context.Background(), p.log, "egress.pipe.up", func() { p.pipe(up, client, clientBuf, &last); wg.Done() }, broken)
	engine.Go(context.Background(), p.log, "egress.pipe.down", func() { p.pipe(client, up, upBuf, &last); wg.Done() }, broken)
	wg.Wait()
}

// pipe copies src to dst. Reads time out after IdleTimeout; a timeout ends
// the pipe only when neither direction moved a byte meanwhile (a download
// keeps a quiet upload direction alive). At src's EOF, dst's write side is
// closed so the peer sees the end; any other error closes both.
func (p *Proxy) pipe(dst, src net.Conn, buffered *bufio.Reader, last *atomic.Int64) {
	var r io.Reader = src
	if buffered != nil && buffered.Buffered() > 0 {
		r = io.MultiReader(io.LimitReader(buffered, int64(buffered.Buffered())), src)
	}
	buf := make([]byte, 32*1024)
	for {
		_ = src.SetReadDeadline(time.Now().Add(p.opts.IdleTimeout))
		n, err := r.Read(buf)
		if n > 0 {
			last.Store(time.Now().UnixNano())
			_ = dst.SetWriteDeadline(time.Now().Add(p.opts.IdleTimeout))
			if _, werr := dst.Write(buf[:n]); werr != nil {
				_ = src.Close()
				_ = dst.Close()
				return
			}
		}
		if err == nil {
			continue
		}
		var ne net.Error
		if errors.As(err, &ne) && ne.Timeout() && time.Since(time.Unix(0, last.Load())) < p.opts.IdleTimeout {
			continue
		}
		if errors.Is(err, io.EOF) {
			if cw, ok := dst.(interface{ CloseWrite() error }); ok {
				_ = cw.CloseWrite()
				return
			}
		}
		_ = src.Close()
		_ = dst.Close()
		return
	}
}
