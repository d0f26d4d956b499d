package acceptance

// The command line against the built binary, beside another process that
// shares its database.

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/browsertask/browsertask/internal/fixture"
)

// cli runs the built binary with args, a fresh HOME and no BROWSERTASK_*
// variables, and returns stdout, stderr and the exit code.
func cli(t *testing.T, stdin string, args ...string) (string, string, int) {
	t.Helper()
	cmd := exec.Command(bbBinary, args...)
	cmd.Env = []string{"HOME=" + t.TempDir(), "PATH=" + os.Getenv("PATH")}
	cmd.Stdin = strings.NewReader(stdin)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatalf("%v: %v", args, err)
	}
	return out.String(), errb.String(), code
}

// runJSON decodes a Run printed on stdout.
func runJSON(t *testing.T, out string) map[string]any {
	t.Helper()
	var r map[string]any
	if err := json.Unmarshal([]byte(out), &r); err != nil {
		t.Fatalf("stdout is not the Run JSON: %v\n%s", err, out)
	}
	return r
}

func TestCLICancelsARunOwnedByAnotherProcess(t *testing.T) {
	db := filepath.Join(t.TempDir(), "bt.db")
	srv := startServe(t, "--db", db) // another OS process executes the run
	out, _, code := cli(t, "", "run", "dev_echo", "--dev-templates", "--db", db, "--async", "--input", "sleepMs=200", "--input", "items=200")
	id := strings.TrimSpace(out)
	if code != 0 || id == "" {
		t.Fatalf("submit: exit %d %q", code, out)
	}
	show := func() map[string]any {
		out, errs, _ := cli(t, "", "show", id, "--db", db, "--dev-templates")
		if out == "" {
			t.Fatalf("show: %s", errs)
		}
		return runJSON(t, out)
	}
	// How soon the other process claims the run is not the promise: the
	// wait ends near the test's deadline (fixture.Context).
	ctx, cancel := fixture.Context(t)
	defer cancel()
	for r := show(); r["status"] != "running" || r["progress"].(map[string]any)["doneSteps"].(float64) < 2; r = show() {
		select {
		case <-ctx.Done():
			t.Fatalf("serve did not start the run: %v", r)
		case <-time.After(100 * time.Millisecond):
		}
	}
	start := time.Now()
	out, errs, code := cli(t, "", "cancel", id, "--db", db, "--dev-templates", "--reason", "stop it")
	var res map[string]any
	_ = json.Unmarshal([]byte(out), &res)
	if code != 0 || res["success"] != true || res["status"] != "canceled" {
		t.Fatalf("cancel: exit %d %s %s", code, out, errs)
	}
	r := show()
	if r["status"] != "canceled" || r["error"].(map[string]any)["errorCode"] != "RUN_CANCELED" {
		t.Fatalf("after cancel: %v", r)
	}
	// The owner notices (its next heartbeat, 200 ms here, or its next
	// checkpoint's compare-and-set, whichever comes first) and stops.
	stoppedLine := regexp.MustCompile(`msg="run stopped[^\n]*runId=` + id)
	for !stoppedLine.MatchString(srv.log()) {
		if time.Since(start) > 5*time.Second {
			t.Fatalf("serve did not stop the run within 5 s:\n%s", srv.logTail(30))
		}
		time.Sleep(50 * time.Millisecond)
	}
	t.Logf("owner stopped the run %v after the CLI cancel", time.Since(start).Round(time.Millisecond))
	done := r["progress"].(map[string]any)["doneSteps"]
	time.Sleep(600 * time.Millisecond)
	if again := show()["progress"].(map[string]any)["doneSteps"]; again != done {
		t.Fatalf("progress moved after cancel: %v -> %v", done, again)
	}
	if _, _, code := cli(t, "", "cancel", id, "--db", db, "--dev-templates"); code != 1 {
		t.Fatalf("second cancel: exit %d, want 1 (already canceled)", code)
	}
}

func TestCLIDoctor(t *testing.T) {
	db := filepath.Join(t.TempDir(), "bt.db")
	out, errs, code := cli(t, "", "doctor", "--browser", "/nonexistent/chromium", "--db", db, "--addr", "127.0.0.1:1")
	// The newest migration of the repository is the schema a fresh database
	// gets: the highest number, which the count need not reach (a branch may
	// keep a number free for another's migration).
	migrations, err := filepath.Glob(filepath.Join("..", "..", "db", "migrations", "*.sql"))
	if err != nil || len(migrations) == 0 {
		t.Fatalf("migrations: %v %v", migrations, err)
	}
	newest := 0
	for _, m := range migrations {
		n, err := strconv.Atoi(strings.SplitN(filepath.Base(m), "_", 2)[0])
		if err != nil {
			t.Fatalf("migration %s: %v", m, err)
		}
		newest = max(newest, n)
	}
	for _, want := range []string{"[FAIL] browser", "--browser /path/to/chromium", "apt-get install chromium", "ws://",
		"[ok  ] database  " + db, fmt.Sprintf("schema version %d, writable", newest), "[info] listener  nothing answers on 127.0.0.1:1", "claude mcp add", `"mcpServers"`} {
		if !strings.Contains(out, want) {
			t.Errorf("doctor without a browser: stdout lacks %q", want)
		}
	}
	if code != 1 || !strings.Contains(errs, "1 check(s) failed") {
		t.Fatalf("doctor without a browser: exit %d, stderr %q\n%s", code, errs, out)
	}
	fixture.NeedChromium(t)
	srv := startServe(t)
	out, errs, code = cli(t, "", "doctor", "--browser", "/usr/bin/chromium", "--db", db, "--addr", srv.addr)
	if code != 0 || !regexp.MustCompile(`\[ok  \] browser   (Headless)?Chrome/\d+`).MatchString(out) ||
		!strings.Contains(out, "a browsertask daemon answers on http://"+srv.addr) {
		t.Fatalf("doctor: exit %d\n%s\n%s", code, out, errs)
	}
	t.Logf("doctor:\n%s", strings.SplitN(out, "\nMCP", 2)[0])
}
