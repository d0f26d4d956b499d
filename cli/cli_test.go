package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/browsertask/browsertask/internal/fixture"
)

// cli runs a browsertask command in this process, as main would, and
// returns stdout, stderr and the exit code run's error maps to.
func cli(t *testing.T, stdin string, args ...string) (string, string, int) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	var out, errb bytes.Buffer
	home := t.TempDir()
	getenv := func(k string) string {
		if k == "HOME" {
			return home
		}
		return ""
	}
	err := Run(ctx, append([]string{"browsertask"}, args...), getenv, strings.NewReader(stdin), &out, &errb)
	code := 0
	var ee ExitError
	switch {
	case errors.As(err, &ee):
		code = int(ee)
	case err != nil:
		code = 1
		errb.WriteString("browsertask: " + err.Error() + "\n")
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

func TestCLIRunPrintsTheTerminalRunAndExitCodes(t *testing.T) {
	db := filepath.Join(t.TempDir(), "bt.db")
	out, errs, code := cli(t, "", "run", "dev_echo", "--dev-templates", "--db", db, "--input", "items=3", "--input", "sleepMs=20", "--input", "content=hello")
	r := runJSON(t, out)
	if code != 0 || r["status"] != "succeeded" || r["progress"].(map[string]any)["doneSteps"].(float64) != 3 {
		t.Fatalf("exit %d, run %v\nstderr: %s", code, r, errs)
	}
	if !strings.Contains(errs, " succeeded 3/3") || strings.Contains(errs, "\r") {
		t.Fatalf("stderr (not a TTY) should have plain progress lines: %q", errs)
	}
	arts := r["artifactIds"].([]any)
	file := filepath.Join(t.TempDir(), "a.txt")
	if _, errs, code := cli(t, "", "artifact", arts[0].(string), "-o", file, "--db", db, "--dev-templates"); code != 0 {
		t.Fatalf("artifact: exit %d %s", code, errs)
	}
	if b, _ := os.ReadFile(file); string(b) != "hello" {
		t.Fatalf("artifact file %q", b)
	}
	// A failed run exits 1 and still prints the Run with its error.
	out, _, code = cli(t, "", "run", "dev_echo", "--dev-templates", "--db", db, "--input", "fail=true")
	if r := runJSON(t, out); code != 1 || r["status"] != "failed" || r["error"].(map[string]any)["errorCode"] != "STEP_EXECUTION_FAILED" {
		t.Fatalf("failed run: exit %d %v", code, r)
	}
	// A bad submission exits 1 with the tool's message on stderr.
	out, errs, code = cli(t, "", "run", "dev_echo", "--dev-templates", "--db", db, "--input", "sleepMs=soon")
	if code != 1 || out != "" || !strings.Contains(errs, "INVALID_PARAMETER: inputs.sleepMs") || !strings.Contains(errs, "recovery:") {
		t.Fatalf("bad input: exit %d out %q err %q", code, out, errs)
	}
	// --inputs from stdin.
	out, _, code = cli(t, `{"items":2}`, "run", "dev_echo", "--dev-templates", "--db", db, "--inputs", "-")
	if r := runJSON(t, out); code != 0 || r["progress"].(map[string]any)["totalSteps"].(float64) != 2 {
		t.Fatalf("--inputs -: exit %d %v", code, r)
	}
	out, _, _ = cli(t, "", "runs", "--db", db, "--dev-templates", "--status", "succeeded")
	if lines := strings.Split(strings.TrimSpace(out), "\n"); len(lines) != 3 || !strings.HasPrefix(lines[0], "RUN ID") {
		t.Fatalf("runs table:\n%s", out)
	}
}

func TestCLIRunBatchExtractPagesAndPartial(t *testing.T) {
	fixture.NeedChromium(t)
	srv := fixture.New(t)
	db := filepath.Join(t.TempDir(), "bt.db")
	out, errs, code := cli(t, "", "run", "batch_extract_pages", "--db", db, "--browser", "/usr/bin/chromium",
		"--input", "urls="+srv.URL("/page/1")+","+srv.URL("/page/2"))
	r := runJSON(t, out)
	if code != 0 || r["status"] != "succeeded" || r["progress"].(map[string]any)["doneSteps"].(float64) != 2 {
		t.Fatalf("batch_extract_pages: exit %d %v\n%s", code, r, errs)
	}
	out, errs, code = cli(t, "", "run", "batch_extract_pages", "--db", db, "--browser", "/usr/bin/chromium",
		"--input", "urls="+srv.URL("/page/3")+","+srv.URL("/status/500"))
	r = runJSON(t, out)
	if code != 2 || r["status"] != "partial_success" {
		t.Fatalf("partial run: exit %d, want 2; %v\n%s", code, r, errs)
	}
}

// stampedWriter records when it was first written to.
type stampedWriter struct {
	bytes.Buffer
	first time.Time
}

func (w *stampedWriter) Write(p []byte) (int, error) {
	if w.first.IsZero() {
		w.first = time.Now()
	}
	return w.Buffer.Write(p)
}

func TestCLIAsyncPrintsTheRunIDAtOnce(t *testing.T) {
	db := filepath.Join(t.TempDir(), "bt.db")
	// The run would sleep ten minutes: a CLI that waited for it would hit
	// the two-minute context and fail. "At once" is measured from the event
	// it is about, the run stored (its createdAt), to the runId on stdout:
	// a bound from the process start would only measure how busy the
	// machine is (3.6 s at load 20-35), while one from the submission
	// catches a CLI that waits for anything (an auto budget, a claim).
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	var out stampedWriter
	var errb bytes.Buffer
	home := t.TempDir()
	getenv := func(k string) string {
		if k == "HOME" {
			return home
		}
		return ""
	}
	err := Run(ctx, []string{"browsertask", "run", "dev_echo", "--dev-templates", "--db", db, "--async", "--input", "sleepMs=600000"},
		getenv, strings.NewReader(""), &out, &errb)
	if err != nil || !regexp.MustCompile(`^run_[0-9a-f-]{36}\n$`).MatchString(out.String()) {
		t.Fatalf("--async: %v, stdout %q, stderr %q", err, out.String(), errb.String())
	}
	if !strings.Contains(errb.String(), "stays queued") {
		t.Fatalf("--async without a daemon should say the run waits: %q", errb.String())
	}
	shown, _, _ := cli(t, "", "show", strings.TrimSpace(out.String()), "--db", db, "--dev-templates")
	r := runJSON(t, shown)
	if r["status"] != "queued" {
		t.Fatalf("show after --async: %v", r)
	}
	stored := time.UnixMilli(int64(r["createdAt"].(float64)))
	printed := out.first.Sub(stored)
	if printed >= 2*time.Second {
		t.Fatalf("--async printed the runId %v after the run was stored, want at once (< 2 s)", printed)
	}
	t.Logf("--async printed the runId %v after the run was stored", printed.Round(time.Millisecond))
}

func TestCLIHelpEverywhere(t *testing.T) {
	for _, cmd := range []string{"run", "runs", "show", "cancel", "answer", "artifact", "templates", "sessions", "doctor"} {
		_, errs, code := cli(t, "", cmd, "--help")
		if code != 0 || !strings.Contains(errs, "Usage: browsertask "+cmd) || !strings.Contains(errs, "Example") || !strings.Contains(errs, "--db") {
			t.Errorf("%s --help: exit %d\n%s", cmd, code, errs)
		}
	}
	out, _, code := cli(t, "", "help")
	if code != 0 || !strings.Contains(out, "browsertask doctor") || !strings.Contains(out, "browsertask run TEMPLATE") {
		t.Fatalf("help: %s", out)
	}
	if _, errs, code := cli(t, "", "show"); code != 1 || !strings.Contains(errs, "missing argument") {
		t.Fatalf("show without RUN: exit %d %q", code, errs)
	}
}

func TestCLIRunsAllListsTheHistoryOfForgottenRuns(t *testing.T) {
	db := filepath.Join(t.TempDir(), "bt.db")
	// The first run is forgotten 2 s after it ends; the next process to
	// start keeps its history. The run must outlive the command's own
	// look at its end: with 300 ms, a loaded machine (load 40) woke the
	// command's wait after the run had expired, and it said RUN_NOT_FOUND.
	out, errs, code := cli(t, "", "run", "dev_echo", "--dev-templates", "--db", db, "--run-ttl-ms", "2000",
		"--input", "items=2", "--input", "content=hello")
	if code != 0 {
		t.Fatalf("first run: exit %d\n%s%s", code, out, errs)
	}
	first := runJSON(t, out)
	id, art := first["runId"].(string), first["artifactIds"].([]any)[0].(string)
	time.Sleep(time.Until(time.UnixMilli(int64(first["expiresAt"].(float64)) + 1)))
	if _, _, code := cli(t, "", "run", "dev_echo", "--dev-templates", "--db", db, "--input", "items=1"); code != 0 {
		t.Fatalf("second run: exit %d", code)
	}
	out, _, _ = cli(t, "", "runs", "--db", db, "--dev-templates")
	if strings.Contains(out, id) {
		t.Fatalf("runs without --all lists the forgotten run:\n%s", out)
	}
	_, errs, code = cli(t, "", "show", id, "--db", db, "--dev-templates")
	if code == 0 || !strings.Contains(errs, "RUN_NOT_FOUND") {
		t.Fatalf("show of a forgotten run: exit %d %q, want RUN_NOT_FOUND", code, errs)
	}
	out, errs, code = cli(t, "", "runs", "--all", "--db", db, "--dev-templates")
	if code != 0 || !regexp.MustCompile(id+`\s+succeeded \(expired\)\s+dev_echo\s+2/2`).MatchString(out) ||
		!strings.Contains(out, id+": items 2") || !strings.Contains(out, art+"  content  text/plain") {
		t.Fatalf("runs --all: exit %d\n%s%s", code, out, errs)
	}
}

// TestCLIEmptyDBIsRefused: `--db "$URL"` with the variable unset gives an
// empty --db; every command refuses it naming the flag, and no database
// is opened or created in the working directory.
func TestCLIEmptyDBIsRefused(t *testing.T) {
	t.Chdir(t.TempDir())
	for _, args := range [][]string{{"runs", "--db", ""}, {"doctor", "--db", " "}, {"run", "dev_echo", "--db", ""}, {"sessions", "--db", ""}} {
		_, errs, code := cli(t, "", args...)
		if code != 1 || !strings.Contains(errs, "--db is empty") || !strings.Contains(errs, "postgres:// URL") {
			t.Errorf("%v: exit %d, stderr %q; want 1 naming --db", args, code, errs)
		}
	}
	if entries, _ := os.ReadDir("."); len(entries) != 0 {
		t.Fatalf("the working directory holds %v after refusals, want nothing", entries)
	}
}
