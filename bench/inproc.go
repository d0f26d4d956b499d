package main

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"

	"github.com/browsertask/browsertask/browser"
	"github.com/browsertask/browsertask/db"
	"github.com/browsertask/browsertask/engine"
	"github.com/browsertask/browsertask/internal/devtpl"
	"github.com/browsertask/browsertask/mcp"
	"github.com/browsertask/browsertask/templates"
	"github.com/browsertask/browsertask/web"
)

// inproc is the daemon wired in this process exactly as `browsertask serve`
// wires it (database, browser manager, templates, engine, MCP server at
// /mcp and the dashboard at / on a real loopback listener), so pprof sees
// the server side too.
type inproc struct {
	dbPath string
	db     *db.DB
	bm     *browser.Manager
	eng    *engine.Engine
	http   *httptest.Server
	cancel context.CancelFunc
	done   chan struct{}
}

// startInproc opens a fresh database under dir and starts the engine and
// the HTTP endpoint.
func startInproc(ctx context.Context, dir string, cfg engine.Config, log *slog.Logger) (*inproc, error) {
	dbPath := filepath.Join(dir, "inproc.db")
	store, err := db.Open(ctx, dbPath)
	if err != nil {
		return nil, err
	}
	bm := browser.NewManager(browser.Options{Logger: log.With("component", "browser"), MaxTabsPerSession: cfg.MaxTabsPerSession})
	tpls := append(templates.All(bm, nil), devtpl.Echo{})
	eng, err := engine.New(engine.Options{Store: store, Templates: tpls, Browser: bm,
		Config: cfg, Logger: log.With("component", "engine"), Version: "bench",
		ProtocolVersions: mcp.ProtocolVersions()})
	if err != nil {
		store.Close()
		return nil, err
	}
	srv := mcp.NewServer(eng, mcp.ServerOptions{Version: "bench", Logger: log.With("component", "mcp")})
	mux := http.NewServeMux()
	mux.Handle("/mcp", srv.HTTPHandler(mcp.HTTPOptions{}))
	// The dashboard, for the live view scenario's viewer.
	mux.Handle("/", web.New(web.Options{Engine: eng, Live: bm, Logger: log.With("component", "web")}))
	p := &inproc{dbPath: dbPath, db: store, bm: bm, eng: eng, http: httptest.NewServer(mux), done: make(chan struct{})}
	// As serve does: pages must never reach the daemon's own listener.
	bm.DenyHost(p.http.Listener.Addr().String())
	rctx, cancel := context.WithCancel(context.Background())
	p.cancel = cancel
	go func() {
		defer close(p.done)
		if err := eng.Run(rctx); err != nil {
			log.Error("engine stopped", "err", err)
		}
	}()
	return p, nil
}

// endpoint is the MCP URL.
func (p *inproc) endpoint() string { return p.http.URL + "/mcp" }

// stop shuts everything down.
func (p *inproc) stop() error {
	p.http.CloseClientConnections()
	p.http.Close()
	p.cancel()
	<-p.done
	err := p.bm.Close()
	if cerr := p.db.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("stop in-process server: %w", err)
	}
	return nil
}

// benchServer is an in-process daemon in a temporary directory with an MCP
// client connected over HTTP: what every in-process scenario starts from.
type benchServer struct {
	dir string
	srv *inproc
	cl  *client
}

// startBenchServer starts a benchServer whose configuration admits o.tabs
// tabs per session; tune, when not nil, adjusts the configuration further.
// close releases it all.
func startBenchServer(ctx context.Context, o *options, log *slog.Logger, name string, tune func(*engine.Config)) (*benchServer, error) {
	dir, err := os.MkdirTemp("", "browsertask-bench-"+name+"-")
	if err != nil {
		return nil, err
	}
	cfg := engine.DefaultConfig()
	cfg.MaxTabsPerSession = max(cfg.MaxTabsPerSession, o.tabs)
	if tune != nil {
		tune(&cfg)
	}
	srv, err := startInproc(ctx, dir, cfg, log)
	if err != nil {
		os.RemoveAll(dir)
		return nil, err
	}
	cl, err := connectHTTP(ctx, srv.endpoint())
	if err != nil {
		srv.stop()
		os.RemoveAll(dir)
		return nil, err
	}
	return &benchServer{dir: dir, srv: srv, cl: cl}, nil
}

// close disconnects the client, stops the daemon and removes its files.
func (b *benchServer) close() {
	b.cl.close()
	if err := b.srv.stop(); err != nil {
		fmt.Fprintln(os.Stderr, "bench:", err)
	}
	os.RemoveAll(b.dir)
}
