package cli

import (
	"context"
	"errors"
	"io"
	"net"

	"github.com/browsertask/browsertask/internal/httpguard"
	"golang.org/x/sync/errgroup"
)

// cmdMCP serves MCP over stdio, plus HTTP when --http=auto and the port is free.
func cmdMCP(ctx context.Context, args []string, getenv func(string) string, stdin io.Reader, stdout, stderr io.Writer) error {
	a, err := openForCLI(ctx, "mcp", args, getenv, stderr)
	if err != nil {
		return err
	}
	defer a.close()
	cfg := a.cfg
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
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
	if cfg.http == "auto" {
		if err := httpguard.CheckListenAddr(cfg.addr, cfg.tokenSet()); err != nil {
			a.log.Warn("HTTP listener not started", "err", err)
		} else if ln, err := net.Listen("tcp", cfg.addr); err != nil {
			a.log.Info("HTTP listener is served by another process; this one serves stdio only", "addr", cfg.addr)
		} else if h, err := a.httpHandler(ln.Addr().String()); err != nil {
			ln.Close()
			return err
		} else {
			a.log.Info("also serving HTTP", "mcp", "http://"+ln.Addr().String()+"/mcp")
			g.Go(func() error { return serveHTTP(gctx, ln, h, a.log, defaultHTTPTimeouts()) })
		}
	}
	return g.Wait()
}
