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
	"time"

	"github.com/browsertask/browsertask/browser"
	"github.com/browsertask/browsertask/db"
	"github.com/browsertask/browsertask/engine"
	"github.com/browsertask/browsertask/internal/devtpl"
	"github.com/browsertask/browsertask/mcp"
	"github.com/browsertask/browsertask/templates"
	"github.com/browsertask/browsertask/web"
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
	browsers := splitList(cfg.browsers)
	resolve, err := devResolver(cfg)
	if err != nil {
		store.Close()
		return nil, err
	}
	bm := browser.NewManager(browser.Options{
		Resolve: resolve,
		Browser: browsers, Headed: cfg.headed, Logger: log.With("component", "browser"),
		MaxTabsPerSession: cfg.engine.MaxTabsPerSession,
		// Every request of every tab is held to the URL policy (README, "Security model").
		TrustLevel: cfg.engine.TrustLevel, AllowFileURLs: cfg.engine.AllowFileURLs,
	})
	model, err := cfg.newModel(log.With("component", "model"))
	if err != nil {
		bm.Close()
		store.Close()
		return nil, err
	}
	tpls := templates.All(bm)
	if model != nil {
		// extract_structured asks the configured model for what pages
		// lack; the others never use one.
		for i, t := range tpls {
			if t.Info().TemplateID == "extract_structured" {
				tpls[i] = templates.NewExtractStructured(bm, model)
			}
		}
		log.Info("extract_structured sends the page text of pages with missing properties to the configured model", "model", fmt.Sprint(model))
	}
	if cfg.devTemplates {
		tpls = append(tpls, devtpl.Echo{}, devtpl.Echo{Once: true}, devtpl.ToolJob{})
	}
	eng, err := engine.New(engine.Options{
		Store: store, Templates: tpls, Browser: bm,
		Config: cfg.engine, Logger: log.With("component", "engine"),
		Version: Version, ProtocolVersions: mcp.ProtocolVersions(),
	})
	if err != nil {
		bm.Close()
		store.Close()
		return nil, err
	}
	srv := mcp.NewServer(eng, mcp.ServerOptions{Version: Version, Logger: log.With("component", "mcp"), Fixtures: cfg.devTemplates})
	return &app{cfg: cfg, log: log, db: store, browser: bm, engine: eng, mcp: srv}, nil
}

// close releases the browser and the database (after the engine stopped).
func (a *app) close() {
	start := time.Now()
	if err := a.browser.Close(); err != nil {
		a.log.Warn("close browser", "err", err)
	}
	closed := time.Now()
	if err := a.db.Close(); err != nil {
		a.log.Warn("close database", "err", err)
	}
	a.log.Debug("closed", "browser", closed.Sub(start), "database", time.Since(closed))
}

// httpHandler serves /mcp, a readiness probe and the dashboard at /, and
// makes addr the base of the live views of this process's runs.
func (a *app) httpHandler(addr string) (http.Handler, error) {
	a.engine.SetLiveBase(dashboardBase(addr))
	return a.handler(addr)
}

// handler is httpHandler for one more listener on addr (the live views
// stay where httpHandler put them).
func (a *app) handler(addr string) (http.Handler, error) {
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
	origins := splitList(a.cfg.allowedOrigins)
	mux := http.NewServeMux()
	opts := mcp.HTTPOptions{Token: token, AllowedOrigins: origins, SessionTimeout: a.cfg.mcpSessionTimeout()}
	mux.Handle("/mcp", a.mcp.HTTPHandler(opts))
	mux.Handle("/sse", a.mcp.SSEHandler(opts)) // deprecated HTTP+SSE (2024-11-05)
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		fmt.Fprintln(w, "ok")
	})
	mux.Handle("/", a.dashboard(token, addr))
	return mux, nil
}

// dashboard builds the web dashboard for this app, served at "/" next to
// /mcp with the same token.
func (a *app) dashboard(token, addr string) *web.Dashboard {
	bin, err := os.Executable()
	if err != nil {
		bin = "browsertask"
	}
	return web.New(web.Options{
		Engine: a.engine, Live: a.browser, Token: token, AllowedOrigins: splitList(a.cfg.allowedOrigins), DBPath: a.cfg.dbPath, Addr: addr, Binary: bin,
		Version: Version, Logger: a.log.With("component", "web"),
	})
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

// peerAlive reports whether another process heartbeated recently.
func (a *app) peerAlive(ctx context.Context) bool {
	owners, err := a.db.ListOwners(ctx)
	if err != nil {
		return false
	}
	fresh := time.Now().Add(-3 * a.cfg.engine.HeartbeatInterval).UnixMilli()
	for _, o := range owners {
		if o.ID != a.engine.OwnerID() && o.HeartbeatAt >= fresh {
			return true
		}
	}
	return false
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
