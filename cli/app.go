package cli

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"strings"

	"github.com/browsertask/browsertask/browser"
	"github.com/browsertask/browsertask/engine"
	"github.com/browsertask/browsertask/internal/devtpl"
	"github.com/browsertask/browsertask/internal/wire"
	"github.com/browsertask/browsertask/mcp"
)

// app is one wired process (internal/wire: database, browser manager,
// engine, MCP server) with the configuration it was built from.
type app struct {
	cfg     *config
	log     *slog.Logger
	proc    *wire.Process
	browser *browser.Manager
	engine  *engine.Engine
	mcp     *mcp.Server
}

// newApp opens the database and wires everything (wire.Open); close
// releases it.
func newApp(ctx context.Context, cfg *config, stderr io.Writer) (*app, error) {
	log, err := newLogger(cfg, stderr)
	if err != nil {
		return nil, err
	}
	resolve, err := devResolver(cfg)
	if err != nil {
		return nil, err
	}
	model, err := cfg.newModel(log.With("component", "model"))
	if err != nil {
		return nil, err
	}
	if model != nil {
		log.Info("extract_structured sends the page text of pages with missing properties to the configured model", "model", fmt.Sprint(model))
	}
	var extra []engine.Template
	if cfg.devTemplates {
		extra = []engine.Template{devtpl.Echo{}, devtpl.Echo{Once: true}, devtpl.ToolJob{}}
	}
	p, err := wire.Open(ctx, wire.Options{
		DBPath: cfg.dbPath, Engine: cfg.engine, Model: model, ExtraTemplates: extra,
		Browser: browser.Options{Resolve: resolve, Browser: splitList(cfg.browsers), Headed: cfg.headed, BrowserContext: cfg.browserContext,
			OutageWait: cfg.browserOutageWait()},
		Server:  mcp.ServerOptions{Plugin: devPlugin(cfg)},
		Version: Version, Logger: log, UploadDirs: cfg.uploadDirs,
	})
	if err != nil {
		return nil, err
	}
	return &app{cfg: cfg, log: log, proc: p, browser: p.Browser, engine: p.Engine, mcp: p.MCP}, nil
}

// close releases the browser and the database (after the engine stopped).
func (a *app) close() { a.proc.Close() }

// httpHandler serves /mcp, /sse, a readiness probe and the dashboard at /
// (wire.Process.Handler), and makes addr the base of the live views of
// this process's runs.
func (a *app) httpHandler(addr string) (http.Handler, error) {
	a.engine.SetLiveBase(dashboardBase(addr))
	return a.handler(addr)
}

// handler is httpHandler for one more listener on addr (the live views
// stay where httpHandler put them).
func (a *app) handler(addr string) (http.Handler, error) {
	token := a.cfg.token
	if a.cfg.tokenFile != "" {
		b, err := os.ReadFile(a.cfg.tokenFile)
		if err != nil {
			return nil, fmt.Errorf("read --token-file: %w", err)
		}
		token = strings.TrimSpace(string(b))
	}
	bin, err := os.Executable()
	if err != nil {
		bin = "browsertask"
	}
	return a.proc.Handler(addr, wire.HTTPOptions{Token: token, AllowedOrigins: splitList(a.cfg.allowedOrigins),
		SessionTimeout: a.cfg.mcpSessionTimeout(), Binary: bin}), nil
}

// dashboardBase is the dashboard's base URL for a listener on addr; a
// wildcard host (0.0.0.0, ::) is reached on loopback.
func dashboardBase(addr string) string {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return "http://" + addr
	}
	if ip := net.ParseIP(host); ip != nil && ip.IsUnspecified() {
		host = "127.0.0.1"
		if ip.To4() == nil {
			host = "::1"
		}
	}
	return "http://" + net.JoinHostPort(host, port)
}

// openForCLI parses a subcommand's flags and opens the app (database and
// engine, not started: nothing is claimed or executed until the command
// runs the engine).
func openForCLI(ctx context.Context, name string, args []string, getenv func(string) string, stderr io.Writer, sub ...*cmdFlags) (*app, error) {
	cfg, err := parseFlags(name, args, getenv, stderr, sub...)
	if err != nil {
		return nil, err
	}
	return newApp(ctx, cfg, stderr)
}

// domainErr turns a domain error into a message with its recovery advice.
func domainErr(err error) error {
	var e *engine.Error
	if !errors.As(err, &e) {
		return err
	}
	return fmt.Errorf("%s: %s\n  recovery: %s", e.Code, e.Message, e.Recovery)
}

// printJSON writes v as indented JSON with a newline.
func printJSON(w io.Writer, v any) error {
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return err
	}
	_, err = fmt.Fprintf(w, "%s\n", b)
	return err
}
