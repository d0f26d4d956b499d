package panicpaths

import (
	"context"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/browsertask/browsertask/browser"
	"github.com/browsertask/browsertask/db"
	"github.com/browsertask/browsertask/engine"
	"github.com/browsertask/browsertask/internal/devtpl"
	"github.com/browsertask/browsertask/internal/fixture"
	"github.com/browsertask/browsertask/mcp"
	"github.com/browsertask/browsertask/templates"
)

// faults arms one site at a time; the armed site panics once, at the
// next goroutine or guarded call started there, and is disarmed.
type faults struct {
	mu    sync.Mutex
	armed string
	hit   chan string
}

// inject is the engine.WithFaults decision.
func (f *faults) inject(site string) bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	if site == "" || f.armed != site {
		return false
	}
	f.armed = ""
	f.hit <- site
	return true
}

// arm selects site for the next panic.
func (f *faults) arm(site string) {
	f.mu.Lock()
	f.armed = site
	f.mu.Unlock()
}

// daemon is the engine, browser and MCP server wired in this process.
type daemon struct {
	eng  *engine.Engine
	bm   *browser.Manager
	mcp  *mcp.Server
	addr string // the MCP endpoint's host:port
	log  *fixture.Buffer
	f    *faults
	ctx  context.Context // carries the faults
}

// start wires a daemon whose every context carries f's faults.
func start(t *testing.T) *daemon {
	t.Helper()
	f := &faults{hit: make(chan string, 16)}
	logs := &fixture.Buffer{}
	log := slog.New(slog.NewTextHandler(io.MultiWriter(logs, os.Stderr), &slog.HandlerOptions{Level: slog.LevelError}))
	fctx := engine.WithFaults(context.Background(), f.inject)
	store, err := db.Open(fctx, filepath.Join(t.TempDir(), "bt.db"))
	if err != nil {
		t.Fatal(err)
	}
	bm := browser.NewManager(browser.Options{Logger: log, TempDir: t.TempDir()})
	cfg := engine.DefaultConfig()
	cfg.PollInterval, cfg.HeartbeatInterval = 50*time.Millisecond, 100*time.Millisecond
	cfg.RecoveryInterval, cfg.JanitorInterval = 100*time.Millisecond, 100*time.Millisecond
	eng, err := engine.New(engine.Options{Store: store, Templates: append(templates.All(bm, nil), devtpl.Echo{}), Browser: bm,
		Config: cfg, Logger: log, Version: "test", ProtocolVersions: mcp.ProtocolVersions()})
	if err != nil {
		t.Fatal(err)
	}
	srv := mcp.NewServer(eng, mcp.ServerOptions{Version: "test", Logger: log})
	mux := http.NewServeMux()
	mux.Handle("/mcp", srv.HTTPHandler(mcp.HTTPOptions{}))
	hs := httptest.NewUnstartedServer(mux)
	hs.Config.BaseContext = func(net.Listener) context.Context { return fctx }
	hs.Start()
	rctx, cancel := context.WithCancel(fctx)
	done := make(chan struct{})
	go func() { defer close(done); _ = eng.Run(rctx) }()
	t.Cleanup(func() {
		hs.CloseClientConnections()
		hs.Close()
		cancel()
		<-done
		_ = bm.Close()
		_ = store.Close()
	})
	return &daemon{eng: eng, bm: bm, mcp: srv, addr: hs.Listener.Addr().String(), log: logs, f: f, ctx: fctx}
}
