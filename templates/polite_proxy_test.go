package templates

import (
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
)

// forwardProxy is a tiny HTTP forward proxy for the tests: absolute-form
// GETs are forwarded, CONNECT is tunnelled; it counts what it carried and
// can require Proxy-Authorization.
type forwardProxy struct {
	srv *httptest.Server
	// auth, when set, is the Proxy-Authorization every request must carry.
	auth string

	mu       sync.Mutex
	requests []string // absolute URLs or CONNECT authorities
	refused  int
}

func newForwardProxy(t *testing.T, auth string) *forwardProxy {
	p := &forwardProxy{auth: auth}
	p.srv = httptest.NewServer(http.HandlerFunc(p.serve))
	t.Cleanup(p.srv.Close)
	return p
}

func (p *forwardProxy) serve(w http.ResponseWriter, r *http.Request) {
	if p.auth != "" && r.Header.Get("Proxy-Authorization") != p.auth {
		p.mu.Lock()
		p.refused++
		p.mu.Unlock()
		w.Header().Set("Proxy-Authenticate", `Basic realm="test"`)
		http.Error(w, "proxy authentication required", http.StatusProxyAuthRequired)
		return
	}
	p.mu.Lock()
	if r.Method == http.MethodConnect {
		p.requests = append(p.requests, "CONNECT "+r.Host)
	} else {
		p.requests = append(p.requests, r.URL.String())
	}
	p.mu.Unlock()
	if r.Method == http.MethodConnect {
		p.tunnel(w, r)
		return
	}
	out, err := http.NewRequestWithContext(r.Context(), r.Method, r.URL.String(), nil)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	out.Header = r.Header.Clone()
	out.Header.Del("Proxy-Authorization")
	out.Header.Del("Proxy-Connection")
	resp, err := (&http.Transport{}).RoundTrip(out)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadGateway)
		return
	}
	defer resp.Body.Close()
	for k, vs := range resp.Header {
		w.Header()[k] = vs
	}
	w.WriteHeader(resp.StatusCode)
	_, _ = io.Copy(w, resp.Body)
}

// tunnel joins the client to r.Host.
func (p *forwardProxy) tunnel(w http.ResponseWriter, r *http.Request) {
	up, err := net.Dial("tcp", r.Host)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadGateway)
		return
	}
	w.WriteHeader(http.StatusOK)
	conn, buf, err := w.(http.Hijacker).Hijack()
	if err != nil {
		up.Close()
		return
	}
	done := make(chan struct{}, 2)
	go func() { _, _ = io.Copy(up, buf); done <- struct{}{} }()
	go func() { _, _ = io.Copy(conn, up); done <- struct{}{} }()
	<-done
	conn.Close()
	up.Close()
	<-done
}

// seen returns the requests the proxy carried.
func (p *forwardProxy) seen() []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]string(nil), p.requests...)
}
