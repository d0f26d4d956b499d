package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"

	"github.com/browsertask/browsertask/internal/httpguard"
	"golang.org/x/sync/errgroup"
)

// cmdServe runs the daemon: engine plus HTTP /mcp until a signal.
func cmdServe(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	cfg, err := parseFlags("serve", args, getenv, stderr)
	if err != nil {
		return err
	}
	if err := httpguard.CheckListenAddr(cfg.addr, cfg.tokenSet()); err != nil {
		return err
	}
	cfg.engine.IsRemote = !httpguard.IsLoopbackAddr(cfg.addr)
	a, err := newApp(ctx, cfg, stderr)
	if err != nil {
		return err
	}
	defer a.close()
	ln, err := net.Listen("tcp", cfg.addr)
	if err != nil {
		return fmt.Errorf("listen on %s: %w (is another browsertask serve running? use --addr)", cfg.addr, err)
	}
	addr := ln.Addr().String()
	h, err := a.httpHandler(addr)
	if err != nil {
		ln.Close()
		return err
	}
	a.log.Info("browsertask serving", "mcp", "http://"+addr+"/mcp", "dashboard", "http://"+addr+"/", "db", cfg.dbPath, "version", Version)
	fmt.Fprintf(stderr, "browsertask %s listening: MCP http://%s/mcp , dashboard http://%s/\n", Version, addr, addr)
	g, gctx := errgroup.WithContext(ctx)
	g.Go(func() error { return a.engine.Run(gctx) })
	g.Go(func() error {
		err := serveHTTP(gctx, ln, h, a.log, defaultHTTPTimeouts())
		if err != nil && !errors.Is(err, http.ErrServerClosed) {
			return err
		}
		return nil
	})
	return g.Wait()
}
