package cli

import (
	"context"
	"log/slog"
	"net"
	"net/http"
	"time"
)

// The HTTP listener's timeouts (see httpTimeouts).
const (
	httpReadHeaderTimeout = 10 * time.Second
	httpReadTimeout       = 30 * time.Second
	httpIdleTimeout       = 2 * time.Minute
)

// httpTimeouts bound how long a client may hold a connection without
// doing its part, so that slow or stalled clients cannot pile up
// connections (and their goroutines):
//   - readHeader: from the first byte of a request to the end of its
//     headers;
//   - read: from the first byte to the end of the body (a 4 MiB body at
//     most, so 30 s is generous even off loopback). Go lifts this deadline
//     as soon as the body has been read, before the response, so a
//     long-poll answer or a GET SSE stream lasts as long as it needs;
//   - idle: a keep-alive connection waiting for its next request.
//
// There is no write timeout on purpose: it would cut SSE streams and
// long-polls (a sync run may take minutes).
type httpTimeouts struct {
	readHeader, read, idle time.Duration
	// shutdown bounds how long open requests (SSE streams, long polls)
	// may go on once the server stops (0: 2 s).
	shutdown time.Duration
}

// defaultHTTPTimeouts are the timeouts serve and mcp --http=auto use.
func defaultHTTPTimeouts() httpTimeouts {
	return httpTimeouts{readHeader: httpReadHeaderTimeout, read: httpReadTimeout, idle: httpIdleTimeout}
}

// serveHTTP serves h on ln until ctx ends.
func serveHTTP(ctx context.Context, ln net.Listener, h http.Handler, log *slog.Logger, to httpTimeouts) error {
	srv := &http.Server{
		Handler:           h,
		ReadHeaderTimeout: to.readHeader,
		ReadTimeout:       to.read,
		IdleTimeout:       to.idle,
		ErrorLog:          slog.NewLogLogger(log.Handler(), slog.LevelWarn),
	}
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()
	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
	}
	d := to.shutdown
	if d <= 0 {
		d = 2 * time.Second
	}
	sctx, cancel := context.WithTimeout(context.Background(), d)
	defer cancel()
	_ = srv.Shutdown(sctx)
	_ = srv.Close()
	return nil
}
