package mcp

import (
	"context"
	"net"
	"net/http"
	"net/http/httptest"
	"sync"
)

// memListener is a net.Listener whose connections are the two ends of
// net.Pipe. A server and its client on it have no socket, so both can run
// inside a testing/synctest bubble: their waits are channel waits, and the
// session reaper's clock is the bubble's fake one.
type memListener struct {
	conns chan net.Conn
	done  chan struct{}
	once  sync.Once
}

func newMemListener() *memListener {
	return &memListener{conns: make(chan net.Conn), done: make(chan struct{})}
}

// Accept hands over the server end of the next dialed pipe.
func (l *memListener) Accept() (net.Conn, error) {
	select {
	case c := <-l.conns:
		return c, nil
	case <-l.done:
		return nil, net.ErrClosed
	}
}

// Close makes Accept and later dials fail.
func (l *memListener) Close() error {
	l.once.Do(func() { close(l.done) })
	return nil
}

// Addr is a loopback address, so the Host guard accepts the requests.
func (l *memListener) Addr() net.Addr { return &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1), Port: 80} }

// dial is the client transport's DialContext: a new pipe, one end to Accept.
func (l *memListener) dial(ctx context.Context, _, _ string) (net.Conn, error) {
	server, client := net.Pipe()
	select {
	case l.conns <- server:
		return client, nil
	case <-l.done:
		return nil, net.ErrClosed
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// newMemServer is httptest.NewServer on a memListener: ts.URL and
// ts.Client() work as usual, without a socket.
func newMemServer(h http.Handler) *httptest.Server {
	ts := httptest.NewUnstartedServer(h)
	_ = ts.Listener.Close() // the loopback socket it opened is not used
	l := newMemListener()
	ts.Listener = l
	ts.Start()
	ts.Client().Transport.(*http.Transport).DialContext = l.dial
	return ts
}
