package acceptance

// Issue 26, item 12: `browsertask serve 2>&1 | tee log` and Ctrl-C. The
// shell's SIGINT ends tee as well, and the daemon's next log line hit a
// closed pipe: Go's runtime exited on SIGPIPE (status 141) with no grace,
// and the run in flight stayed "running" until the next start. A stdio
// client that closes our stdout did the same to `browsertask mcp`.

import (
	"bufio"
	"bytes"
	"encoding/json"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"testing"

	"github.com/browsertask/browsertask/internal/fixture"
)

// pipeLog collects what a process writes to a pipe until the pipe's read
// end is closed.
type pipeLog struct {
	r      *os.File
	mu     sync.Mutex
	buf    bytes.Buffer
	ended  chan struct{}
	listen chan string // the serve listening address, once
}

func newPipeLog(r *os.File) *pipeLog {
	l := &pipeLog{r: r, ended: make(chan struct{}), listen: make(chan string, 1)}
	go func() {
		defer close(l.ended)
		sc := bufio.NewScanner(r)
		sc.Buffer(make([]byte, 1<<20), 1<<20)
		sent := false
		for sc.Scan() {
			l.mu.Lock()
			l.buf.WriteString(sc.Text() + "\n")
			l.mu.Unlock()
			if m := listeningRE.FindStringSubmatch(sc.Text()); m != nil && !sent {
				l.listen <- m[1]
				sent = true
			}
		}
	}()
	return l
}

// breakPipe closes the read end, as a tee that died, and waits for the
// reader to stop.
func (l *pipeLog) breakPipe() {
	_ = l.r.Close()
	<-l.ended
}

func (l *pipeLog) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.String()
}

// exitedGracefully waits for p to exit (a hang fails near the test's
// deadline) and fails the test unless it exited 0, naming a death by
// signal.
func exitedGracefully(t *testing.T, p *proc, what string) {
	t.Helper()
	ctx, cancel := fixture.Context(t)
	defer cancel()
	select {
	case <-p.done:
	case <-ctx.Done():
		t.Fatalf("%s: the process never exited", what)
	}
	if p.waitErr != nil {
		if st, ok := p.cmd.ProcessState.Sys().(syscall.WaitStatus); ok && st.Signaled() {
			t.Fatalf("%s: the process died of %v (a shell shows status %d), want exit 0 after its grace", what, st.Signal(), 128+int(st.Signal()))
		}
		t.Fatalf("%s: the process exited with %v, want 0", what, p.waitErr)
	}
}

// TestBlackboxServeBrokenStderrPipe: serve's stderr is a pipe; with a
// resumable run in flight the pipe's reader goes away and SIGINT follows.
// The daemon exits 0 after its grace, and the run is back in the queue
// with its checkpoints (as any SIGINT leaves it), not "running".
func TestBlackboxServeBrokenStderrPipe(t *testing.T) {
	t.Parallel()
	p := newProcCmd(t, "serve", []string{"--addr", "127.0.0.1:0"})
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	p.cmd.Stderr = w
	if err := p.cmd.Start(); err != nil {
		t.Fatalf("start serve: %v", err)
	}
	w.Close()
	p.watch()
	t.Cleanup(p.cleanup)
	logs := newPipeLog(r)
	ctx, cancel := fixture.Context(t)
	defer cancel()
	select {
	case p.addr = <-logs.listen:
	case <-p.done:
		t.Fatalf("serve exited before listening (%v):\n%s", p.waitErr, logs)
	case <-ctx.Done():
		t.Fatalf("serve never printed its listening line:\n%s", logs)
	}
	cs := connectHTTP(t, p, nil)
	id := submitAsync(t, cs, "dev_echo", obj{"items": 1000, "sleepMs": 50}, nil)
	waitRun(t, cs, id, "two items done", func(r obj) bool {
		return r["status"] == "running" && num(sub(r, "progress"), "doneSteps") >= 2
	})

	logs.breakPipe()
	if err := p.cmd.Process.Signal(os.Interrupt); err != nil {
		t.Fatal(err)
	}
	exitedGracefully(t, p, "SIGINT with stderr's reader gone")
	if st, attempt, e := runRow(t, p.db, id); st != "queued" || attempt != 1 {
		t.Fatalf("the run after the SIGINT: %s (attempt %d, error %s), want queued (handed back)", st, attempt, e)
	}
	if n := len(checkpointedItems(t, p.db, id)); n < 2 {
		t.Fatalf("the run kept %d checkpoints, want at least the 2 seen done", n)
	}
}

// TestBlackboxStdioClosedStdout: a stdio client that closes our stdout
// while a run is in flight. The next answer cannot be written: the
// session ends as if stdin closed (the run is handed back to the queue)
// and the process exits 0, instead of dying of SIGPIPE.
func TestBlackboxStdioClosedStdout(t *testing.T) {
	t.Parallel()
	p := newProcCmd(t, "mcp", []string{"--http=off"})
	stdin, err := p.cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	p.cmd.Stdout = w
	if err := p.cmd.Start(); err != nil {
		t.Fatalf("start mcp: %v", err)
	}
	w.Close()
	p.watch()
	t.Cleanup(p.cleanup)
	out := bufio.NewReader(r)
	send := func(msg string) {
		t.Helper()
		if _, err := io.WriteString(stdin, msg+"\n"); err != nil {
			t.Fatalf("write to stdin: %v", err)
		}
	}
	answer := func(id int) map[string]any {
		t.Helper()
		for {
			line, err := out.ReadBytes('\n')
			if err != nil {
				t.Fatalf("reading answer %d: %v\n%s", id, err, p.logTail(20))
			}
			var m map[string]any
			if json.Unmarshal(line, &m) == nil && m["id"] == float64(id) {
				return m
			}
		}
	}
	send(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"pipe-test","version":"1"}}}`)
	answer(1)
	send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	send(`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"run_task_template","arguments":{"templateId":"dev_echo","inputs":{"items":1000,"sleepMs":50},"options":{"mode":"async"}}}}`)
	res, _ := answer(2)["result"].(map[string]any)
	sc, _ := res["structuredContent"].(map[string]any)
	id, _ := sc["runId"].(string)
	if !regexp.MustCompile(`^run_`).MatchString(id) {
		t.Fatalf("run_task_template: %v", res)
	}
	// The client stops reading, then asks something.
	r.Close()
	send(`{"jsonrpc":"2.0","id":3,"method":"tools/list"}`)
	exitedGracefully(t, p, "mcp with stdout closed")
	if !strings.Contains(p.log(), "stdout closed") {
		t.Fatalf("the log does not say stdout closed:\n%s", p.logTail(20))
	}
	if st, _, e := runRow(t, p.db, id); st != "queued" {
		t.Fatalf("the run after the session ended: %s (%s), want queued (handed back)", st, e)
	}
}

// TestBlackboxCLIClosedStdout: a one-shot command whose reader went away
// (`browsertask templates | head -c0`) ends as quietly as before SIGPIPE
// was handled: status 141, nothing on stderr.
func TestBlackboxCLIClosedStdout(t *testing.T) {
	t.Parallel()
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	r.Close()
	var stderr bytes.Buffer
	cmd := exec.Command(bbBinary, "templates", "--db", filepath.Join(t.TempDir(), "browsertask.db"))
	cmd.Stdout, cmd.Stderr = w, &stderr
	err = cmd.Run()
	w.Close()
	st, _ := cmd.ProcessState.Sys().(syscall.WaitStatus)
	if err == nil || !(st.ExitStatus() == 141 || (st.Signaled() && st.Signal() == syscall.SIGPIPE)) || stderr.Len() != 0 {
		t.Fatalf("templates into a closed pipe: %v (status %d), stderr %q; want status 141 and no message", err, st.ExitStatus(), stderr.String())
	}
}
