package cli

import (
	"context"
	"errors"
	"io"
	"net"
	"net/http"

	"github.com/browsertask/browsertask/internal/httpguard"
	"golang.org/x/sync/errgroup"
)

// cmdMCP serves MCP over stdio, plus HTTP when --http=auto: on --addr, or
// on a free loopback port when another process holds it (see mcpListener).
func cmdMCP(ctx context.Context, args []string, getenv func(string) string, stdin io.Reader, stdout, stderr io.Writer) error {
	a, err := openForCLI(ctx, "mcp", args, getenv, stderr)
	if err != nil {
		return err
	}
	defer a.close()
	cfg := a.cfg
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	// The HTTP listener comes first: the engine registers this process
	// with its dashboard URL, where the live views of its runs are served.
	var ln net.Listener
	var h http.Handler
	if cfg.http == "auto" {
		if ln, h, err = a.mcpListener(); err != nil {
			return err
		}
	}
	g, gctx := errgroup.WithContext(ctx)
	g.Go(func() error { return a.engine.Run(gctx) })
	g.Go(func() error {
		defer cancel() // stdin closed: the client is gone, shut down
		err := a.mcp.ServeStdio(gctx, stdin, stdout)
		if err != nil && gctx.Err() == nil && !errors.Is(err, io.EOF) {
			a.log.Warn("stdio session ended", "err", err)
		}
		return nil
	})
	if ln != nil {
		g.Go(func() error { return serveHTTP(gctx, ln, h, a.log, defaultHTTPTimeouts()) })
	}
	return g.Wait()
}

// mcpListener binds --addr for `browsertask mcp --http=auto`. When another
// process holds it, this one listens on a free loopback port instead: the
// live views of the runs it executes (and their takeovers) are served only
// by the process that drives their browser. It returns a nil listener when
// none can be started (logged: stdio still works).
func (a *app) mcpListener() (net.Listener, http.Handler, error) {
	cfg := a.cfg
	if err := httpguard.CheckListenAddr(cfg.addr, cfg.tokenSet()); err != nil {
		a.log.Warn("HTTP listener not started", "err", err)
		return nil, nil, nil
	}
	ln, err := net.Listen("tcp", cfg.addr)
	if err != nil {
		ln, err = net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			a.log.Warn("HTTP listener not started", "err", err)
			return nil, nil, nil
		}
		a.log.Info("HTTP port is served by another process; this one serves stdio, and its dashboard (live views of its runs) on a free port",
			"addr", cfg.addr, "dashboard", "http://"+ln.Addr().String()+"/")
	} else {
		a.log.Info("also serving HTTP", "mcp", "http://"+ln.Addr().String()+"/mcp")
	}
	h, err := a.httpHandler(ln.Addr().String())
	if err != nil {
		ln.Close()
		return nil, nil, err
	}
	return ln, h, nil
}
