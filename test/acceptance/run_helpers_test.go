package acceptance

// Helpers of the issue-4 black-box tests (sessions, templates, URL policy,
// browser robustness): a sync run call and a second Chromium reachable over
// CDP (--remote-debugging-port) for --browser ws://… and for crashing one of
// its tabs from outside.

import (
	"bufio"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/browsertask/browsertask/internal/fixture"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// runSync submits templateId in sync mode (timeoutMs 60000) and returns the
// answer and isError; sessionID may be "".
func runSync(t testing.TB, cs *sdk.ClientSession, templateID, sessionID string, inputs obj) (obj, bool) {
	t.Helper()
	args := obj{"templateId": templateID, "inputs": inputs, "options": obj{"mode": "sync", "timeoutMs": 60000}}
	if sessionID != "" {
		args["sessionId"] = sessionID
	}
	return call(t, cs, "run_task_template", args)
}

// runOK is runSync that requires status succeeded and returns the result.
func runOK(t testing.TB, cs *sdk.ClientSession, templateID, sessionID string, inputs obj) obj {
	t.Helper()
	run, isErr := runSync(t, cs, templateID, sessionID, inputs)
	if isErr || run["status"] != "succeeded" {
		t.Fatalf("%s: want succeeded, got isError=%v status=%v error=%v", templateID, isErr, run["status"], run["error"])
	}
	return sub(run, "result")
}

// runFails is runSync that requires status failed with code and returns the
// error object.
func runFails(t testing.TB, cs *sdk.ClientSession, templateID, sessionID string, inputs obj, code string) obj {
	t.Helper()
	run, isErr := runSync(t, cs, templateID, sessionID, inputs)
	if !isErr || run["status"] != "failed" || errCode(run) != code {
		t.Fatalf("%s: want failed %s, got isError=%v status=%v error=%v", templateID, code, isErr, run["status"], run["error"])
	}
	return sub(run, "error")
}

// startCDPChromium starts a Chromium of its own with
// --remote-debugging-port=0 and a fresh profile (plus extra flags) and
// returns its DevTools ws:// URL. It dies with the test (and with the test
// binary: parent-death signal).
func startCDPChromium(t testing.TB, extra ...string) string {
	t.Helper()
	fixture.NeedChromium(t)
	args := []string{"--headless", "--disable-gpu", "--disable-background-networking", "--disable-component-update",
		"--disable-sync", "--no-first-run", "--remote-debugging-port=0", "--remote-allow-origins=*",
		"--user-data-dir=" + filepath.Join(t.TempDir(), "profile")}
	if os.Geteuid() == 0 {
		args = append(args, "--no-sandbox")
	}
	args = append(append(args, extra...), "about:blank")
	cmd := exec.Command("/usr/bin/chromium", args...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatalf("start chromium: %v", err)
	}
	t.Cleanup(func() {
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		_ = cmd.Wait()
	})
	found := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stderr)
		sent := false
		for sc.Scan() {
			line := sc.Text()
			if i := strings.Index(line, "ws://"); i >= 0 && !sent && strings.Contains(line, "DevTools listening") {
				found <- strings.TrimSpace(line[i:])
				sent = true
			}
		}
	}()
	ctx, cancel := fixture.Context(t)
	defer cancel()
	select {
	case ws := <-found:
		return ws
	case <-ctx.Done():
		t.Fatal("the second Chromium never printed its DevTools URL")
	}
	return ""
}

// fileContains reports which of paths contain needle (missing files are
// skipped).
func fileContains(t testing.TB, needle string, paths ...string) []string {
	t.Helper()
	var hits []string
	for _, p := range paths {
		b, err := os.ReadFile(p)
		if err != nil {
			continue
		}
		if strings.Contains(string(b), needle) {
			hits = append(hits, p)
		}
	}
	return hits
}
