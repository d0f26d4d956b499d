package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/browsertask/browsertask/internal/fixture"
)

// TestCLILoginSecondChanceOnARealTerminal logs in from a terminal to a
// site asking for a one-time code: a mistyped code is asked for again,
// the prompt quoting the site's message, and the right one logs in.
func TestCLILoginSecondChanceOnARealTerminal(t *testing.T) {
	fixture.NeedChromium(t)
	srv := fixture.New(t)
	master, slave := openPTY(t)
	defer master.Close()
	db := filepath.Join(t.TempDir(), "bt.db")
	args, _ := json.Marshal([]string{"run", "login", "--session", "new", "--db", db, "--browser", "/usr/bin/chromium",
		"--input", "url=" + srv.URL("/login-otp/b"), "--input", "username=" + fixture.LoginUser, "--input", "password=" + fixture.LoginPassword})
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, os.Args[0], "-test.run=^TestCLIHelperProcess$", "-test.count=1")
	cmd.Env = append(os.Environ(), "BT_CLI_HELPER_ARGS="+string(args), "HOME="+t.TempDir())
	var stdout bytes.Buffer
	cmd.Stdin, cmd.Stdout, cmd.Stderr = slave, &stdout, slave
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	screen := newSignalBuffer()
	copied := make(chan struct{})
	go func() { defer close(copied); _, _ = io.Copy(screen, master) }()
	exited := make(chan struct{})
	var waitErr error
	go func() { defer close(exited); waitErr = cmd.Wait() }()
	typeHidden := func(code string) {
		for echoOn(t, slave) {
			select {
			case <-exited:
				t.Fatalf("the command ended at the prompt:\n%s", screen)
			case <-time.After(5 * time.Millisecond):
			}
		}
		if _, err := master.Write([]byte(code + "\n")); err != nil {
			t.Fatal(err)
		}
	}
	screen.waitFor(t, regexp.MustCompile(`asks for a one-time code to finish logging in as alice[^\n]*\(hidden\): `), exited)
	typeHidden("000000")
	screen.waitFor(t, regexp.MustCompile(`did not accept the one-time code: it says "Invalid code"\. Enter a new code to log in as alice \(attempt 2 of 3\)[^\n]*\(hidden\): `), exited)
	typeHidden(fixture.OTPCode)
	<-exited
	slave.Close()
	<-copied
	if waitErr != nil {
		t.Fatalf("login: %v\n%s\n%s", waitErr, stdout.String(), screen)
	}
	var r struct {
		Status string         `json:"status"`
		Result map[string]any `json:"result"`
	}
	if err := json.Unmarshal(stdout.Bytes(), &r); err != nil || r.Status != "succeeded" || r.Result["oneTimeCode"] != true {
		t.Fatalf("run %v %+v\n%s", err, r, screen)
	}
	if shown := screen.String(); strings.Contains(shown, fixture.OTPCode) || strings.Contains(shown, "000000") {
		t.Fatalf("a code was echoed:\n%s", shown)
	}
}
