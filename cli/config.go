package cli

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/browsertask/browsertask/browser"
	"github.com/browsertask/browsertask/engine"
	"github.com/browsertask/browsertask/internal/extract/modelfill"
	"github.com/browsertask/browsertask/internal/httpguard"
	"github.com/browsertask/browsertask/internal/netpolicy"
	"github.com/browsertask/browsertask/internal/wire"
	"github.com/browsertask/browsertask/mcp"
)

// config is everything the serve and mcp commands can be told, by flag,
// then BROWSERTASK_* environment variable, then default.
type config struct {
	addr     string
	dbPath   string
	browsers string
	// outageWait is --browser-outage-wait (browser.Options.OutageWait; 0
	// here means fail at once).
	outageWait time.Duration
	// browserContext is --browser-context: "" or "default" (profiles.go).
	browserContext string
	headed         bool
	token          string
	tokenFile      string
	allowedOrigins string
	http           string
	logLevel       string
	logFormat      string
	devTemplates   bool
	// devResolve ("host=ip,…", with --dev-templates only) answers the
	// restricted-trust policy's DNS lookups for those names: a test double
	// for DNS, so black-box tests can present a local fixture as a public
	// host. Names not listed resolve normally.
	devResolve string

	engine engine.Config

	// ms holds the …-ms flags as given, in milliseconds; finish converts
	// them into engine's time.Durations (msFlags lists them), so
	// milliseconds stop at the command line.
	ms msValues

	// mcpSessionIdleMs closes an MCP HTTP session unused this long; 0
	// never does (see mcpSessionTimeout).
	mcpSessionIdleMs int64

	// The OpenAI-compatible model extract_structured asks for properties
	// a page's own data did not give (none when modelURL is empty).
	modelURL, modelName, modelKeyFile string
	// modelKeyEnv is BROWSERTASK_MODEL_KEY, used when --model-key-file is
	// not given. It is held in memory only: never logged, stored or put
	// in an error.
	modelKeyEnv string

	// uploadDirs are the --allow-upload-dir directories browser_upload
	// may read files from (repeatable; none: artifacts only).
	uploadDirs []string
}

// parseFlags parses args for cmd; it returns flag.ErrHelp after printing help.
// A CLI subcommand passes a *cmdFlags (cli_flags.go) to add its own flags,
// usage text and positional arguments.
func parseFlags(cmd string, args []string, getenv func(string) string, stderr io.Writer, sub ...*cmdFlags) (*config, error) {
	d := engine.DefaultConfig()
	c := &config{engine: d}
	fs := flag.NewFlagSet("browsertask "+cmd, flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.StringVar(&c.addr, "addr", "127.0.0.1:7788", "HTTP listen address for /mcp (loopback unless --token is set)")
	fs.StringVar(&c.dbPath, "db", defaultDBPath(getenv), "SQLite database file shared by every browsertask process, or a postgres:// URL shared by daemons on several machines")
	fs.StringVar(&c.browsers, "browser", "", "Chromium binary path or CDP endpoint(s) (ws://… or http://host:port answering /json/version), comma-separated; "+
		"an item capacity=N after an endpoint caps its open tabs, e.g. http://10.0.0.5:9222,capacity=8,http://10.0.0.6:9222,capacity=4 "+
		"(several endpoints form a pool: pages go to the one with the most room; one that stops answering is left out until it answers again) "+
		"(default: system Chromium)")
	fs.DurationVar(&c.outageWait, "browser-outage-wait", browser.DefaultOutageWait, "when every remote --browser endpoint is down at once, how long a run waits for one to answer again before it fails keeping its finished pages (0: fail at once)")
	fs.BoolVar(&c.headed, "headed", false, "show the browser window instead of running headless")
	fs.StringVar(&c.token, "token", "", "bearer token required on /mcp (required for a non-loopback --addr)")
	fs.StringVar(&c.tokenFile, "token-file", "", "file holding the bearer token")
	fs.StringVar(&c.allowedOrigins, "allowed-origins", "", "extra Origin values (scheme://host[:port]) allowed on /mcp and the dashboard, comma-separated")
	fs.Int64Var(&c.mcpSessionIdleMs, "mcp-session-idle-ms", mcp.DefaultSessionTimeout.Milliseconds(),
		"close an MCP HTTP session with no request (POST, open GET stream) for this long; 0 keeps sessions until DELETE")
	if cmd == "mcp" {
		fs.StringVar(&c.http, "http", "auto", "also serve HTTP on --addr: auto (if the port is free) or off")
	}
	fs.StringVar(&c.devResolve, "dev-resolve", "", "tests only (needs --dev-templates): host=ip pairs, comma-separated, answering the URL policy's DNS lookups")
	fs.BoolVar(&c.devTemplates, "dev-templates", false, "also register the browserless dev_echo and dev_echo_once templates (tests, benchmarks)")
	fs.StringVar(&c.modelURL, "model-url", "", "API root of an OpenAI-compatible model server extract_structured asks for properties a page's own data lacks, e.g. http://localhost:11434/v1 (Ollama); page text is sent to it. Empty: no model")
	fs.StringVar(&c.modelName, "model", "", "model name the --model-url server knows, e.g. llama3.2")
	fs.StringVar(&c.modelKeyFile, "model-key-file", "", "file holding the --model-url server's API key (else BROWSERTASK_MODEL_KEY; local servers need none)")
	fs.Func("allow-upload-dir", "a directory browser_upload may read files from (repeatable; default none: only artifacts are uploaded). "+
		"Paths must be absolute and stay under it, symbolic links included", func(v string) error {
		c.uploadDirs = append(c.uploadDirs, v)
		return nil
	})
	fs.StringVar(&c.logLevel, "log-level", "info", "log level: debug, info, warn, error (logs go to stderr)")
	fs.StringVar(&c.logFormat, "log-format", "text", "log format: text or json")
	e := &c.engine
	fs.IntVar(&e.MaxConcurrentRuns, "max-concurrent-runs", d.MaxConcurrentRuns, "runs executing at once across all processes on this database")
	fs.IntVar(&e.MaxURLs, "max-urls", d.MaxURLs, "most URLs one run may take")
	fs.IntVar(&e.MaxTabsPerSession, "max-tabs-per-session", d.MaxTabsPerSession, "most tabs one browser session may open")
	m := &c.ms
	fs.Int64Var(&m.syncTimeout, "sync-timeout-ms", d.SyncTimeout.Milliseconds(), "default and maximum timeoutMs of a sync run")
	fs.Int64Var(&m.asyncTimeout, "async-timeout-ms", d.AsyncTimeout.Milliseconds(), "default timeoutMs of an async or auto run")
	fs.Int64Var(&e.ArtifactMaxChunkSize, "artifact-max-chunk-size", d.ArtifactMaxChunkSize, "largest get_artifact chunk in bytes")
	fs.Int64Var(&m.artifactTTL, "artifact-ttl-ms", d.ArtifactTTL.Milliseconds(), "how long artifacts are kept")
	fs.Int64Var(&m.runTTL, "run-ttl-ms", d.RunTTL.Milliseconds(), "how long finished runs and idempotency keys are kept")
	fs.Int64Var(&m.autoSyncBudget, "auto-sync-budget-ms", d.AutoSyncBudget.Milliseconds(), "how long mode auto waits before answering async")
	fs.Int64Var(&m.taskPollInterval, "task-poll-interval-ms", d.TaskPollInterval.Milliseconds(), "pollInterval suggested to task clients")
	fs.Int64Var(&m.maxTaskTTL, "max-task-ttl-ms", d.MaxTaskTTL.Milliseconds(), "largest task ttl granted")
	fs.Int64Var(&m.sessionIdleTTL, "session-idle-ttl-ms", d.SessionIdleTTL.Milliseconds(), "a browser session unused this long is closed")
	fs.Int64Var(&m.inputTimeout, "input-timeout-ms", d.QuestionTimeout.Milliseconds(), "how long a run waits for an answer it asked for (a one-time code, a confirmation) before failing with RUN_TIMEOUT")
	fs.Int64Var(&e.MaxInlineBytes, "max-inline-bytes", d.MaxInlineBytes, "budget of a tool answer in bytes: a larger inline result is cut to whole items (the artifact has them all), list_task_runs rows carry no result")
	fs.DurationVar(&e.HistoryTTL, "history-ttl", d.HistoryTTL, "how long the history of a run (template, status, times, counts, error, inputs summary, artifact ids) is kept after the run itself is forgotten (--run-ttl-ms)")
	fs.IntVar(&e.MaxAttempts, "max-attempts", d.MaxAttempts, "a run whose executions end with their process gone (crash, kill -9) this many times fails instead of being recovered again")
	fs.StringVar(&e.TrustLevel, "trust", d.TrustLevel, "trust level: local or restricted")
	fs.StringVar(&e.UserAgent, "user-agent", "", "User-Agent of page requests when a run's inputs name none (both paths; default: the browser's own, browsertask's over HTTP)")
	fs.BoolVar(&e.AllowProfilesRestricted, "allow-profiles-restricted", false, "let runs use a browser profile (profile) under --trust restricted")
	fs.StringVar(&c.browserContext, "browser-context", "", `"default": runs open tabs in the --browser endpoint's own signed-in context (your Chrome) instead of an incognito one, and close only their own tabs`)
	fs.BoolVar(&e.AllowFileURLs, "allow-file-urls", false, "allow file: URLs (trust local only)")
	fs.Int64Var(&m.lease, "lease-ms", d.LeaseDuration.Milliseconds(), "run lease length; a dead process's runs are recovered after it")
	fs.Int64Var(&m.heartbeat, "heartbeat-ms", d.HeartbeatInterval.Milliseconds(), "lease heartbeat and remote-cancel poll interval")
	fs.Int64Var(&m.grace, "shutdown-grace-ms", d.ShutdownGrace.Milliseconds(), "how long running runs may finish after SIGINT/SIGTERM")
	fs.Int64Var(&m.poll, "poll-ms", d.PollInterval.Milliseconds(), "how often queued runs of other processes are looked for")
	fs.Int64Var(&m.recovery, "recovery-interval-ms", d.RecoveryInterval.Milliseconds(), "how often expired leases are recovered")
	fs.Int64Var(&m.janitor, "janitor-interval-ms", d.JanitorInterval.Milliseconds(), "how often expired runs and artifacts are purged")
	shared := map[string]bool{}
	fs.VisitAll(func(f *flag.Flag) { shared[f.Name] = true })
	if len(sub) > 0 {
		err := sub[0].parse(fs, c, args, getenv, stderr, shared)
		if err == nil {
			err = checkDB(c.dbPath, getenv)
		}
		c.engine.ProfilesDir = profilesDir(c.dbPath, getenv)
		return c, err
	}
	fs.SetOutput(io.Discard)
	fs.Usage = func() {}
	if err := fs.Parse(args); err != nil {
		if isHelp(err) {
			fmt.Fprintf(stderr, "Usage: browsertask %s [flags]\n\nEvery flag can also be set as BROWSERTASK_<FLAG> (dashes as underscores), e.g. BROWSERTASK_MAX_CONCURRENT_RUNS=2.\n\nFlags:\n", cmd)
			fs.SetOutput(stderr)
			fs.PrintDefaults()
			return nil, err
		}
		return nil, flagError(fs, err, fmt.Sprintf("Usage: browsertask %s [flags]   (browsertask %s --help for more)", cmd, cmd))
	}
	if fs.NArg() > 0 {
		return nil, fmt.Errorf("unexpected argument %q (see browsertask %s --help)", fs.Arg(0), cmd)
	}
	if err := applyEnv(fs, c, getenv, shared); err != nil {
		return c, err
	}
	if err := checkDB(c.dbPath, getenv); err != nil {
		return c, err
	}
	c.engine.ProfilesDir = profilesDir(c.dbPath, getenv)
	return c, nil
}

// checkDB refuses an empty --db (or BROWSERTASK_DB): an unset shell
// variable in `--db "$URL"` would otherwise open a database named after
// the working directory.
func checkDB(v string, getenv func(string) string) error {
	if strings.TrimSpace(v) == "" {
		return fmt.Errorf("--db is empty: give a SQLite file (the default is %s) or a postgres:// URL, or leave --db out", defaultDBPath(getenv))
	}
	return nil
}

// profilesDir is where browser profiles' directories live: beside the
// SQLite database every process on the machine shares, or, with a
// PostgreSQL URL (no directory of its own), in the data directory of the
// default database ($XDG_DATA_HOME/browsertask/profiles). A profile's
// Chromium directory is on the disk of the machine that runs its browser:
// daemons on several machines share a profile only through a shared
// filesystem.
func profilesDir(dbPath string, getenv func(string) string) string {
	if wire.IsPostgresURL(dbPath) {
		return filepath.Join(filepath.Dir(defaultDBPath(getenv)), "profiles")
	}
	return filepath.Join(filepath.Dir(dbPath), "profiles")
}

// applyEnv sets every shared flag not given on the command line from its
// BROWSERTASK_* variable, then validates the config.
func applyEnv(fs *flag.FlagSet, c *config, getenv func(string) string, shared map[string]bool) error {
	set := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { set[f.Name] = true })
	var envErr error
	fs.VisitAll(func(f *flag.Flag) {
		if set[f.Name] || envErr != nil || !shared[f.Name] {
			return
		}
		name := "BROWSERTASK_" + strings.ToUpper(strings.ReplaceAll(f.Name, "-", "_"))
		if v := getenv(name); v != "" {
			if err := fs.Set(f.Name, v); err != nil {
				envErr = fmt.Errorf("%s=%q: %v", name, v, err)
			}
		}
	})
	if envErr != nil {
		return envErr
	}
	c.modelKeyEnv = strings.TrimSpace(getenv("BROWSERTASK_MODEL_KEY"))
	return c.finish()
}

// browserOutageWait is --browser-outage-wait as browser.Options has it.
func (c *config) browserOutageWait() time.Duration {
	if c.outageWait == 0 {
		return -1
	}
	return c.outageWait
}

// finish validates values and derives durations.
func (c *config) finish() error {
	e := &c.engine
	if e.TrustLevel != netpolicy.Local && e.TrustLevel != netpolicy.Restricted {
		return fmt.Errorf("--trust must be local or restricted, got %q", e.TrustLevel)
	}
	if c.browserContext != "" && c.browserContext != browser.DefaultContext {
		return fmt.Errorf("--browser-context must be empty or %q, got %q", browser.DefaultContext, c.browserContext)
	}
	if e.MaxConcurrentRuns < 1 {
		return fmt.Errorf("--max-concurrent-runs must be >= 1, got %d", e.MaxConcurrentRuns)
	}
	if c.ms.inputTimeout < 1 {
		return fmt.Errorf("--input-timeout-ms must be >= 1 (milliseconds a run waits for an answer), got %d", c.ms.inputTimeout)
	}
	if e.HistoryTTL <= 0 {
		return fmt.Errorf("--history-ttl must be a positive duration such as 168h (7 days), got %v", e.HistoryTTL)
	}
	if e.MaxInlineBytes < engine.MinInlineBytes {
		return fmt.Errorf("--max-inline-bytes must be >= %d (bytes of a tool answer), got %d", engine.MinInlineBytes, e.MaxInlineBytes)
	}
	if c.mcpSessionIdleMs < 0 {
		return fmt.Errorf("--mcp-session-idle-ms must be >= 0 (0 keeps sessions until the client deletes them), got %d", c.mcpSessionIdleMs)
	}
	for _, o := range splitList(c.allowedOrigins) {
		if _, err := httpguard.ParseOrigin(o); err != nil {
			return fmt.Errorf("--allowed-origins: %v", err)
		}
	}
	if err := c.checkModel(); err != nil {
		return err
	}
	if c.outageWait < 0 {
		return fmt.Errorf("--browser-outage-wait must be >= 0 (a duration such as 2m; 0 fails at once), got %v", c.outageWait)
	}
	if _, err := browser.ParseBrowserList(splitList(c.browsers)); err != nil {
		return fmt.Errorf("--browser: %v", err)
	}
	if c.http != "" && c.http != "auto" && c.http != "off" {
		return fmt.Errorf("--http must be auto or off, got %q", c.http)
	}
	return c.ms.into(e)
}

// mcpSessionTimeout is --mcp-session-idle-ms as mcp.HTTPOptions wants it:
// negative for never.
func (c *config) mcpSessionTimeout() time.Duration {
	if c.mcpSessionIdleMs == 0 {
		return -1
	}
	return time.Duration(c.mcpSessionIdleMs) * time.Millisecond
}

// defaultDBPath is $XDG_DATA_HOME/browsertask/browsertask.db, falling back
// to ~/.local/share.
func defaultDBPath(getenv func(string) string) string {
	base := getenv("XDG_DATA_HOME")
	if base == "" {
		home := getenv("HOME")
		if home == "" {
			home = "."
		}
		base = filepath.Join(home, ".local", "share")
	}
	return filepath.Join(base, "browsertask", "browsertask.db")
}

// isHelp reports whether err is the flag package's help request.
func isHelp(err error) bool { return errors.Is(err, flag.ErrHelp) }

// tokenSet reports whether a token was configured (flag or file).
func (c *config) tokenSet() bool { return c.token != "" || c.tokenFile != "" }

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

// splitList is how every comma-separated flag value is read (--browser,
// --allowed-origins, --dev-resolve): items trimmed, empty items dropped.
func splitList(v string) []string {
	var out []string
	for _, item := range strings.Split(v, ",") {
		if item = strings.TrimSpace(item); item != "" {
			out = append(out, item)
		}
	}
	return out
}

// checkModel validates the model flags without contacting the server.
func (c *config) checkModel() error {
	if c.modelURL == "" {
		if c.modelName != "" || c.modelKeyFile != "" {
			return errors.New("--model and --model-key-file need --model-url: give the API root of an OpenAI-compatible server, e.g. --model-url http://localhost:11434/v1")
		}
		return nil
	}
	if strings.TrimSpace(c.modelName) == "" {
		return errors.New("--model is required with --model-url: give the model name the server knows, e.g. --model llama3.2")
	}
	if _, err := modelfill.NewOpenAI(modelfill.OpenAIConfig{BaseURL: c.modelURL, Model: c.modelName}); err != nil {
		return fmt.Errorf("--model-url: %v", err)
	}
	return nil
}

// newModel returns the model extract_structured asks, nil when
// --model-url is not set. The API key comes from --model-key-file, else
// BROWSERTASK_MODEL_KEY, and stays in memory. log receives the client's
// records (never the key or page text). Errors name the flag.
func (c *config) newModel(log *slog.Logger) (modelfill.Sampler, error) {
	if c.modelURL == "" {
		return nil, nil
	}
	key := c.modelKeyEnv
	if c.modelKeyFile != "" {
		b, err := os.ReadFile(c.modelKeyFile)
		if err != nil {
			return nil, fmt.Errorf("--model-key-file: %v; give a readable file holding only the API key", err)
		}
		if key = strings.TrimSpace(string(b)); key == "" {
			return nil, fmt.Errorf("--model-key-file: %s is empty; put the API key in it, or leave the flag out for a server that needs none", c.modelKeyFile)
		}
	}
	m, err := modelfill.NewOpenAI(modelfill.OpenAIConfig{BaseURL: c.modelURL, Model: c.modelName, APIKey: key, Logger: log})
	if err != nil {
		return nil, fmt.Errorf("--model-url: %v", err)
	}
	return m, nil
}
