package cli

import (
	"bufio"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"
)

// doctorBlock returns the body doctor printed under "# title (...)".
func doctorBlock(t *testing.T, out, title string) string {
	t.Helper()
	_, after, ok := strings.Cut(out, "\n# "+title+" (")
	if !ok {
		t.Fatalf("doctor printed no %q:\n%s", title, out)
	}
	_, body, _ := strings.Cut(after, "\n")
	body, _, _ = strings.Cut(body, "\n\n")
	return strings.TrimRight(body, "\n")
}

// stdioEntry decodes a stdio server entry of a printed configuration.
func stdioEntry(t *testing.T, body, key string) (command string, args []string) {
	t.Helper()
	var cfg map[string]map[string]struct {
		Command string   `json:"command"`
		Args    []string `json:"args"`
	}
	if err := json.Unmarshal([]byte(body), &cfg); err != nil {
		t.Fatalf("not JSON: %v\n%s", err, body)
	}
	e := cfg[key]["browsertask"]
	return e.Command, e.Args
}

func TestCLIDoctorConfigStartsTheCheckedDatabaseAndBrowser(t *testing.T) {
	db := filepath.Join(t.TempDir(), "sub", "bt.db")
	out, errs, code := cli(t, "", "doctor", "--browser", "/nonexistent/chromium", "--db", db, "--addr", "127.0.0.1:1")
	if code != 1 || !strings.Contains(out, "[FAIL] browser") || !strings.Contains(errs, "1 check(s) failed") {
		t.Fatalf("doctor: exit %d\n%s\n%s", code, out, errs)
	}
	exe, _ := os.Executable()
	wantCmd := exe
	if temporaryBuild(exe) { // go test's binary: PATH (empty here) has no browsertask
		wantCmd = "browsertask"
		if !strings.Contains(out, "\nnote: this browsertask is a temporary build (go run) and none is on PATH: install browsertask with `go install .`") {
			t.Fatalf("no note about the temporary build:\n%s", out)
		}
	}
	wantArgs := []string{"mcp", "--db", db, "--browser", "/nonexistent/chromium"}
	for _, c := range []struct{ title, key string }{{"Claude Desktop (stdio)", "mcpServers"}, {"VS Code (stdio)", "servers"}} {
		cmd, args := stdioEntry(t, doctorBlock(t, out, c.title), c.key)
		if cmd != wantCmd || !reflect.DeepEqual(args, wantArgs) {
			t.Fatalf("%s: command %q args %q, want %q %q", c.title, cmd, args, wantCmd, wantArgs)
		}
	}
	if got, want := doctorBlock(t, out, "Claude Code (stdio)"), "claude mcp add browsertask -- "+shellQuote(wantCmd)+" mcp --db "+db+" --browser /nonexistent/chromium"; got != want {
		t.Fatalf("Claude Code:\n %q\nwant\n %q", got, want)
	}
	var cursor map[string]any
	if err := json.Unmarshal([]byte(doctorBlock(t, out, "Cursor (HTTP, daemon running)")), &cursor); err != nil ||
		!strings.Contains(out, "nothing answers on 127.0.0.1:1 (start the daemon with: "+shellQuote(wantCmd)+" serve --addr 127.0.0.1:1 --db "+db+" --browser /nonexistent/chromium)") {
		t.Fatalf("HTTP configuration and the daemon's command line: %v\n%s", err, out)
	}
}

func TestDoctorClientCommand(t *testing.T) {
	home := t.TempDir()
	env := map[string]string{"HOME": home}
	getenv := func(k string) string { return env[k] }
	cfg, err := parseFlags("doctor", nil, getenv, &strings.Builder{})
	if err != nil {
		t.Fatal(err)
	}
	// This binary, by absolute path (quoted for the shell), with no flags
	// when doctor checked the defaults.
	c := newClientConfig(cfg, "/opt/my tools/browsertask", getenv)
	if c.command != "/opt/my tools/browsertask" || !reflect.DeepEqual(c.args, []string{"mcp"}) || c.note != "" {
		t.Fatalf("defaults: %+v", c)
	}
	for _, s := range c.snippets() {
		if s.ID == "claude-code-stdio" && s.Body != "claude mcp add browsertask -- '/opt/my tools/browsertask' mcp" {
			t.Fatalf("claude code: %q", s.Body)
		}
		if s.ID == "claude-desktop-stdio" && s.Body != "{\n  \"mcpServers\": {\n    \"browsertask\": {\"command\": \"/opt/my tools/browsertask\", \"args\": [\"mcp\"]}\n  }\n}" {
			t.Fatalf("claude desktop:\n%s", s.Body)
		}
	}
	// A relative --db and browser path are made absolute: a client starts
	// the server in a directory of its own.
	cfg.dbPath, cfg.browsers = "rel/bt.db", "bin/chromium,ws://127.0.0.1:9222/devtools/browser/x"
	c = newClientConfig(cfg, "/opt/bt/browsertask", getenv)
	wd, _ := os.Getwd()
	want := []string{"mcp", "--db", filepath.Join(wd, "rel/bt.db"), "--browser", filepath.Join(wd, "bin/chromium") + ",ws://127.0.0.1:9222/devtools/browser/x"}
	if !reflect.DeepEqual(c.args, want) {
		t.Fatalf("args %q, want %q", c.args, want)
	}
	// A go run build vanishes: the browsertask on PATH is used instead.
	bin := t.TempDir()
	if err := os.WriteFile(filepath.Join(bin, "browsertask"), []byte("#!/bin/sh\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	env["PATH"] = "/nonexistent" + string(filepath.ListSeparator) + bin
	c = newClientConfig(cfg, "/tmp/go-build1234/b001/exe/browsertask", getenv)
	if c.command != filepath.Join(bin, "browsertask") || !strings.Contains(c.note, "found on PATH") {
		t.Fatalf("go run build: %+v", c)
	}
}

// TestCLIDoctorConfigWorksAsPrinted builds browsertask, runs its doctor,
// then starts the Claude Desktop configuration's command exactly as
// printed and initializes an MCP session with it over stdio.
func TestCLIDoctorConfigWorksAsPrinted(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary")
	}
	goBin, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go command to build browsertask")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	bin := filepath.Join(t.TempDir(), "browsertask")
	build := exec.CommandContext(ctx, goBin, "build", "-o", bin, "github.com/browsertask/browsertask")
	if b, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, b)
	}
	db := filepath.Join(t.TempDir(), "bt.db")
	doctor := exec.CommandContext(ctx, bin, "doctor", "--db", db, "--browser", "/nonexistent/chromium", "--addr", "127.0.0.1:1")
	doctor.Env = append(os.Environ(), "HOME="+t.TempDir())
	out, _ := doctor.Output() // exits 1: no browser at that path
	command, args := stdioEntry(t, doctorBlock(t, string(out), "Claude Desktop (stdio)"), "mcpServers")
	if command != bin || !reflect.DeepEqual(args, []string{"mcp", "--db", db, "--browser", "/nonexistent/chromium"}) {
		t.Fatalf("printed command %q %q\n%s", command, args, out)
	}

	// Doctor created the database; the server must create it again where
	// doctor checked it. The client starts it from a directory of its own.
	for _, f := range []string{db, db + "-wal", db + "-shm"} {
		if err := os.Remove(f); err != nil && !os.IsNotExist(err) {
			t.Fatal(err)
		}
	}
	srv := exec.CommandContext(ctx, command, args...)
	srv.Dir = t.TempDir()
	srv.Env = append(os.Environ(), "HOME="+t.TempDir(), "BROWSERTASK_HTTP=off")
	stdin, _ := srv.StdinPipe()
	stdout, _ := srv.StdoutPipe()
	if err := srv.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() {
		stdin.Close()
		done := make(chan struct{})
		go func() { _ = srv.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(20 * time.Second):
			_ = srv.Process.Kill()
			<-done
		}
	}()
	if _, err := stdin.Write([]byte(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"doctor-test","version":"1"}}}` + "\n")); err != nil {
		t.Fatal(err)
	}
	line, err := bufio.NewReader(stdout).ReadString('\n')
	if err != nil {
		t.Fatalf("no answer to initialize: %v", err)
	}
	var resp struct {
		Result struct {
			ServerInfo struct{ Name string } `json:"serverInfo"`
		} `json:"result"`
	}
	if err := json.Unmarshal([]byte(line), &resp); err != nil || resp.Result.ServerInfo.Name != "browsertask" {
		t.Fatalf("initialize answer %q (%v)", line, err)
	}
	if _, err := os.Stat(db); err != nil {
		t.Fatalf("the server should use the database doctor checked: %v", err)
	}
}
