package browser

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"time"

	"github.com/go-rod/rod/lib/launcher"

	"github.com/browsertask/browsertask/engine"
)

// userDataPrefix starts the name of every temporary profile directory, so a
// later process can recognise and sweep the ones a crash left behind.
const userDataPrefix = "browsertask-chromium-"

// launchHangGuard is how long a launch may go without Chromium printing its
// DevTools URL (or a connect without an answer) before it is called hung.
// It is not a speed expectation: a launch normally takes well under a
// second, and the caller's context (a run's deadline, a cancelled request)
// ends a wait sooner. It only keeps a browser that neither answers nor
// exits from holding the launch forever; a fixed 30 s failed launches on
// a busy machine (load 25 beside 8 CPU burners, scripts/loaded) that were
// merely slow.
const launchHangGuard = 3 * time.Minute

// errNoBrowser explains the three ways to provide a browser.
var errNoBrowser = errors.New("no Chrome/Chromium browser found: install one (`apt install chromium` on Debian/Ubuntu, " +
	"`brew install --cask chromium` on macOS) or pass `--browser PATH|ws://host:port/...` (env BROWSERTASK_BROWSER)")

// findBinary returns the system Chrome/Chromium, or errNoBrowser.
func findBinary() (string, error) {
	if p, ok := launcher.LookPath(); ok {
		return p, nil
	}
	for _, p := range []string{"/usr/bin/chromium", "/usr/bin/chromium-browser", "/usr/lib/chromium/chromium"} {
		if st, err := os.Stat(p); err == nil && !st.IsDir() {
			return p, nil
		}
	}
	return "", errNoBrowser
}

// launchArgs returns Chromium's command line for a fresh profile in dir.
func launchArgs(dir string, headed bool, extra ...string) []string {
	args := []string{
		"--disable-gpu",
		"--disable-background-networking",
		"--disable-component-update",
		"--disable-sync",
		"--disable-breakpad",
		"--disable-crash-reporter",
		"--disable-default-apps",
		"--disable-dev-shm-usage",
		"--disable-features=Translate,MediaRouter,OptimizationHints,BackForwardCache",
		"--no-first-run",
		"--no-default-browser-check",
		"--password-store=basic",
		"--use-mock-keychain",
		"--remote-debugging-port=0",
		"--remote-allow-origins=*",
		"--window-size=1280,800",
		"--user-data-dir=" + dir,
	}
	if !headed {
		args = append(args, "--headless")
	}
	if os.Geteuid() == 0 {
		// Chromium refuses to start its sandbox as root.
		args = append(args, "--no-sandbox")
	}
	args = append(args, extra...)
	return append(args, "about:blank")
}

// process is a Chromium this Manager started.
type process struct {
	cmd *exec.Cmd
	dir string
	// keep leaves dir in place on kill (a persistent profile's).
	keep   bool
	wsURL  string
	exited chan struct{} // closed when the process has been reaped
}

// startProcess launches bin with a fresh profile under tempDir and waits for
// its DevTools URL. The caller owns the returned process and must kill it.
func startProcess(ctx context.Context, bin, tempDir string, headed bool, extra []string, log *slog.Logger) (*process, error) {
	return startProcessIn(ctx, bin, tempDir, "", headed, extra, log)
}

// startProcessIn is startProcess on a kept user-data directory when
// userDataDir is set (a persistent profile: kill leaves it in place).
func startProcessIn(ctx context.Context, bin, tempDir, userDataDir string, headed bool, extra []string, log *slog.Logger) (*process, error) {
	dir, keep := userDataDir, userDataDir != ""
	if !keep {
		var err error
		if dir, err = os.MkdirTemp(tempDir, userDataPrefix+strconv.Itoa(os.Getpid())+"-*"); err != nil {
			return nil, fmt.Errorf("create browser profile dir: %w", err)
		}
	}
	removeDir := func() {
		if !keep {
			_ = os.RemoveAll(dir)
		}
	}
	cmd := exec.Command(bin, launchArgs(dir, headed, extra...)...)
	setProcAttrs(cmd)
	cmd.Stdout = io.Discard
	stderr, err := cmd.StderrPipe()
	if err != nil {
		removeDir()
		return nil, err
	}
	p := &process{cmd: cmd, dir: dir, keep: keep, exited: make(chan struct{})}
	started := make(chan error, 1)
	engine.Go(ctx, log, "browser.process", func() {
		// The parent-death signal fires when the OS *thread* that started
		// the child exits, not the process. Pin this goroutine to its thread
		// for the browser's whole life so the runtime never retires it.
		runtime.LockOSThread()
		if err := cmd.Start(); err != nil {
			started <- err
			return
		}
		started <- nil
		_ = cmd.Wait()
		close(p.exited)
	}, func(rec *engine.Panic) {
		select {
		case started <- rec: // the launch fails instead of waiting forever
		default:
		}
	})
	if err := <-started; err != nil {
		removeDir()
		return nil, fmt.Errorf("start %s: %w", bin, err)
	}
	urls := make(chan string, 1)
	engine.Go(ctx, log, "browser.scanStderr", func() { scanStderr(stderr, urls, log) }, nil)
	timer := time.NewTimer(launchHangGuard)
	defer timer.Stop()
	select {
	case u := <-urls:
		p.wsURL = u
		return p, nil
	case <-p.exited:
		err = fmt.Errorf("%s exited before printing its DevTools URL", bin)
	case <-timer.C:
		err = fmt.Errorf("%s did not print its DevTools URL in %s: it looks hung (run `%s --headless --no-sandbox --dump-dom about:blank` to see why)", bin, launchHangGuard, bin)
	case <-ctx.Done():
		err = context.Cause(ctx)
	}
	p.kill()
	return nil, err
}

// scanStderr finds "DevTools listening on ws://…" and then keeps draining
// stderr (Chromium blocks if nobody reads it), logging at debug level.
func scanStderr(r io.Reader, urls chan<- string, log *slog.Logger) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64*1024), 1024*1024)
	found := false
	for sc.Scan() {
		line := sc.Text()
		if !found {
			if i := strings.Index(line, "ws://"); i >= 0 && strings.Contains(line, "DevTools listening") {
				found = true
				urls <- strings.TrimSpace(line[i:])
				continue
			}
		}
		if log != nil {
			log.Debug("chromium", "line", line)
		}
	}
}

// kill kills the process group, waits for the leader to be reaped (bounded)
// and removes the profile directory.
func (p *process) kill() {
	killTree(p.cmd.Process.Pid)
	select {
	case <-p.exited:
	case <-time.After(5 * time.Second):
	}
	if p.keep {
		return
	}
	// Children may still be exiting; the group kill reached them already.
	for i := 0; i < 20; i++ {
		if err := os.RemoveAll(p.dir); err == nil {
			return
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// alive reports whether the process is still running.
func (p *process) alive() bool {
	select {
	case <-p.exited:
		return false
	default:
		return true
	}
}

// sweepProfiles removes profile directories left by processes that are no
// longer alive (a daemon killed with kill -9 cannot clean up after itself).
func sweepProfiles(tempDir string, log *slog.Logger) {
	matches, _ := filepath.Glob(filepath.Join(tempDir, userDataPrefix+"*-*"))
	for _, m := range matches {
		rest := strings.TrimPrefix(filepath.Base(m), userDataPrefix)
		i := strings.IndexByte(rest, '-')
		if i <= 0 {
			continue
		}
		pid, err := strconv.Atoi(rest[:i])
		if err != nil || pid == os.Getpid() || pidAlive(pid) {
			continue
		}
		if err := os.RemoveAll(m); err == nil && log != nil {
			log.Info("removed stale browser profile", "dir", m, "pid", pid)
		}
	}
}
