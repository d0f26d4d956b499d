package cli

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/browsertask/browsertask/internal/wire"
	"github.com/browsertask/browsertask/web"
)

// clientConfig is what doctor prints for MCP clients: stdio clients start
// command with args (the same database and browser doctor checked, by
// absolute path), HTTP clients reach the daemon at mcpURL.
type clientConfig struct {
	command   string
	args      []string // "mcp" and the flags that differ from the defaults
	mcpURL    string
	withToken bool
	// note says why command is not this binary's path (a temporary build).
	note string
}

// newClientConfig works out the client configuration for this process's
// config. exe is this binary's path (os.Executable; "" when unknown).
// getenv gives HOME and XDG_DATA_HOME (the default database) and PATH.
func newClientConfig(cfg *config, exe string, getenv func(string) string) *clientConfig {
	c := &clientConfig{args: []string{"mcp"}, mcpURL: dashboardBase(cfg.addr) + "/mcp", withToken: cfg.tokenSet()}
	c.command, c.note = clientCommand(exe, getenv)
	if db := absPath(cfg.dbPath); db != absPath(defaultDBPath(getenv)) {
		c.args = append(c.args, "--db", db)
	}
	if cfg.browsers != "" {
		c.args = append(c.args, "--browser", browserArg(cfg.browsers))
	}
	if cfg.headed {
		c.args = append(c.args, "--headed")
	}
	return c
}

// clientCommand is the command an MCP client should start: this binary's
// absolute path, which works whatever PATH the client has (desktop apps
// do not see the shell's). A temporary build (go run, go test) vanishes,
// so then it is the browsertask found on PATH, or plain "browsertask"
// with a note saying how to install it.
func clientCommand(exe string, getenv func(string) string) (cmd, note string) {
	if exe != "" && !temporaryBuild(exe) {
		return absPath(exe), ""
	}
	const install = "install browsertask with `go install .` in its repository (it goes to $(go env GOPATH)/bin, which must be on PATH) or build it with `go build -o browsertask .`, then run its doctor again to print its absolute path"
	if found := lookPath("browsertask", getenv("PATH")); found != "" {
		return found, "this browsertask is a temporary build; the configuration uses " + found + ", found on PATH (to use this version, " + install + ")"
	}
	return "browsertask", "this browsertask is a temporary build (go run) and none is on PATH: " + install
}

// temporaryBuild reports whether exe is a binary the go command built in
// its temporary directory (go run, go test), gone once it exits.
func temporaryBuild(exe string) bool {
	return strings.Contains(filepath.ToSlash(exe), "/go-build")
}

// lookPath finds an executable file named name in the PATH list path, as
// an absolute path; "" when there is none.
func lookPath(name, path string) string {
	for _, dir := range filepath.SplitList(path) {
		if dir == "" {
			continue
		}
		f := filepath.Join(dir, name)
		if st, err := os.Stat(f); err == nil && st.Mode().IsRegular() && st.Mode().Perm()&0o111 != 0 {
			return absPath(f)
		}
	}
	return ""
}

// absPath is p made absolute (p itself when that fails).
func absPath(p string) string {
	if wire.IsPostgresURL(p) {
		return p
	}
	if a, err := filepath.Abs(p); err == nil {
		return a
	}
	return p
}

// browserArg is --browser for a client: local binary paths made absolute,
// ws:// endpoints and bare names as they are.
func browserArg(v string) string {
	parts := splitList(v)
	for i, b := range parts {
		if strings.Contains(b, "/") && !strings.Contains(b, "://") {
			parts[i] = absPath(b)
		}
	}
	return strings.Join(parts, ",")
}

// serveCommand is the command line that starts the daemon the HTTP
// configurations need, on the same address and database.
func (c *clientConfig) serveCommand() string {
	parts := []string{shellQuote(c.command), "serve", "--addr", shellQuote(strings.TrimPrefix(strings.TrimSuffix(c.mcpURL, "/mcp"), "http://"))}
	for _, a := range c.args[1:] {
		parts = append(parts, shellQuote(a))
	}
	return strings.Join(parts, " ")
}

// snippets are the client configurations (the dashboard shows the same),
// the stdio ones with this configuration's args.
func (c *clientConfig) snippets() []web.Snippet {
	return web.ClientSnippets(c.command, c.args, c.mcpURL, c.withToken)
}

// print writes the configurations under a heading.
func (c *clientConfig) print(w io.Writer) {
	fmt.Fprintln(w, "\nMCP client configuration:")
	fmt.Fprintf(w, "stdio clients start %s; the HTTP ones need the daemon running (%s).\n", strings.Join(append([]string{shellQuote(c.command)}, c.args...), " "), c.serveCommand())
	if c.note != "" {
		fmt.Fprintf(w, "note: %s\n", c.note)
	}
	for _, s := range c.snippets() {
		fmt.Fprintf(w, "\n# %s (%s)\n%s\n", s.Title, s.Where, s.Body)
	}
}
