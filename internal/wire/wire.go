// Package wire builds one browsertask process from its parts — database,
// browser manager, templates, engine, MCP server — and serves it over
// HTTP (/mcp, /sse, /healthz and the dashboard, behind one token). It is
// the one place this is written: `browsertask serve`, `mcp` and every CLI
// command (cli) and the in-process benchmarks (bench) all call Open, so a
// benchmark measures the process a user runs, model, trust level, /sse and
// token included.
package wire

import (
	"context"
	"log/slog"
	"path/filepath"
	"time"

	"github.com/browsertask/browsertask/browser"
	"github.com/browsertask/browsertask/engine"
	"github.com/browsertask/browsertask/internal/extract/modelfill"
	"github.com/browsertask/browsertask/internal/pagetools"
	"github.com/browsertask/browsertask/mcp"
	"github.com/browsertask/browsertask/templates"
)

// Options say how to build a process. The zero value of each field is
// what `browsertask serve` uses without flags, except Engine, which must
// start from engine.DefaultConfig().
type Options struct {
	// DBPath is the SQLite file (created when missing) or a postgres://
	// URL (OpenStore).
	DBPath string
	// Engine is the engine's configuration. Its trust level, file-URL
	// switch and tab limit are also the browser manager's: they are one
	// setting, so they are taken from here, never set twice.
	Engine engine.Config
	// Browser configures the browser manager (which binary or CDP
	// endpoint, headed, resolver, temp dir). Its TrustLevel,
	// AllowFileURLs, MaxTabsPerSession and Logger are set by Open.
	Browser browser.Options
	// Model is the configured model endpoint extract_structured asks for
	// what pages lack (nil: none).
	Model modelfill.Sampler
	// ExtraTemplates are registered after the seven of templates.All (the
	// dev templates of --dev-templates).
	ExtraTemplates []engine.Template
	// Server configures the MCP server; its Version and Logger are set by
	// Open.
	Server mcp.ServerOptions
	// Version is the binary's version (serverInfo, the dashboard footer).
	Version string
	// Logger receives every component's logs, each with its "component".
	Logger *slog.Logger
	// UploadDirs are the directories browser_upload may read paths from
	// (--allow-upload-dir); none: only artifacts are uploaded.
	UploadDirs []string
}

// Process is one wired browsertask process. The engine is built but not
// started: the caller runs Engine.Run (a CLI command that only reads runs
// never does).
type Process struct {
	Log     *slog.Logger
	DB      Store
	Browser *browser.Manager
	Engine  *engine.Engine
	MCP     *mcp.Server
	dbPath  string
	version string
}

// Open opens the database and wires the browser manager, the templates,
// the engine and the MCP server. Close releases what it opened (after the
// engine stopped). Errors name what could not be opened.
func Open(ctx context.Context, o Options) (*Process, error) {
	log := o.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	store, err := OpenStore(ctx, o.DBPath)
	if err != nil {
		return nil, err
	}
	bo := o.Browser
	bo.Logger = log.With("component", "browser")
	bo.MaxTabsPerSession = o.Engine.MaxTabsPerSession
	// Every request of every tab is held to the URL policy (README,
	// "Security model").
	bo.TrustLevel, bo.AllowFileURLs = o.Engine.TrustLevel, o.Engine.AllowFileURLs
	bm := browser.NewManager(bo)
	tpls := append(templates.All(bm, o.Model), o.ExtraTemplates...)
	cfg := o.Engine
	if cfg.ProfilesDir == "" {
		// Profiles live beside the database every process shares.
		cfg.ProfilesDir = filepath.Join(filepath.Dir(o.DBPath), "profiles")
	}
	eng, err := engine.New(engine.Options{
		Store: store, Templates: tpls, Browser: bm,
		Config: cfg, Logger: log.With("component", "engine"),
		Version: o.Version, ProtocolVersions: mcp.ProtocolVersions(),
	})
	if err != nil {
		bm.Close()
		store.Close()
		return nil, err
	}
	bm.SetProfiles(eng)
	so := o.Server
	so.Version, so.Logger = o.Version, log.With("component", "mcp")
	pt := pagetools.New(eng, bm)
	if err := pt.AllowUploadDirs(o.UploadDirs); err != nil {
		bm.Close()
		store.Close()
		return nil, err
	}
	so.Extra = append(so.Extra, pt)
	srv := mcp.NewServer(eng, so)
	return &Process{Log: log, DB: store, Browser: bm, Engine: eng, MCP: srv, dbPath: o.DBPath, version: o.Version}, nil
}

// Close releases the browser and the database, in that order (call it
// after Engine.Run returned). Failures are logged, not returned: there is
// nothing left to do about them when a process ends.
func (p *Process) Close() {
	start := time.Now()
	if err := p.Browser.Close(); err != nil {
		p.Log.Warn("close browser", "err", err)
	}
	closed := time.Now()
	if err := p.DB.Close(); err != nil {
		p.Log.Warn("close database", "err", err)
	}
	p.Log.Debug("closed", "browser", closed.Sub(start), "database", time.Since(closed))
}
