package cli

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/browsertask/browsertask/internal/fixture"
	"github.com/browsertask/browsertask/internal/notify"
)

// hookReceiver is a local webhook endpoint: it refuses the first delivery
// with 503 (so the retry is exercised) and records the rest.
type hookReceiver struct {
	mu       sync.Mutex
	attempts int
	bodies   [][]byte
	sigs     []string
	got      chan struct{}
}

func (h *hookReceiver) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	b, _ := io.ReadAll(r.Body)
	h.mu.Lock()
	defer h.mu.Unlock()
	h.attempts++
	if h.attempts == 1 {
		w.WriteHeader(http.StatusServiceUnavailable)
		return
	}
	h.bodies = append(h.bodies, b)
	h.sigs = append(h.sigs, r.Header.Get(notify.SignatureHeader))
	select {
	case h.got <- struct{}{}:
	default:
	}
}

// startCLIEnv is startCLI with environment variables.
func startCLIEnv(t *testing.T, env map[string]string, args ...string) *bgCommand {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	env["HOME"] = t.TempDir()
	c := &bgCommand{stderr: newSignalBuffer(), done: make(chan struct{})}
	go func() {
		defer close(c.done)
		defer cancel()
		c.err = Run(ctx, append([]string{"browsertask"}, args...), func(k string) string { return env[k] }, strings.NewReader(""), &c.stdout, c.stderr)
	}()
	t.Cleanup(func() { cancel(); <-c.done })
	return c
}

// TestCLINotifiesWhenARunWaitsAndEnds logs in to a site asking for a
// one-time code with --notify and --notify-url: the webhook gets a signed
// "run.waiting" then a "run.ended" summary (the first delivery refused
// with 503 and retried), neither holding the password or the code, and
// a fake notify-send on PATH is called for both.
func TestCLINotifiesWhenARunWaitsAndEnds(t *testing.T) {
	fixture.NeedChromium(t)
	srv := fixture.New(t)
	dir := t.TempDir()
	db := filepath.Join(dir, "bt.db")
	hook := &hookReceiver{got: make(chan struct{}, 4)}
	receiver := httptest.NewServer(hook)
	t.Cleanup(receiver.Close)
	bin := filepath.Join(dir, "bin")
	calls := filepath.Join(dir, "notify-send.calls")
	if err := os.MkdirAll(bin, 0o755); err != nil {
		t.Fatal(err)
	}
	script := "#!/bin/sh\nfor a in \"$@\"; do printf '%s\\n' \"$a\" >> " + calls + "; done\necho --- >> " + calls + "\n"
	if err := os.WriteFile(filepath.Join(bin, "notify-send"), []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	secret := "s3cret-shared"
	run := startCLIEnv(t, map[string]string{"PATH": bin + ":/usr/bin:/bin", "BROWSERTASK_NOTIFY_SECRET": secret},
		"run", "login", "--session", "new", "--db", db, "--browser", "/usr/bin/chromium", "--notify", "--notify-url", receiver.URL,
		"--input", "url="+srv.URL("/login-otp/a"), "--input", "username="+fixture.LoginUser, "--input", "password="+fixture.LoginPassword)
	id := run.stderr.waitFor(t, hintRE, run.done)[1]
	select {
	case <-hook.got:
	case <-run.done:
		t.Fatalf("the run ended before the waiting notification:\n%s", run.stderr)
	}
	if _, errs, code := cli(t, "", "answer", id, fixture.OTPCode, "--db", db); code != 0 {
		t.Fatalf("answer: exit %d %s", code, errs)
	}
	out, code := run.wait(t)
	if code != 0 {
		t.Fatalf("login: exit %d\n%s\n%s", code, out, run.stderr)
	}
	hook.mu.Lock()
	defer hook.mu.Unlock()
	if len(hook.bodies) != 2 || hook.attempts != 3 {
		t.Fatalf("webhook: %d bodies in %d attempts, want 2 in 3 (one 503 retried)", len(hook.bodies), hook.attempts)
	}
	for i, want := range []string{`"event":"run.waiting"`, `"event":"run.ended"`} {
		b := string(hook.bodies[i])
		if !strings.Contains(b, want) || !strings.Contains(b, `"runId":"`+id+`"`) || !notify.Verify([]byte(secret), hook.bodies[i], hook.sigs[i]) {
			t.Errorf("delivery %d: signature %q\n%s", i, hook.sigs[i], b)
		}
		for _, leak := range []string{fixture.LoginPassword, fixture.OTPCode, secret, "Tr0ub4dor"} {
			if strings.Contains(b, leak) {
				t.Errorf("delivery %d holds a secret %q:\n%s", i, leak, b)
			}
		}
	}
	if !strings.Contains(string(hook.bodies[0]), `"questionKind":"secret"`) || !strings.Contains(string(hook.bodies[1]), `"status":"succeeded"`) {
		t.Errorf("bodies:\n%s\n%s", hook.bodies[0], hook.bodies[1])
	}
	// A forged or altered body does not verify.
	if notify.Verify([]byte("other"), hook.bodies[1], hook.sigs[1]) || notify.Verify([]byte(secret), append(hook.bodies[1], ' '), hook.sigs[1]) {
		t.Error("Verify accepted a wrong secret or an altered body")
	}
	b, err := os.ReadFile(calls)
	if err != nil {
		t.Fatal(err)
	}
	got := strings.Split(strings.TrimSuffix(string(b), "---\n"), "---\n")
	if len(got) != 2 || !strings.HasPrefix(got[0], "--app-name=browsertask\n--urgency=critical\n") ||
		!strings.Contains(got[0], "browsertask: login waits for you\n") || !strings.Contains(got[1], "browsertask: login succeeded\n") {
		t.Fatalf("notify-send calls:\n%s", b)
	}
	if strings.Contains(string(b), fixture.LoginPassword) || strings.Contains(string(b), fixture.OTPCode) {
		t.Fatalf("a desktop notification holds a secret:\n%s", b)
	}
}

func TestCLINotifyRefusals(t *testing.T) {
	db := filepath.Join(t.TempDir(), "bt.db")
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--notify"}, "--notify: notify-send is not on PATH; install it (Debian/Ubuntu: apt-get install libnotify-bin) or use --notify-url"},
		{[]string{"--notify-url", "ftp://x"}, `--notify-url must be an http(s) URL such as https://hooks.example/browsertask, got "ftp://x"`},
		{[]string{"--notify-secret-file", "/nonexistent"}, "--notify-secret-file signs --notify-url bodies: add --notify-url"},
		{[]string{"--notify-url", "http://127.0.0.1:1/", "--async"}, "--notify and --notify-url tell when a run followed here ends: leave out --async"},
	} {
		out, errs, code := cli(t, "", append([]string{"run", "dev_echo", "--dev-templates", "--db", db}, c.args...)...)
		if code != 1 || out != "" || !strings.Contains(errs, c.want) {
			t.Errorf("%q: exit %d %q, want %q", c.args, code, errs, c.want)
		}
	}
}
