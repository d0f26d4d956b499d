package cli

import (
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"time"

	"github.com/browsertask/browsertask/engine"
	"github.com/browsertask/browsertask/internal/httpguard"
	"golang.org/x/sync/errgroup"
)

// mcpHTTPShutdown bounds open HTTP requests when an mcp process exits: it
// is a stdio server first, and must be gone within 2 s of its client.
const mcpHTTPShutdown = 500 * time.Millisecond

// portRetry is how often an mcp process whose --addr is held by another
// process tries to take it over.
const portRetry = 500 * time.Millisecond

// cmdMCP serves MCP over stdio, plus HTTP when --http=auto: on --addr, or
// on a free loopback port when another process holds it (see mcpListener),
// taking --addr over when that process exits.
//
// The stdio client going away (stdin EOF: MCP SDKs close a stdio server
// with EOF, SIGTERM 2 s later, SIGKILL 2 s after that) hands the runs back
// at once (engine.HandOff): resumable runs return to the queue with their
// checkpoints, the others get 0.5 s to finish before they fail
// "interrupted", and the process exits well within 2 s; a SIGTERM after
// the EOF cuts even that short.
func cmdMCP(ctx context.Context, args []string, getenv func(string) string, stdin io.Reader, stdout, stderr io.Writer) error {
	a, err := openForCLI(ctx, "mcp", args, getenv, stderr)
	if err != nil {
		return err
	}
	// eof is when the stdio session saw its client go; the last line this
	// process logs says how long after it the process was done (browser
	// and database closed), measured on its own clock: the 2 s promise is
	// about that interval, not about how soon a busy machine schedules the
	// client's wait for the exit.
	var eof time.Time
	defer func() {
		a.close()
		if !eof.IsZero() {
			a.log.Info("exiting after stdin closed", "sinceStdinClosed", time.Since(eof).Round(time.Millisecond))
		}
	}()
	cfg := a.cfg
	signals := ctx
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	// The HTTP listener comes first: the engine registers this process
	// with its dashboard URL, where the live views of its runs are served.
	var (
		ln       net.Listener
		h        http.Handler
		fallback bool
	)
	if cfg.http == "auto" {
		if ln, h, fallback, err = a.mcpListener(); err != nil {
			return err
		}
	}
	timeouts := defaultHTTPTimeouts()
	timeouts.shutdown = mcpHTTPShutdown
	g, gctx := errgroup.WithContext(ctx)
	g.Go(func() error { return a.engine.Run(gctx) })
	g.Go(func() error {
		err := a.mcp.ServeStdio(gctx, stdin, stdout)
		if gctx.Err() == nil {
			eof = time.Now()
			// The client is gone: nobody waits for this process.
			a.log.Info("stdin closed: handing the runs back and exiting")
			a.engine.HandOff()
			engine.Go(gctx, a.log, "cli.mcp.hurry", func() {
				<-signals.Done()
				a.engine.Hurry()
			}, nil)
		}
		cancel()
		if err != nil && gctx.Err() == nil && !errors.Is(err, io.EOF) {
			a.log.Warn("stdio session ended", "err", err)
		}
		return nil
	})
	if ln != nil {
		g.Go(func() error { return serveHTTP(gctx, ln, h, a.log, timeouts) })
	}
	if fallback {
		g.Go(func() error { return a.takeOverPort(gctx, timeouts) })
	}
	return g.Wait()
}

// mcpListener binds --addr for `browsertask mcp --http=auto`. When another
// process holds it, this one listens on a free loopback port instead
// (fallback true): the live views of the runs it executes (and their
// takeovers) are served only by the process that drives their browser. It
// returns a nil listener when none can be started (logged: stdio still
// works).
func (a *app) mcpListener() (ln net.Listener, h http.Handler, fallback bool, err error) {
	cfg := a.cfg
	if err := httpguard.CheckListenAddr(cfg.addr, cfg.tokenSet()); err != nil {
		a.log.Warn("HTTP listener not started", "err", err)
		return nil, nil, false, nil
	}
	ln, err = net.Listen("tcp", cfg.addr)
	if err != nil {
		ln, err = net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			a.log.Warn("HTTP listener not started", "err", err)
			return nil, nil, false, nil
		}
		fallback = true
		a.log.Info("HTTP port is served by another process; this one serves stdio, and its dashboard (live views of its runs) on a free port, and takes the port over when it is free",
			"addr", cfg.addr, "dashboard", "http://"+ln.Addr().String()+"/")
	} else {
		a.log.Info("also serving HTTP", "mcp", "http://"+ln.Addr().String()+"/mcp")
	}
	h, err = a.httpHandler(ln.Addr().String())
	if err != nil {
		ln.Close()
		return nil, nil, false, err
	}
	return ln, h, fallback, nil
}

// takeOverPort binds --addr as soon as the process holding it lets go
// (tried every portRetry) and serves the dashboard and /mcp there too, so
// the dashboard outlives the process that served it.
func (a *app) takeOverPort(ctx context.Context, timeouts httpTimeouts) error {
	t := time.NewTicker(portRetry)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-t.C:
		}
		ln, err := net.Listen("tcp", a.cfg.addr)
		if err != nil {
			continue
		}
		h, err := a.handler(ln.Addr().String())
		if err != nil {
			ln.Close()
			a.log.Warn("taking over the HTTP port failed", "err", err)
			return nil
		}
		a.log.Info("took over the HTTP port", "mcp", "http://"+ln.Addr().String()+"/mcp", "dashboard", "http://"+ln.Addr().String()+"/")
		return serveHTTP(ctx, ln, h, a.log, timeouts)
	}
}
