package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"strings"
	"time"

	"golang.org/x/sync/errgroup"

	"github.com/browsertask/browsertask/browser"
	"github.com/browsertask/browsertask/db"
	"github.com/browsertask/browsertask/engine"
	"github.com/browsertask/browsertask/engine/templates"
	"github.com/browsertask/browsertask/internal/devtpl"
	"github.com/browsertask/browsertask/internal/httpguard"
	"github.com/browsertask/browsertask/mcp"
)

// app is one wired process: database, browser manager, engine, MCP server.
type app struct {
	cfg     *config
	log     *slog.Logger
	db      *db.DB
	browser *browser.Manager
	engine  *engine.Engine
	mcp     *mcp.Server
}

// newApp opens the database and wires everything; close releases it.
func newApp(ctx context.Context, cfg *config, stderr io.Writer) (*app, error) {
	log, err := newLogger(cfg, stderr)
	if err != nil {
		return nil, err
	}
	store, err := db.Open(ctx, cfg.dbPath)
	if err != nil {
		return nil, fmt.Errorf("open database %s: %w", cfg.dbPath, err)
	}
	var browsers []string
	for _, b := range strings.Split(cfg.browsers, ",") {
		if b = strings.TrimSpace(b); b != "" {
			browsers = append(browsers, b)
		}
	}
	resolve, err := devResolver(cfg)
	if err != nil {
		store.Close()
		return nil, err
	}
	bm := browser.NewManager(browser.Options{
		Resolve: resolve,
		Browser: browsers, Headed: cfg.headed, Logger: log.With("component", "browser"),
		MaxTabsPerSession: cfg.engine.MaxTabsPerSession,
		// Every request of every tab is held to the URL policy (03 §3.3).
		TrustLevel: cfg.engine.TrustLevel, AllowFileURLs: cfg.engine.AllowFileURLs,
	})
	tpls := templates.All(bm)
	if cfg.devTemplates {
		tpls = append(tpls, devtpl.Echo{}, devtpl.Echo{Once: true})
	}
	eng, err := engine.New(engine.Options{
		Store: store, Templates: tpls, Sessions: bm, Browser: bm,
		Config: cfg.engine, Logger: log.With("component", "engine"),
		Version: version, ProtocolVersions: mcp.ProtocolVersions(),
	})
	if err != nil {
		bm.Close()
		store.Close()
		return nil, err
	}
	srv := mcp.NewServer(eng, mcp.ServerOptions{Version: version, Logger: log.With("component", "mcp")})
	return &app{cfg: cfg, log: log, db: store, browser: bm, engine: eng, mcp: srv}, nil
}

// close releases the browser and the database (after the engine stopped).
func (a *app) close() {
	if err := a.browser.Close(); err != nil {
		a.log.Warn("close browser", "err", err)
	}
	if err := a.db.Close(); err != nil {
		a.log.Warn("close database", "err", err)
	}
}

// httpHandler serves /mcp, a readiness probe and the dashboard at /.
func (a *app) httpHandler(addr string) (http.Handler, error) {
	// Pages opened by our own browser must never reach our own API.
	a.browser.DenyHost(addr)
	token := a.cfg.token
	if a.cfg.tokenFile != "" {
		b, err := os.ReadFile(a.cfg.tokenFile)
		if err != nil {
			return nil, fmt.Errorf("read --token-file: %w", err)
		}
		token = strings.TrimSpace(string(b))
	}
	var origins []string
	for _, o := range strings.Split(a.cfg.allowedOrigins, ",") {
		if o = strings.TrimSpace(o); o != "" {
			origins = append(origins, o)
		}
	}
	mux := http.NewServeMux()
	mux.Handle("/mcp", a.mcp.HTTPHandler(mcp.HTTPOptions{Token: token, AllowedOrigins: origins, SessionTimeout: a.cfg.mcpSessionTimeout()}))
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		fmt.Fprintln(w, "ok")
	})
	mux.Handle("/", a.dashboard(token, addr))
	return mux, nil
}

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
	sctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	_ = srv.Shutdown(sctx)
	_ = srv.Close()
	return nil
}

// tokenSet reports whether a token was configured (flag or file).
func (c *config) tokenSet() bool { return c.token != "" || c.tokenFile != "" }

// cmdServe runs the daemon: engine plus HTTP /mcp until a signal.
func cmdServe(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	cfg, err := parseFlags("serve", args, getenv, stderr)
	if isHelp(err) {
		return nil
	}
	if err != nil {
		return err
	}
	if err := mcp.ListenAddrCheck(cfg.addr, tokenOrFile(cfg)); err != nil {
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
	a.log.Info("browsertask serving", "mcp", "http://"+addr+"/mcp", "dashboard", "http://"+addr+"/", "db", cfg.dbPath, "version", version)
	fmt.Fprintf(stderr, "browsertask %s listening: MCP http://%s/mcp , dashboard http://%s/\n", version, addr, addr)
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

// cmdMCP serves MCP over stdio, plus HTTP when --http=auto and the port is free.
func cmdMCP(ctx context.Context, args []string, getenv func(string) string, stdin io.Reader, stdout, stderr io.Writer) error {
	cfg, err := parseFlags("mcp", args, getenv, stderr)
	if isHelp(err) {
		return nil
	}
	if err != nil {
		return err
	}
	a, err := newApp(ctx, cfg, stderr)
	if err != nil {
		return err
	}
	defer a.close()
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
		if err := mcp.ListenAddrCheck(cfg.addr, tokenOrFile(cfg)); err != nil {
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

func tokenOrFile(c *config) string {
	if c.tokenSet() {
		return "set"
	}
	return ""
}

// newLogger builds the stderr logger.
func newLogger(c *config, w io.Writer) (*slog.Logger, error) {
	var lvl slog.Level
	if err := lvl.UnmarshalText([]byte(c.logLevel)); err != nil {
		return nil, fmt.Errorf("--log-level: %w", err)
	}
	opts := &slog.HandlerOptions{Level: lvl}
	switch c.logFormat {
	case "text":
		return slog.New(slog.NewTextHandler(w, opts)), nil
	case "json":
		return slog.New(slog.NewJSONHandler(w, opts)), nil
	}
	return nil, fmt.Errorf("--log-format must be text or json, got %q", c.logFormat)
}
