package main

import (
	"bytes"
	"context"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// buildBinary builds browsertask into dir and returns its path.
func buildBinary(ctx context.Context, dir string) (string, error) {
	bin := filepath.Join(dir, "browsertask")
	cmd := exec.CommandContext(ctx, "go", "build", "-o", bin, ".")
	cmd.Dir = repoRoot()
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Run(); err != nil {
		return "", fmt.Errorf("go build: %v\n%s", err, stderr.String())
	}
	return bin, nil
}

// daemon is a `browsertask serve` process.
type daemon struct {
	cmd     *exec.Cmd
	addr    string
	started time.Time
	ready   time.Duration
	stderr  bytes.Buffer
}

// freeAddr returns a loopback address with a port that was free a moment ago.
func freeAddr() (string, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", err
	}
	defer ln.Close()
	return ln.Addr().String(), nil
}

// startServe starts `browsertask serve` on a free port with dbPath and waits
// until /mcp answers an initialize request; ready is the time from starting
// the process to that answer.
func startServe(ctx context.Context, bin, dbPath string, extra ...string) (*daemon, error) {
	addr, err := freeAddr()
	if err != nil {
		return nil, err
	}
	args := append([]string{"serve", "--addr", addr, "--db", dbPath, "--dev-templates", "--log-level", "warn"}, extra...)
	d := &daemon{cmd: exec.Command(bin, args...), addr: addr}
	d.cmd.Stderr = &d.stderr
	d.cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	d.started = time.Now()
	if err := d.cmd.Start(); err != nil {
		return nil, err
	}
	endpoint := "http://" + addr + "/mcp"
	hc := &http.Client{Timeout: 2 * time.Second}
	deadline := d.started.Add(20 * time.Second)
	for {
		if ok := probeMCP(hc, endpoint); ok {
			d.ready = time.Since(d.started)
			return d, nil
		}
		if time.Now().After(deadline) || ctx.Err() != nil {
			d.stop()
			return nil, fmt.Errorf("browsertask serve not ready at %s: %s", endpoint, d.stderr.String())
		}
		time.Sleep(time.Millisecond)
	}
}

// probeMCP reports whether endpoint answers an MCP initialize with 200.
func probeMCP(hc *http.Client, endpoint string) bool {
	body := `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18",` +
		`"capabilities":{},"clientInfo":{"name":"probe","version":"1"}}}`
	req, err := http.NewRequest(http.MethodPost, endpoint, strings.NewReader(body))
	if err != nil {
		return false
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	resp, err := hc.Do(req)
	if err != nil {
		return false
	}
	resp.Body.Close()
	return resp.StatusCode == http.StatusOK
}

// endpoint is the daemon's MCP URL.
func (d *daemon) endpoint() string { return "http://" + d.addr + "/mcp" }

// rssKB reads VmRSS of the daemon from /proc.
func (d *daemon) rssKB() (int, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", d.cmd.Process.Pid))
	if err != nil {
		return 0, err
	}
	for _, line := range strings.Split(string(b), "\n") {
		if rest, ok := strings.CutPrefix(line, "VmRSS:"); ok {
			return strconv.Atoi(strings.TrimSuffix(strings.TrimSpace(rest), " kB"))
		}
	}
	return 0, fmt.Errorf("no VmRSS in /proc/%d/status", d.cmd.Process.Pid)
}

// stop sends SIGTERM and waits (SIGKILL to the group after 10 s).
func (d *daemon) stop() {
	_ = d.cmd.Process.Signal(syscall.SIGTERM)
	done := make(chan struct{})
	go func() { _ = d.cmd.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		_ = syscall.Kill(-d.cmd.Process.Pid, syscall.SIGKILL)
		<-done
	}
}
