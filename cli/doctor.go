package cli

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"time"

	"github.com/browsertask/browsertask/browser"
	"github.com/browsertask/browsertask/engine"
	"github.com/browsertask/browsertask/internal/wire"
)

const doctorUsage = `Usage: browsertask doctor [flags]

Checks what browsertask needs and prints how to connect an MCP client:
  browser   launches it once (or connects to --browser ws://...) and reports its version
  database  path, size, schema version, writable
  listener  whether a browsertask daemon answers on --addr
Exits 1 when the browser or the database is not usable.

Examples:
  browsertask doctor
  browsertask doctor --browser /usr/bin/chromium --db ./bt.db
  browsertask doctor --browser ws://127.0.0.1:9222/devtools/browser/...`

// cmdDoctor runs the checks and prints a report on stdout.
func cmdDoctor(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	sub := &cmdFlags{usage: doctorUsage}
	cfg, err := parseFlags("doctor", args, getenv, stderr, sub)
	if err != nil {
		return err
	}
	failed := 0
	check := func(name string, ok bool, detail string) {
		mark := "ok  "
		if !ok {
			mark = "FAIL"
			failed++
		}
		fmt.Fprintf(stdout, "[%s] %-9s %s\n", mark, name, detail)
	}
	ver, berr := doctorBrowser(ctx, cfg)
	if berr != nil {
		check("browser", false, berr.Error()+"\n"+
			"           Provide a browser in one of these ways:\n"+
			"             - install Chromium or Chrome (Debian/Ubuntu: apt-get install chromium)\n"+
			"             - pass its path: --browser /path/to/chromium (or BROWSERTASK_BROWSER)\n"+
			"             - connect to a running one: --browser ws://HOST:PORT/devtools/browser/ID")
	} else {
		check("browser", true, ver)
	}
	detail, derr := doctorDB(ctx, cfg)
	check("database", derr == nil, detail)
	exe, _ := os.Executable() // "": clientCommand names browsertask on PATH
	cc := newClientConfig(cfg, exe, getenv)
	fmt.Fprintf(stdout, "[info] %-9s %s\n", "listener", doctorListener(ctx, cfg.addr, cc.serveCommand()))
	cc.print(stdout)
	if failed > 0 {
		fmt.Fprintf(stderr, "browsertask doctor: %d check(s) failed\n", failed)
		return ExitError(1)
	}
	return nil
}

// doctorBrowser launches (or connects to) the browser once through the same
// manager the engine uses and returns its product and version.
func doctorBrowser(ctx context.Context, cfg *config) (string, error) {
	m := browser.NewManager(browser.Options{Browser: splitList(cfg.browsers), Headed: cfg.headed})
	defer m.Close()
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	start := time.Now()
	s, err := m.Session(ctx, "sess_doctor")
	if err != nil {
		return "", fmt.Errorf("no browser could be started: %v", engine.AsError(err).Message)
	}
	defer m.CloseSession(context.Background(), "sess_doctor")
	v, err := s.Browser().Version()
	if err != nil {
		return "", fmt.Errorf("the browser started but did not report its version: %v", err)
	}
	where := "launched"
	if info := m.Describe(); info.Mode == "remote" {
		where = "connected"
	}
	return fmt.Sprintf("%s (%s in %s)", v.Product, where, time.Since(start).Round(time.Millisecond)), nil
}

// doctorDB opens the database (creating and migrating it if needed), then
// reports path, size and schema version, and proves it writable with an
// owner row written and removed.
func doctorDB(ctx context.Context, cfg *config) (string, error) {
	store, err := wire.OpenStore(ctx, cfg.dbPath)
	if err != nil {
		return fmt.Sprintf("cannot open: %v", err), err
	}
	defer store.Close()
	schema, err := store.SchemaVersion(ctx)
	if err != nil {
		return fmt.Sprintf("%s: schema unreadable: %v", store.Path(), err), err
	}
	size, err := store.SizeBytes(ctx)
	if err != nil {
		return fmt.Sprintf("%s: size unreadable: %v", store.Path(), err), err
	}
	now := time.Now().UnixMilli()
	id := fmt.Sprintf("own_doctor_%d", now)
	writable := "writable"
	if err = store.RegisterOwner(ctx, engine.Owner{ID: id, PID: os.Getpid(), Host: "doctor", StartedAt: now, HeartbeatAt: now}); err == nil {
		err = store.ReleaseOwner(ctx, id, now)
	}
	if err != nil {
		writable = "NOT writable: " + err.Error()
	}
	return fmt.Sprintf("%s (%.1f MiB, schema version %d, %s)", store.Path(), float64(size)/(1<<20), schema, writable), err
}

// doctorListener says whether a daemon answers on addr; serve is the
// command line that would start one.
func doctorListener(ctx context.Context, addr, serve string) string {
	ctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+addr+"/healthz", nil)
	if err != nil {
		return fmt.Sprintf("%s: %v", addr, err)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return fmt.Sprintf("nothing answers on %s (start the daemon with: %s)", addr, serve)
	}
	resp.Body.Close()
	if resp.StatusCode == http.StatusOK {
		return fmt.Sprintf("a browsertask daemon answers on http://%s (dashboard http://%s/, MCP http://%s/mcp)", addr, addr, addr)
	}
	return fmt.Sprintf("something else answers on %s (HTTP %d); choose another --addr", addr, resp.StatusCode)
}
