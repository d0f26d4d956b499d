package main

import (
	"context"
	"log/slog"
	"net/http/httptest"
	"os"
	"path/filepath"

	"github.com/browsertask/browsertask/browser"
	"github.com/browsertask/browsertask/engine"
	"github.com/browsertask/browsertask/internal/devtpl"
	"github.com/browsertask/browsertask/internal/wire"
)

// inproc is the daemon wired in this process by the function that wires
// `browsertask serve` (wire.Open: database, browser manager, templates
// with the model, engine, MCP server; wire.Process.Handler: /mcp, /sse,
// /healthz and the dashboard at / behind the token) on a real loopback
// listener, so pprof sees the server side too.
type inproc struct {
	dbPath string
	proc   *wire.Process
	bm     *browser.Manager
	eng    *engine.Engine
	http   *httptest.Server
	cancel context.CancelFunc
	done   chan struct{}
}

// startInproc opens a fresh database under dir and starts the engine and
// the HTTP endpoint, with the dev template the scheduler scenario submits.
func startInproc(ctx context.Context, dir string, cfg engine.Config, log *slog.Logger) (*inproc, error) {
	return startInprocWith(ctx, dir, cfg, browser.Options{}, log)
}

// startInprocWith is startInproc with the browser manager's options (the
// fidelity scenario keeps its Chromium on loopback with ExtraArgs).
func startInprocWith(ctx context.Context, dir string, cfg engine.Config, bo browser.Options, log *slog.Logger) (*inproc, error) {
	dbPath := filepath.Join(dir, "inproc.db")
	p, err := wire.Open(ctx, wire.Options{DBPath: dbPath, Engine: cfg, Browser: bo, ExtraTemplates: []engine.Template{devtpl.Echo{}},
		Version: "bench", Logger: log})
	if err != nil {
		return nil, err
	}
	ts := httptest.NewUnstartedServer(nil)
	addr := ts.Listener.Addr().String()
	ts.Config.Handler = p.Handler(addr, wire.HTTPOptions{})
	ts.Start()
	// As serve does: the live views (the live view scenario's viewer) are
	// served by this listener.
	p.Engine.SetLiveBase(ts.URL)
	ip := &inproc{dbPath: dbPath, proc: p, bm: p.Browser, eng: p.Engine, http: ts, done: make(chan struct{})}
	rctx, cancel := context.WithCancel(context.Background())
	ip.cancel = cancel
	go func() {
		defer close(ip.done)
		if err := p.Engine.Run(rctx); err != nil {
			log.Error("engine stopped", "err", err)
		}
	}()
	return ip, nil
}

// endpoint is the MCP URL.
func (p *inproc) endpoint() string { return p.http.URL + "/mcp" }

// stop shuts everything down (failures to close are logged by
// wire.Process.Close).
func (p *inproc) stop() {
	p.http.CloseClientConnections()
	p.http.Close()
	p.cancel()
	<-p.done
	p.proc.Close()
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
	b.srv.stop()
	os.RemoveAll(b.dir)
}
