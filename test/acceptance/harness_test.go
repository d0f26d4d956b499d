package acceptance

// Black-box acceptance harness: builds the browsertask binary once, starts
// `serve` and `mcp` processes with fresh databases, and drives them with the
// go-sdk MCP client over stdio and Streamable HTTP.

import (
	"bufio"
	"flag"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/browsertask/browsertask/internal/fixture"
)

// bbBinary is the path of the binary TestMain built; set once before any
// test runs and never changed afterwards.
var bbBinary string

func TestMain(m *testing.M) {
	flag.Parse()
	if testing.Short() {
		// The edit-test loop (go test -short ./...) leaves the black-box
		// suite, which builds the binary and runs processes and browsers,
		// to CI and the full run.
		fmt.Println("test/acceptance: skipped in -short mode")
		os.Exit(0)
	}
	dir, err := os.MkdirTemp("", "browsertask-blackbox-")
	if err != nil {
		fmt.Fprintln(os.Stderr, "blackbox: temp dir:", err)
		os.Exit(1)
	}
	bbBinary = filepath.Join(dir, "browsertask")
	build := exec.Command("go", "build", "-o", bbBinary, "github.com/browsertask/browsertask")
	if out, err := build.CombinedOutput(); err != nil {
		fmt.Fprintf(os.Stderr, "blackbox: go build failed: %v\n%s", err, out)
		os.RemoveAll(dir)
		os.Exit(1)
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// bbDefaultArgs are the fast timings every test process starts with; a test's
// own flags come later on the command line and win.
var bbDefaultArgs = []string{
	"--dev-templates", "--log-level", "debug",
	"--lease-ms", "3000", "--heartbeat-ms", "200", "--poll-ms", "100",
	"--recovery-interval-ms", "300", "--shutdown-grace-ms", "500",
}

// proc is one running browsertask process.
type proc struct {
	t       testing.TB
	cmd     *exec.Cmd
	logPath string
	db      string
	addr    string // serve: host:port of the HTTP listener
	done    chan struct{}
	waitErr error
}

// hasFlag reports whether args set flag (as "--flag v" or "--flag=v").
func hasFlag(args []string, flag string) bool {
	for _, a := range args {
		if a == flag || strings.HasPrefix(a, flag+"=") {
			return true
		}
	}
	return false
}

// newProcCmd prepares a browsertask command in its own process group, with
// stderr to a per-process log file and a fresh database unless args name one.
func newProcCmd(t testing.TB, sub string, args []string) *proc {
	t.Helper()
	dir := t.TempDir()
	full := append([]string{sub}, bbDefaultArgs...)
	db := ""
	if !hasFlag(args, "--db") {
		db = filepath.Join(dir, "browsertask.db")
		full = append(full, "--db", db)
	} else {
		for i, a := range args {
			if a == "--db" && i+1 < len(args) {
				db = args[i+1]
			} else if strings.HasPrefix(a, "--db=") {
				db = strings.TrimPrefix(a, "--db=")
			}
		}
	}
	full = append(full, args...)
	logPath := filepath.Join(dir, sub+".stderr.log")
	f, err := os.Create(logPath)
	if err != nil {
		t.Fatalf("create log: %v", err)
	}
	cmd := exec.Command(bbBinary, full...)
	cmd.Stderr = f
	cmd.Env = append(os.Environ(), "XDG_DATA_HOME="+dir)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	p := &proc{t: t, cmd: cmd, logPath: logPath, db: db, done: make(chan struct{})}
	t.Cleanup(func() { f.Close() })
	return p
}

// watch reaps the process once started, so a killed process never lingers as
// a zombie (peers test liveness with kill(pid, 0)).
func (p *proc) watch() {
	go func() {
		p.waitErr = p.cmd.Wait()
		close(p.done)
	}()
}

// cleanup stops the process (SIGTERM, then SIGKILL of the group) and prints
// its log tail when the test failed.
func (p *proc) cleanup() {
	p.stop(3 * time.Second)
	if p.t.Failed() {
		p.t.Logf("---- tail of %s ----\n%s", filepath.Base(p.logPath), p.logTail(80))
	}
}

// stop sends SIGTERM and waits up to grace before killing the process group.
func (p *proc) stop(grace time.Duration) {
	if p.cmd.Process == nil {
		return
	}
	select {
	case <-p.done:
		return
	default:
	}
	_ = p.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-p.done:
	case <-time.After(grace):
		_ = syscall.Kill(-p.cmd.Process.Pid, syscall.SIGKILL)
		<-p.done
	}
}

// kill9 sends SIGKILL to the process only (not its group: its children must
// die on their own) and waits until it is reaped.
func (p *proc) kill9() {
	_ = p.cmd.Process.Signal(syscall.SIGKILL)
	ctx, cancel := fixture.Context(p.t)
	defer cancel()
	select {
	case <-p.done:
	case <-ctx.Done():
		p.t.Fatalf("process %d never reaped after SIGKILL", p.cmd.Process.Pid)
	}
}

// exited reports whether the process has ended.
func (p *proc) exited() bool {
	select {
	case <-p.done:
		return true
	default:
		return false
	}
}

// logTail returns the last n lines of the process's stderr.
func (p *proc) logTail(n int) string {
	b, _ := os.ReadFile(p.logPath)
	lines := strings.Split(strings.TrimRight(string(b), "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}

// log returns the whole stderr so far.
func (p *proc) log() string {
	b, _ := os.ReadFile(p.logPath)
	return string(b)
}

var listeningRE = regexp.MustCompile(`listening: MCP http://(\S+)/mcp`)

// startServe starts `browsertask serve` on a free loopback port and waits
// until /healthz answers.
func startServe(t testing.TB, args ...string) *proc {
	t.Helper()
	if !hasFlag(args, "--addr") {
		args = append([]string{"--addr", "127.0.0.1:0"}, args...)
	}
	p := newProcCmd(t, "serve", args)
	if err := p.cmd.Start(); err != nil {
		t.Fatalf("start serve: %v", err)
	}
	p.watch()
	t.Cleanup(p.cleanup)
	// How soon serve starts is not what the tests promise: the wait ends
	// near the test's deadline (fixture.Context).
	ctx, cancel := fixture.Context(t)
	defer cancel()
	for p.addr == "" {
		if m := listeningRE.FindStringSubmatch(p.log()); m != nil {
			p.addr = m[1]
			break
		}
		if p.exited() {
			t.Fatalf("serve exited before listening (%v):\n%s", p.waitErr, p.logTail(40))
		}
		select {
		case <-ctx.Done():
			t.Fatalf("serve did not print its listening line before the test's deadline:\n%s", p.logTail(40))
		case <-time.After(20 * time.Millisecond):
		}
	}
	for {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+p.addr+"/healthz", nil)
		if err != nil {
			t.Fatal(err)
		}
		resp, err := http.DefaultClient.Do(req)
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return p
			}
			err = fmt.Errorf("status %d", resp.StatusCode)
		}
		if p.exited() {
			t.Fatalf("serve exited before /healthz answered (%v):\n%s", p.waitErr, p.logTail(40))
		}
		select {
		case <-ctx.Done():
			t.Fatalf("serve /healthz not ready before the test's deadline: %v\n%s", err, p.logTail(40))
		case <-time.After(20 * time.Millisecond):
		}
	}
}

// mcpURL is the serve process's MCP endpoint.
func (p *proc) mcpURL() string { return "http://" + p.addr + "/mcp" }

// logLine reports whether one line of the process's stderr contains every
// one of parts.
func (p *proc) logLine(parts ...string) bool {
	sc := bufio.NewScanner(strings.NewReader(p.log()))
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		all := true
		for _, s := range parts {
			all = all && strings.Contains(sc.Text(), s)
		}
		if all {
			return true
		}
	}
	return false
}
