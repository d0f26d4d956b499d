package cli

import (
	"bytes"
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"
)

// signalBuffer is a stderr that several goroutines write and a test
// watches: waitFor returns once the text contains a string.
type signalBuffer struct {
	mu      sync.Mutex
	b       bytes.Buffer
	changed chan struct{}
}

func newSignalBuffer() *signalBuffer { return &signalBuffer{changed: make(chan struct{})} }

func (s *signalBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	n, err := s.b.Write(p)
	close(s.changed)
	s.changed = make(chan struct{})
	return n, err
}

func (s *signalBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// waitFor waits until the text matches re and returns the first match's
// submatches; it fails the test when done closes first.
func (s *signalBuffer) waitFor(t *testing.T, re *regexp.Regexp, done <-chan struct{}) []string {
	t.Helper()
	for {
		s.mu.Lock()
		m := re.FindStringSubmatch(s.b.String())
		ch := s.changed
		s.mu.Unlock()
		if m != nil {
			return m
		}
		select {
		case <-ch:
		case <-done:
			t.Fatalf("the command ended before printing %v; stderr:\n%s", re, s.String())
		}
	}
}

// bgCommand is a browsertask command running in a goroutine, as another
// process would run it (same database file, its own engine).
type bgCommand struct {
	stdout bytes.Buffer
	stderr *signalBuffer
	err    error
	done   chan struct{}
}

// startCLI starts a browsertask command in the background with stdin.
func startCLI(t *testing.T, stdin io.Reader, args ...string) *bgCommand {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	home := t.TempDir()
	getenv := func(k string) string {
		if k == "HOME" {
			return home
		}
		return ""
	}
	c := &bgCommand{stderr: newSignalBuffer(), done: make(chan struct{})}
	go func() {
		defer close(c.done)
		defer cancel()
		c.err = Run(ctx, append([]string{"browsertask"}, args...), getenv, stdin, &c.stdout, c.stderr)
	}()
	t.Cleanup(func() { cancel(); <-c.done })
	return c
}

// wait waits for the command and returns its stdout and exit code.
func (c *bgCommand) wait(t *testing.T) (string, int) {
	t.Helper()
	<-c.done
	var ee ExitError
	switch {
	case errors.As(c.err, &ee):
		return c.stdout.String(), int(ee)
	case c.err != nil:
		t.Logf("command error: %v", c.err)
		return c.stdout.String(), 1
	}
	return c.stdout.String(), 0
}

// askJob writes dev_tool_job inputs asking the questions in ask (a JSON
// array) and returns the --inputs file.
func askJob(t *testing.T, ask string) string {
	t.Helper()
	f := filepath.Join(t.TempDir(), "inputs.json")
	if err := os.WriteFile(f, []byte(`{"tool":"t","ask":`+ask+`}`), 0o600); err != nil {
		t.Fatal(err)
	}
	return f
}

// answers returns the answers a finished dev_tool_job run recorded.
func answers(t *testing.T, out string) map[string]any {
	t.Helper()
	r := runJSON(t, out)
	if r["status"] != "succeeded" {
		t.Fatalf("run %v, want succeeded", r)
	}
	return r["result"].(map[string]any)["answers"].(map[string]any)
}

// hintRE matches the line `browsertask run` prints without a terminal
// when the run starts waiting, capturing the run id and request id.
var hintRE = regexp.MustCompile(`(run_[0-9a-f-]{36}) waits for input \((\w+), (\w+)\): ([^\n]*) — answer from another terminal: browsertask answer (run_[0-9a-f-]{36}) --db \S+ --request (\w+)([^\n]*)\n`)

func TestCLIRunWithoutTerminalHintsAndAnswerFromAnotherInvocation(t *testing.T) {
	db := filepath.Join(t.TempDir(), "bt.db")
	job := askJob(t, `[{"requestId":"otp","kind":"secret","message":"Enter the code from your authenticator app"}]`)
	run := startCLI(t, strings.NewReader(""), "run", "dev_tool_job", "--dev-templates", "--db", db, "--inputs", job)
	m := run.stderr.waitFor(t, hintRE, run.done)
	id := m[1]
	if m[2] != "otp" || m[3] != "secret" || m[4] != "Enter the code from your authenticator app" || m[5] != id || m[6] != "otp" {
		t.Fatalf("hint line %q", m[0])
	}
	// While it waits, the runs table says so.
	out, errs, code := cli(t, "", "runs", "--db", db, "--dev-templates")
	if code != 0 || !strings.Contains(out, id+"  running (waiting for input: Enter the code from your authenticator…)") {
		t.Fatalf("runs while waiting: exit %d\n%s%s", code, out, errs)
	}
	_, errs, _ = cli(t, "", "show", id, "--db", db, "--dev-templates")
	if !strings.Contains(errs, "answer it with: browsertask answer "+id+" --request otp") {
		t.Fatalf("show while waiting, stderr: %q", errs)
	}
	// Another invocation on the same database file answers; the run's
	// process opens the sealed answer and finishes.
	out, errs, code = cli(t, "", "answer", id, "424242", "--db", db, "--dev-templates")
	if code != 0 || out != "answered otp (secret) of "+id+"\n" || !strings.Contains(errs, "shell history") {
		t.Fatalf("answer: exit %d out %q err %q", code, out, errs)
	}
	out, code = run.wait(t)
	if code != 0 {
		t.Fatalf("run: exit %d\n%s\n%s", code, out, run.stderr)
	}
	if a := answers(t, out)["otp"].(map[string]any); a["value"] != "***" {
		t.Fatalf("the secret answer should be masked in the result: %v", a)
	}
	if strings.Contains(out, "424242") || strings.Contains(run.stderr.String(), "424242") {
		t.Fatalf("the secret leaked:\n%s\n%s", out, run.stderr)
	}
	if n := strings.Count(run.stderr.String(), "waits for input"); n != 1 {
		t.Fatalf("the question should be hinted at once, got %d:\n%s", n, run.stderr)
	}
}

func TestCLIAnswerReadsTheValueFromStdin(t *testing.T) {
	db := filepath.Join(t.TempDir(), "bt.db")
	job := askJob(t, `[{"requestId":"name","kind":"text","message":"Your user name"},{"requestId":"otp","kind":"secret","message":"Code"}]`)
	run := startCLI(t, strings.NewReader(""), "run", "dev_tool_job", "--dev-templates", "--db", db, "--inputs", job)
	id := run.stderr.waitFor(t, hintRE, run.done)[1]
	run.stderr.waitFor(t, regexp.MustCompile(`--request otp`), run.done)
	run.stderr.waitFor(t, regexp.MustCompile(`--request name VALUE`), run.done)
	// Two questions: the command asks which.
	_, errs, code := cli(t, "alice\n", "answer", id, "--db", db, "--dev-templates")
	if code != 1 || !strings.Contains(errs, "waits for 2 answers") || !strings.Contains(errs, "name one with --request ID") ||
		!strings.Contains(errs, "name (text: Your user name)") || !strings.Contains(errs, "otp (secret: Code)") {
		t.Fatalf("answer without --request: exit %d %q", code, errs)
	}
	out, errs, code := cli(t, "alice\n", "answer", id, "--request", "name", "--db", db, "--dev-templates")
	if code != 0 || out != "answered name (text: alice) of "+id+"\n" {
		t.Fatalf("answer text from stdin: exit %d out %q err %q", code, out, errs)
	}
	out, errs, code = cli(t, "987654\r\n", "answer", id, "--request", "otp", "--db", db, "--dev-templates")
	if code != 0 || out != "answered otp (secret) of "+id+"\n" || strings.Contains(errs, "987654") {
		t.Fatalf("answer secret from stdin: exit %d out %q err %q", code, out, errs)
	}
	out, code = run.wait(t)
	a := answers(t, out)
	if code != 0 || a["name"].(map[string]any)["value"] != "alice" || a["otp"].(map[string]any)["value"] != "***" {
		t.Fatalf("run: exit %d answers %v", code, a)
	}
}

func TestCLIAnswerErrors(t *testing.T) {
	db := filepath.Join(t.TempDir(), "bt.db")
	// Unknown run: the domain error with its recovery, like cancel.
	_, errs, code := cli(t, "", "answer", "run_00000000-0000-0000-0000-000000000000", "--yes", "--db", db, "--dev-templates")
	if code != 1 || !strings.Contains(errs, "RUN_NOT_FOUND") || !strings.Contains(errs, "recovery:") {
		t.Fatalf("unknown run: exit %d %q", code, errs)
	}
	// A finished run waits for nothing.
	out, _, _ := cli(t, "", "run", "dev_echo", "--dev-templates", "--db", db, "--input", "items=1")
	done := runJSON(t, out)["runId"].(string)
	_, errs, code = cli(t, "", "answer", done, "x", "--db", db, "--dev-templates")
	if code != 1 || !strings.Contains(errs, "run "+done+" is succeeded and waits for no answer") {
		t.Fatalf("finished run: exit %d %q", code, errs)
	}
	job := askJob(t, `[{"requestId":"buy","kind":"confirm","message":"Place the order?"}]`)
	run := startCLI(t, strings.NewReader(""), "run", "dev_tool_job", "--dev-templates", "--db", db, "--inputs", job)
	m := run.stderr.waitFor(t, hintRE, run.done)
	id := m[1]
	if !strings.Contains(m[0], "--request buy --yes (or --no)") {
		t.Fatalf("confirm hint %q", m[0])
	}
	for _, c := range []struct {
		stdin string
		args  []string
		want  string
	}{
		{"", []string{"sure"}, `request buy of run ` + id + ` asks yes/no ("Place the order?"): use --yes or --no, not "sure"`},
		{"", []string{"--yes", "--no"}, "--yes and --no both given"},
		{"", []string{"yes", "--yes"}, "not both"},
		{"", nil, `request buy asks yes/no ("Place the order?"): use --yes or --no (stdin gave "")`},
		{"", []string{"--request", "otp", "--yes"}, "waits for no answer to --request otp"},
	} {
		args := append([]string{"answer", id, "--db", db, "--dev-templates"}, c.args...)
		if _, errs, code := cli(t, c.stdin, args...); code != 1 || !strings.Contains(errs, c.want) {
			t.Errorf("answer %v: exit %d %q, want %q", c.args, code, errs, c.want)
		}
	}
	out, errs, code = cli(t, "no\n", "answer", id, "--db", db, "--dev-templates")
	if code != 0 || out != "answered buy (confirm: no) of "+id+"\n" {
		t.Fatalf("confirm from stdin: exit %d out %q err %q", code, out, errs)
	}
	out, _ = run.wait(t)
	if a := answers(t, out)["buy"].(map[string]any); a["confirm"] != false {
		t.Fatalf("confirm answer %v", a)
	}
	// A secret question refuses yes/no.
	job = askJob(t, `[{"requestId":"otp","kind":"secret","message":"Code"}]`)
	run = startCLI(t, strings.NewReader(""), "run", "dev_tool_job", "--dev-templates", "--db", db, "--inputs", job)
	id = run.stderr.waitFor(t, hintRE, run.done)[1]
	if _, errs, code := cli(t, "", "answer", id, "--yes", "--db", db, "--dev-templates"); code != 1 ||
		!strings.Contains(errs, `asks for a secret value ("Code"), not yes/no: give VALUE, or omit it to type it`) {
		t.Fatalf("secret with --yes: exit %d %q", code, errs)
	}
	if _, errs, code := cli(t, "", "answer", id, "--db", db, "--dev-templates"); code != 1 || !strings.Contains(errs, "no secret value on stdin") {
		t.Fatalf("secret with empty stdin: exit %d %q", code, errs)
	}
	if _, _, code := cli(t, "", "answer", id, "1", "--db", db, "--dev-templates"); code != 0 {
		t.Fatalf("answer: exit %d", code)
	}
	if _, code := run.wait(t); code != 0 {
		t.Fatalf("run after answer: exit %d", code)
	}
}

// fakeTTY stands in for a person at a terminal: lines typed for visible
// prompts, and secrets typed at hidden ones.
type fakeTTY struct {
	lines   io.Reader
	mu      sync.Mutex
	secrets []string
}

func (f *fakeTTY) Read(p []byte) (int, error) { return f.lines.Read(p) }

func (f *fakeTTY) ReadPassword() ([]byte, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if len(f.secrets) == 0 {
		return nil, io.EOF
	}
	s := f.secrets[0]
	f.secrets = f.secrets[1:]
	return []byte(s), nil
}

func TestCLIRunPromptsOnTheTerminal(t *testing.T) {
	db := filepath.Join(t.TempDir(), "bt.db")
	job := askJob(t, `[{"requestId":"buy","kind":"confirm","message":"Place the order?"},{"requestId":"otp","kind":"secret","message":"Enter the code"}]`)
	tty := &fakeTTY{lines: strings.NewReader("maybe\ny\n"), secrets: []string{"555111"}}
	run := startCLI(t, tty, "run", "dev_tool_job", "--dev-templates", "--db", db, "--inputs", job)
	out, code := run.wait(t)
	errs := run.stderr.String()
	a := answers(t, out)
	if code != 0 || a["buy"].(map[string]any)["confirm"] != true || a["otp"].(map[string]any)["value"] != "***" {
		t.Fatalf("run: exit %d answers %v\n%s", code, a, errs)
	}
	for _, want := range []string{"Place the order? [y/n]: please answer y or n\nPlace the order? [y/n]: answered buy (confirm: yes)\n",
		"Enter the code (hidden): \nanswered otp (secret)\n"} {
		if !strings.Contains(errs, want) {
			t.Errorf("stderr lacks %q:\n%s", want, errs)
		}
	}
	if strings.Contains(errs, "waits for input") || strings.Contains(errs, "555111") || strings.Contains(out, "555111") {
		t.Fatalf("a terminal gets prompts, no hints, and the secret never shows:\n%s", errs)
	}
}
