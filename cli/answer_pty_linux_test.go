package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"
	"unsafe"
)

// TestCLIHelperProcess is not a test: TestCLIRunHiddenPromptOnARealTerminal
// runs the test binary as a browsertask process with this test only and
// BT_CLI_HELPER_ARGS set, so the command gets a real terminal as stdin.
func TestCLIHelperProcess(t *testing.T) {
	raw := os.Getenv("BT_CLI_HELPER_ARGS")
	if raw == "" {
		t.Skip("helper process for TestCLIRunHiddenPromptOnARealTerminal")
	}
	var args []string
	if err := json.Unmarshal([]byte(raw), &args); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(3)
	}
	err := Run(context.Background(), append([]string{"browsertask"}, args...), os.Getenv, os.Stdin, os.Stdout, os.Stderr)
	var ee ExitError
	switch {
	case errors.As(err, &ee):
		os.Exit(int(ee))
	case err != nil:
		fmt.Fprintln(os.Stderr, "browsertask:", err)
		os.Exit(1)
	}
	os.Exit(0)
}

// openPTY opens a pseudo-terminal pair: the master the test types on, the
// slave the command reads as its stdin.
func openPTY(t *testing.T) (master, slave *os.File) {
	t.Helper()
	master, err := os.OpenFile("/dev/ptmx", os.O_RDWR|syscall.O_NOCTTY, 0)
	if err != nil {
		t.Skipf("no pseudo-terminals here: %v", err)
	}
	var unlock int32
	if err := ioctl(master, syscall.TIOCSPTLCK, unsafe.Pointer(&unlock)); err != nil {
		t.Fatalf("unlock pty: %v", err)
	}
	var n uint32
	if err := ioctl(master, syscall.TIOCGPTN, unsafe.Pointer(&n)); err != nil {
		t.Fatalf("pty number: %v", err)
	}
	slave, err = os.OpenFile(fmt.Sprintf("/dev/pts/%d", n), os.O_RDWR|syscall.O_NOCTTY, 0)
	if err != nil {
		t.Fatalf("open pty slave: %v", err)
	}
	return master, slave
}

func ioctl(f *os.File, req uintptr, arg unsafe.Pointer) error {
	if _, _, errno := syscall.Syscall(syscall.SYS_IOCTL, f.Fd(), req, uintptr(arg)); errno != 0 {
		return errno
	}
	return nil
}

// echoOn reports whether the terminal echoes what is typed.
func echoOn(t *testing.T, f *os.File) bool {
	t.Helper()
	var st syscall.Termios
	if err := ioctl(f, syscall.TCGETS, unsafe.Pointer(&st)); err != nil {
		t.Fatalf("read terminal state: %v", err)
	}
	return st.Lflag&syscall.ECHO != 0
}

func TestCLIRunHiddenPromptOnARealTerminal(t *testing.T) {
	master, slave := openPTY(t)
	defer master.Close()
	db := filepath.Join(t.TempDir(), "bt.db")
	job := askJob(t, `[{"requestId":"otp","kind":"secret","message":"Enter the code"}]`)
	args, _ := json.Marshal([]string{"run", "dev_tool_job", "--dev-templates", "--db", db, "--inputs", job})
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, os.Args[0], "-test.run=^TestCLIHelperProcess$", "-test.count=1")
	cmd.Env = append(os.Environ(), "BT_CLI_HELPER_ARGS="+string(args), "HOME="+t.TempDir())
	var stdout bytes.Buffer
	cmd.Stdin, cmd.Stdout, cmd.Stderr = slave, &stdout, slave
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	screen := newSignalBuffer() // what the terminal shows
	copied := make(chan struct{})
	go func() { defer close(copied); _, _ = io.Copy(screen, master) }()
	exited := make(chan struct{})
	var waitErr error
	go func() { defer close(exited); waitErr = cmd.Wait() }()

	screen.waitFor(t, regexp.MustCompile(`Enter the code \(hidden\): `), exited)
	// Type only once echo is off: the prompt is printed just before.
	for echoOn(t, slave) {
		select {
		case <-exited:
			t.Fatalf("the command ended at the prompt:\n%s", screen)
		case <-time.After(5 * time.Millisecond):
		}
	}
	if _, err := master.Write([]byte("246810\n")); err != nil {
		t.Fatal(err)
	}
	<-exited
	echoBack := echoOn(t, slave)
	slave.Close()
	<-copied
	if waitErr != nil {
		t.Fatalf("run: %v\n%s\n%s", waitErr, stdout.String(), screen)
	}
	shown := screen.String()
	t.Logf("terminal: %q", shown)
	if strings.Contains(shown, "246810") || strings.Contains(stdout.String(), "246810") {
		t.Fatalf("the code was echoed or printed:\n%s", shown)
	}
	if !strings.Contains(shown, "answered otp (secret)") {
		t.Fatalf("terminal:\n%s", shown)
	}
	if a := answers(t, stdout.String())["otp"].(map[string]any); a["value"] != "***" {
		t.Fatalf("answer %v", a)
	}
	if !echoBack {
		t.Fatal("echo should be back on after the hidden prompt")
	}
}
