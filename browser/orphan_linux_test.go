//go:build linux

package browser

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/browsertask/browsertask/internal/fixture"
)

// TestHelperLaunchAndWait is not a test: run as a child process by
// TestNoOrphanAfterKill9, it launches a browser, prints its pid and waits
// to be killed.
func TestHelperLaunchAndWait(t *testing.T) {
	if os.Getenv("BROWSERTASK_HELPER") != "1" {
		t.Skip("helper process only")
	}
	m := NewManager(Options{TempDir: os.Getenv("BROWSERTASK_HELPER_DIR")})
	if _, err := m.Session(context.Background(), "sess_helper"); err != nil {
		fmt.Println("error", err)
		os.Exit(1)
	}
	fmt.Println("pid", m.PIDs()[0])
	time.Sleep(time.Minute)
}

// TestNoOrphanAfterKill9 kills a process that launched Chromium with
// SIGKILL (no chance to clean up) and checks the kernel took the browser
// down with it; the next Manager sweeps the profile it left behind.
func TestNoOrphanAfterKill9(t *testing.T) {
	fixture.NeedChromium(t)
	dir := t.TempDir()
	cmd := exec.Command(os.Args[0], "-test.run=^TestHelperLaunchAndWait$", "-test.v")
	cmd.Env = append(os.Environ(), "BROWSERTASK_HELPER=1", "BROWSERTASK_HELPER_DIR="+dir)
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = cmd.Process.Kill(); _ = cmd.Wait() }()
	pid := 0
	sc := bufio.NewScanner(out)
	for pid == 0 && sc.Scan() {
		if f := strings.Fields(sc.Text()); len(f) == 2 && f[0] == "pid" {
			pid, _ = strconv.Atoi(f[1])
		} else if len(f) > 0 && f[0] == "error" {
			t.Fatalf("helper: %s", sc.Text())
		}
	}
	if pid == 0 || len(GroupMembers(pid)) == 0 {
		t.Fatalf("helper did not report a running browser (pid %d)", pid)
	}
	go func() { // keep draining so the helper never blocks on stdout
		for sc.Scan() {
		}
	}()
	if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	_ = cmd.Wait()
	// How soon a loaded kernel finishes tearing the group down is not the
	// promise: the wait ends near the test's deadline (fixture.Context).
	ctx, cancel := fixture.Context(t)
	defer cancel()
	for len(GroupMembers(pid)) > 0 && ctx.Err() == nil {
		select {
		case <-ctx.Done():
		case <-time.After(50 * time.Millisecond):
		}
	}
	if left := GroupMembers(pid); len(left) > 0 {
		killTree(pid)
		t.Fatalf("Chromium survived kill -9 of its parent: %v", left)
	}
	m := NewManager(Options{TempDir: dir})
	defer m.Close()
	if entries, _ := os.ReadDir(dir); len(entries) != 0 {
		t.Fatalf("stale profile not swept: %v", entries)
	}
}
