package acceptance

// Issue 9: a run that crashes its process is capped (defect 2), and a process
// paused past its lease does not run its run twice (defect 3).

import (
	"errors"
	"fmt"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/browsertask/browsertask/internal/fixture"
)

// TestBlackboxPoisonRunCap: a dev_echo run that ends its process with
// os.Exit(2) at its 2nd item. The first process and two restarts on the same
// database die on it (each restart recovers the run and resumes it); the
// third restart fails it with EXECUTION_ERROR "interrupted 3 times" instead
// of resuming it, stays up, and runs another run to success.
func TestBlackboxPoisonRunCap(t *testing.T) {
	t.Parallel()
	// The run is submitted by the CLI, not through the process it kills: a
	// process that dies on the run may do so before it answers its own
	// submission (the run starts before the answer is written).
	db := filepath.Join(t.TempDir(), "bt.db")
	out, errs, code := cli(t, "", "run", "dev_echo", "--dev-templates", "--db", db, "--async",
		"--input", "items=3", "--input", "sleepMs=10", "--input", "exitAtItem=2")
	id := strings.TrimSpace(out)
	if code != 0 || !strings.HasPrefix(id, "run_") {
		t.Fatalf("submit: exit %d %q %s", code, out, errs)
	}
	waitExit2 := func(p *proc, which string) {
		t.Helper()
		ctx, cancel := fixture.Context(t)
		defer cancel()
		select {
		case <-p.done:
		case <-ctx.Done():
			t.Fatalf("%s: never exited on the poisoned run:\n%s", which, p.logTail(30))
		}
		var ee *exec.ExitError
		if !errors.As(p.waitErr, &ee) || ee.ExitCode() != 2 {
			t.Fatalf("%s: exit %v, want status 2 from the dev template:\n%s", which, p.waitErr, p.logTail(30))
		}
	}
	// The first process and two restarts each claim the run and die on it.
	for i := 0; i <= 2; i++ {
		p := newProcCmd(t, "serve", []string{"--db", db, "--addr", "127.0.0.1:0"})
		if err := p.cmd.Start(); err != nil {
			t.Fatal(err)
		}
		p.watch()
		t.Cleanup(p.cleanup)
		waitExit2(p, fmt.Sprintf("process %d", i+1))
	}
	last := startServe(t, "--db", db)
	cs := connectHTTP(t, last, nil)
	run := waitTerminal(t, cs, id)
	e := sub(run, "error")
	if run["status"] != "failed" || e["errorCode"] != "EXECUTION_ERROR" || !strings.Contains(fmt.Sprint(e["message"]), "interrupted 3 times") {
		t.Fatalf("poisoned run: status %v error %v", run["status"], e)
	}
	ok := waitTerminal(t, cs, submitAsync(t, cs, "dev_echo", obj{"items": 2, "sleepMs": 1}, nil))
	if ok["status"] != "succeeded" {
		t.Fatalf("next run: %v %v", ok["status"], ok["error"])
	}
	if last.exited() {
		t.Fatalf("the fourth process exited: %v", last.waitErr)
	}
}

// TestBlackboxPanickingTemplate: dev_echo panics at its 2nd item; the run
// fails with EXECUTION_ERROR "internal error", the stack is on stderr, and
// the same process then runs another run to success.
func TestBlackboxPanickingTemplate(t *testing.T) {
	t.Parallel()
	p := startServe(t)
	cs := connectHTTP(t, p, nil)
	run := waitTerminal(t, cs, submitAsync(t, cs, "dev_echo", obj{"items": 3, "panicAtItem": 2}, nil))
	e := sub(run, "error")
	if run["status"] != "failed" || e["errorCode"] != "EXECUTION_ERROR" || !strings.Contains(fmt.Sprint(e["message"]), "internal error") {
		t.Fatalf("panicking run: %v %v", run["status"], e)
	}
	if !p.logLine("template panicked") || !strings.Contains(p.log(), "goroutine ") {
		t.Errorf("no panic stack on stderr")
	}
	ok := waitTerminal(t, cs, submitAsync(t, cs, "dev_echo", obj{"items": 2}, nil))
	if ok["status"] != "succeeded" || p.exited() {
		t.Fatalf("next run: %v %v (exited %v)", ok["status"], ok["error"], p.exited())
	}
}

// TestBlackboxSIGSTOPBeyondLease: the only process is stopped (SIGSTOP) for
// twice its lease while it executes a batch_extract_pages run, then
// continued. It finds its own lease expired; it must renew it rather than
// recover the run and execute it a second time beside the first (it used
// to fetch most pages twice). Every page is fetched exactly once.
func TestBlackboxSIGSTOPBeyondLease(t *testing.T) {
	fixture.NeedChromium(t)
	t.Parallel()
	const pages = 16
	site := newCountingSite(t, 200*time.Millisecond)
	urls := make([]any, pages)
	for i := range urls {
		urls[i] = site.url(i)
	}
	a := startServe(t) // --lease-ms 3000
	cs := connectHTTP(t, a, nil)
	id := submitAsync(t, cs, "batch_extract_pages", obj{"urls": urls, "concurrency": 2, "perPageTimeoutMs": 20000,
		"fields": obj{"name": "#name"}}, nil)
	waitRun(t, cs, id, "doneSteps >= 2", func(r obj) bool {
		if terminal(r["status"]) {
			t.Fatalf("run ended before the stop: %v %v", r["status"], r["error"])
		}
		return num(sub(r, "progress"), "doneSteps") >= 2
	})
	if err := a.cmd.Process.Signal(syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	time.Sleep(6 * time.Second) // the promise is about time: twice the 3 s lease
	if err := a.cmd.Process.Signal(syscall.SIGCONT); err != nil {
		t.Fatal(err)
	}
	run := waitTerminal(t, cs, id)
	if run["status"] != "succeeded" {
		t.Fatalf("run after SIGCONT: %v %v", run["status"], run["error"])
	}
	twice := 0
	for i := 0; i < pages; i++ {
		if n := site.hitsOf(fmt.Sprintf("/p/%d", i)); n != 1 {
			twice++
			t.Errorf("page %d fetched %d times", i, n)
		}
	}
	t.Logf("SIGSTOP 6 s with a 3 s lease: %d of %d pages fetched more than once", twice, pages)
	if a.logLine("recovered run with an expired lease", id) {
		t.Errorf("the process recovered its own executing run")
	}
}
