package acceptance

// Issue "Everyday use", processes 1 and 2: a stdio client that closes, and
// a dashboard that outlives the process that served it.

import (
	"database/sql"
	"fmt"
	"net"
	"net/http"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/browsertask/browsertask/internal/fixture"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// stdioWithTerminate is startStdio whose Close waits td after closing
// stdin before sending SIGTERM (the SDKs' close sequence).
func stdioWithTerminate(t *testing.T, td time.Duration, args ...string) (*sdk.ClientSession, *proc) {
	t.Helper()
	p := newProcCmd(t, "mcp", append([]string{"--http=off"}, args...))
	ctx, cancel := fixture.Context(t)
	defer cancel()
	cs, err := newTestClient(nil).Connect(ctx, &sdk.CommandTransport{Command: p.cmd, TerminateDuration: td}, nil)
	if err != nil {
		t.Fatalf("connect over stdio: %v\n%s", err, p.logTail(40))
	}
	t.Cleanup(func() {
		_ = syscall.Kill(-p.cmd.Process.Pid, syscall.SIGKILL)
		if t.Failed() {
			t.Logf("---- tail of %s ----\n%s", filepath.Base(p.logPath), p.logTail(80))
		}
	})
	return cs, p
}

// runRow reads a run's status, attempt and error straight from the
// database file (read-only).
func runRow(t *testing.T, dbPath, runID string) (status string, attempt int, errJSON string) {
	t.Helper()
	db, err := sql.Open("sqlite", "file:"+dbPath+"?mode=ro&_pragma=busy_timeout(5000)")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var e sql.NullString
	if err := db.QueryRow(`SELECT status, attempt, error FROM runs WHERE id = ?`, runID).Scan(&status, &attempt, &e); err != nil {
		t.Fatalf("read run %s: %v", runID, err)
	}
	return status, attempt, e.String
}

// waitHung waits for the n-th arrival at /hang.
func waitHung(t *testing.T, fx *fixture.Server, what string) {
	t.Helper()
	ctx, cancel := fixture.Context(t)
	defer cancel()
	select {
	case <-fx.Hung():
	case <-ctx.Done():
		t.Fatalf("%s never reached /hang", what)
	}
}

// noneAlive waits until none of pids is alive, failing the test with the
// ones still running near the test's deadline (fixture.Context). The
// browser processes are killed (SIGKILL to their process group) before
// the mcp process exits; how soon a loaded kernel finishes tearing them
// down is the machine's business, not a promise about time, but one still
// running when the test must end is an orphan.
func noneAlive(t *testing.T, pids []int) {
	t.Helper()
	ctx, cancel := fixture.Context(t)
	defer cancel()
	for {
		var alive []string
		for _, pid := range pids {
			if procAlive(pid) {
				alive = append(alive, fmt.Sprintf("%d %s", pid, cmdline(pid)))
			}
		}
		if len(alive) == 0 {
			return
		}
		select {
		case <-ctx.Done():
			t.Fatalf("orphan processes still alive near the test's deadline after the exit:\n%s", strings.Join(alive, "\n"))
		case <-time.After(20 * time.Millisecond):
		}
	}
}

// exitAfterEOFRE is the last line `browsertask mcp` logs when its stdio
// client went away: how long after it saw stdin close it was done
// (browser and database closed), on its own clock.
var exitAfterEOFRE = regexp.MustCompile(`msg="exiting after stdin closed" sinceStdinClosed=(\S+)`)

// sinceStdinClosed reads that interval from the process's log.
func sinceStdinClosed(t *testing.T, p *proc) time.Duration {
	t.Helper()
	m := exitAfterEOFRE.FindStringSubmatch(p.log())
	if m == nil {
		t.Fatalf("the process did not log its exit after stdin closed:\n%s", p.logTail(30))
	}
	d, err := time.ParseDuration(m[1])
	if err != nil {
		t.Fatalf("sinceStdinClosed=%s: %v", m[1], err)
	}
	return d
}

func TestBlackboxStdioClientCloses(t *testing.T) {
	fixture.NeedChromium(t)
	t.Parallel()
	fx := fixture.New(t)
	dbPath := filepath.Join(t.TempDir(), "browsertask.db")
	// The grace a SIGTERM gives is 10 s: a closed stdin must not wait it.
	// The client would signal only after a minute: the process must end
	// on its own.
	cs, p := stdioWithTerminate(t, time.Minute, "--db", dbPath, "--shutdown-grace-ms", "10000")

	batch := submitAsync(t, cs, "batch_extract_pages", obj{"urls": []any{fx.URL("/page/1"), fx.URL("/hang"), fx.URL("/page/3")},
		"concurrency": 1, "perPageTimeoutMs": 120000}, nil)
	waitHung(t, fx, "batch_extract_pages")
	steps := submitAsync(t, cs, "run_steps", obj{"steps": []any{obj{"action": "navigate", "url": fx.URL("/hang")}}}, nil)
	waitHung(t, fx, "run_steps")
	kids := descendants(p.cmd.Process.Pid)
	if len(kids) == 0 {
		t.Fatal("no browser processes under the mcp process")
	}

	// The client closes stdin and waits for the process to exit. The
	// promise (exit within 2 s of EOF, no signal needed) is measured from
	// the event it is about, the process seeing its stdin close, to the
	// process being done, on the process's own clock: the client's wall
	// time would add how long a busy machine takes to schedule the
	// process and reap it (2.75 s at load 20-35).
	start := time.Now()
	if err := cs.Close(); err != nil {
		t.Logf("close: %v", err)
	}
	waited := time.Since(start)
	if st := p.cmd.ProcessState; st == nil || !st.Exited() || st.ExitCode() != 0 {
		t.Fatalf("the process did not exit 0 on its own after stdin closed: %v\n%s", st, p.logTail(30))
	}
	if !strings.Contains(p.log(), "stdin closed: handing the runs back") || strings.Contains(p.log(), "shutdown hurried") {
		t.Fatalf("the process did not hand the runs back on EOF alone:\n%s", p.logTail(30))
	}
	took := sinceStdinClosed(t, p)
	if took >= 2*time.Second {
		t.Fatalf("the process was done %v after it saw stdin close, want < 2 s", took)
	}
	t.Logf("done %v after it saw stdin close (the client waited %v)", took, waited.Round(time.Millisecond))
	noneAlive(t, kids)

	// The resumable run is back in the queue with its checkpoint; the other
	// one failed as interrupted.
	if st, attempt, _ := runRow(t, dbPath, batch); st != "queued" || attempt != 1 {
		t.Fatalf("batch run: %s (attempt %d), want queued", st, attempt)
	}
	if items := checkpointedItems(t, dbPath, batch); len(items) != 1 || !strings.HasSuffix(items[0], "/page/1") {
		t.Fatalf("batch checkpoints: %v, want /page/1", items)
	}
	if st, _, e := runRow(t, dbPath, steps); st != "failed" || !strings.Contains(e, "EXECUTION_ERROR") || !strings.Contains(e, "interrupted") {
		t.Fatalf("run_steps run: %s %s, want failed, interrupted", st, e)
	}

	// The next process on the database continues the batch from its
	// checkpoint: /page/1 is not fetched again.
	cs2, _ := startStdio(t, "--db", dbPath)
	waitHung(t, fx, "the resumed batch")
	r := getRun(t, cs2, batch)
	if r["status"] != "running" || fx.Hits("/page/1") != 1 {
		t.Fatalf("resumed batch: %v, /page/1 fetched %d times", r["status"], fx.Hits("/page/1"))
	}
	callOK(t, cs2, "cancel_task_run", obj{"runId": batch})
}

func TestBlackboxSigtermAfterStdinClosed(t *testing.T) {
	fixture.NeedChromium(t)
	t.Parallel()
	fx := fixture.New(t)
	dbPath := filepath.Join(t.TempDir(), "browsertask.db")
	cs, p := stdioWithTerminate(t, 5*time.Second, "--db", dbPath, "--shutdown-grace-ms", "10000")
	steps := submitAsync(t, cs, "run_steps", obj{"steps": []any{obj{"action": "navigate", "url": fx.URL("/hang")}}}, nil)
	waitHung(t, fx, "run_steps")
	start := time.Now()
	closed := make(chan struct{})
	go func() { _ = cs.Close(); close(closed) }()
	// As soon as the process saw stdin close, a SIGTERM.
	waitLog(t, p, "stdin closed")
	_ = p.cmd.Process.Signal(syscall.SIGTERM)
	<-closed
	took := time.Since(start)
	if !strings.Contains(p.log(), "shutdown hurried") {
		t.Fatalf("a SIGTERM after stdin closed should end the grace at once; log:\n%s", p.logTail(30))
	}
	if st, _, e := runRow(t, dbPath, steps); st != "failed" || !strings.Contains(e, "interrupted") {
		t.Fatalf("run_steps run: %s %s, want failed, interrupted", st, e)
	}
	t.Logf("exited %v after stdin closed and SIGTERM", took)
}

func TestBlackboxDashboardOutlivesItsProcess(t *testing.T) {
	t.Parallel()
	dbPath := filepath.Join(t.TempDir(), "browsertask.db")
	addr := freeAddr(t)
	first, p1 := stdioWithTerminate(t, 3*time.Second, "--db", dbPath, "--http=auto", "--addr", addr)
	waitHealthy(t, addr)
	_, p2 := stdioWithTerminate(t, 3*time.Second, "--db", dbPath, "--http=auto", "--addr", addr)
	// The second process serves its own dashboard on a free port.
	waitLog(t, p2, "takes the port over when it is free")

	start := time.Now()
	_ = first.Close() // returns once the process exited
	if !strings.Contains(p1.log(), "stdin closed") {
		t.Fatalf("the first process did not see its stdin close:\n%s", p1.logTail(20))
	}
	waitHealthy(t, addr)
	took := time.Since(start)
	if !strings.Contains(p2.log(), "took over the HTTP port") {
		t.Fatalf("the dashboard answers, but not from the second process; its log:\n%s", p2.logTail(20))
	}
	t.Logf("the dashboard answered again %v after the first process was told to stop", took)
	res, err := http.Get("http://" + addr + "/")
	if err != nil || res.StatusCode != 200 {
		t.Fatalf("dashboard after the takeover: %v %v", err, res)
	}
	res.Body.Close()
}

// freeAddr returns a loopback address with a port nobody listens on.
func freeAddr(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	return addr
}

// waitHealthy waits until /healthz on addr answers 200, giving up near the
// test's deadline (fixture.Context): how soon is not what the callers
// promise.
func waitHealthy(t *testing.T, addr string) {
	t.Helper()
	ctx, cancel := fixture.Context(t)
	defer cancel()
	// The per-request timeout only retries a request nobody answers (a
	// connection queued on a process that is going away); it fails nothing.
	c := &http.Client{Timeout: time.Second}
	for {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+addr+"/healthz", nil)
		if err != nil {
			t.Fatal(err)
		}
		res, err := c.Do(req)
		if err == nil {
			res.Body.Close()
			if res.StatusCode == 200 {
				return
			}
			err = fmt.Errorf("status %d", res.StatusCode)
		}
		select {
		case <-ctx.Done():
			t.Fatalf("http://%s/healthz did not answer before the test's deadline: %v", addr, err)
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// waitLog waits until the process's stderr contains s, giving up near the
// test's deadline (fixture.Context).
func waitLog(t *testing.T, p *proc, s string) {
	t.Helper()
	ctx, cancel := fixture.Context(t)
	defer cancel()
	for !strings.Contains(p.log(), s) {
		select {
		case <-ctx.Done():
			t.Fatalf("%q not logged before the test's deadline:\n%s", s, p.logTail(20))
		case <-time.After(50 * time.Millisecond):
		}
	}
}
