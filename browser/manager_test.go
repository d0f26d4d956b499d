package browser

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/browsertask/browsertask/engine"
	"github.com/browsertask/browsertask/internal/fixture"
)

func TestLaunchNavigateAndDescribe(t *testing.T) {
	srv := fixture.New(t)
	m := newManager(t, Options{})
	if d := m.Describe(); d.Product != "" || d.Mode != "local" || d.Error != "" {
		t.Fatalf("Describe before launch = %+v, want local without product", d)
	}
	if len(m.PIDs()) != 0 {
		t.Fatalf("browser launched before first use: %v", m.PIDs())
	}
	ctx := testCtx(t)
	s, err := m.Session(ctx, "sess_a")
	if err != nil {
		t.Fatal(err)
	}
	if d := m.Describe(); !strings.Contains(d.Product, "Chrome") {
		t.Fatalf("Describe after launch = %+v, want a Chrome product", d)
	}
	tb, err := s.AcquireTab(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer tb.Release(true)
	r, err := tb.Navigate(ctx, srv.URL("/redirect?to=/page/7"), WaitLoad)
	if err != nil {
		t.Fatal(err)
	}
	if r.Status != 200 || r.FinalURL != srv.URL("/page/7") {
		t.Fatalf("nav = %+v, want 200 at /page/7", r)
	}
	title, err := tb.Eval(ctx, `document.title`)
	if err != nil || string(title) != `"Page 7"` {
		t.Fatalf("title = %s, %v", title, err)
	}
	r, err = tb.Navigate(ctx, srv.URL("/status/404"), WaitLoad)
	if err != nil || r.Status != 404 || r.StatusText != "Not Found" {
		t.Fatalf("404 page: %+v, %v", r, err)
	}
	// A cross-origin redirect (127.0.0.1 → localhost) still reports the
	// final document's status and URL.
	other := strings.Replace(srv.URL("/status/410"), "127.0.0.1", "localhost", 1)
	r, err = tb.Navigate(ctx, srv.URL("/redirect?to="+other), WaitLoad)
	if err != nil || r.Status != 410 || r.FinalURL != other {
		t.Fatalf("cross-origin redirect to %s: %+v, %v", other, r, err)
	}
	// A selector wait reports them too.
	r, err = tb.Navigate(ctx, srv.URL("/page/8"), "#name")
	if err != nil || r.Status != 200 || r.FinalURL != srv.URL("/page/8") {
		t.Fatalf("selector wait: %+v, %v", r, err)
	}
	// Same browser for a second session: launched once per process.
	pids := m.PIDs()
	if _, err := m.Session(ctx, "sess_b"); err != nil {
		t.Fatal(err)
	}
	if got := m.PIDs(); len(got) != 1 || got[0] != pids[0] {
		t.Fatalf("PIDs = %v, want the single browser %v", got, pids)
	}
}

func TestSessionsAreIsolated(t *testing.T) {
	srv := fixture.New(t)
	m := newManager(t, Options{})
	ctx := testCtx(t)
	body := func(sessionID, path string) string {
		tb := testTab(t, m, sessionID)
		defer tb.Release(true)
		if _, err := tb.Navigate(ctx, srv.URL(path), WaitLoad); err != nil {
			t.Fatal(err)
		}
		raw, err := tb.Eval(ctx, `document.body.innerText`)
		if err != nil {
			t.Fatal(err)
		}
		return string(raw)
	}
	body("sess_one", "/set-cookie?name=who&value=one")
	if got := body("sess_one", "/cookies"); got != `"who=one"` {
		t.Fatalf("session one cookies = %s", got)
	}
	if got := body("sess_two", "/cookies"); got != `""` {
		t.Fatalf("session two sees cookies %s, want none", got)
	}
	// Closing a session drops its cookies; the id can be used afresh.
	if err := m.CloseSession(ctx, "sess_one"); err != nil {
		t.Fatal(err)
	}
	if err := m.CloseSession(ctx, "sess_never"); err != nil {
		t.Fatalf("closing an unknown session: %v", err)
	}
	if got := body("sess_one", "/cookies"); got != `""` {
		t.Fatalf("reopened session sees cookies %s", got)
	}
}

func TestCloseKillsProcessGroupAndProfile(t *testing.T) {
	m := newManager(t, Options{})
	ctx := testCtx(t)
	s, err := m.Session(ctx, "sess_k")
	if err != nil {
		t.Fatal(err)
	}
	if tb, err := s.AcquireTab(ctx); err != nil {
		t.Fatal(err)
	} else {
		tb.Release(true)
	}
	pids := m.PIDs()
	if len(pids) != 1 || len(GroupMembers(pids[0])) < 2 {
		t.Fatalf("expected a running browser group, pids=%v", pids)
	}
	dirs, _ := filepath.Glob(filepath.Join(m.opts.TempDir, userDataPrefix+"*"))
	if len(dirs) != 1 {
		t.Fatalf("profile dirs = %v", dirs)
	}
	if err := m.Close(); err != nil {
		t.Fatal(err)
	}
	fixture.WaitUntil(t, "Chromium's process group to exit after Close", func() bool { return len(GroupMembers(pids[0])) == 0 })
	if left := GroupMembers(pids[0]); len(left) > 0 {
		t.Fatalf("chromium processes survive Close: %v", left)
	}
	if _, err := os.Stat(dirs[0]); !os.IsNotExist(err) {
		t.Fatalf("profile dir %s not removed: %v", dirs[0], err)
	}
	if _, err := m.Session(ctx, "sess_k2"); engine.CodeOf(err) != engine.ExecutionError {
		t.Fatalf("Session after Close: %v", err)
	}
}

func TestBrowserDeathRelaunches(t *testing.T) {
	srv := fixture.New(t)
	m := newManager(t, Options{})
	ctx := testCtx(t)
	s, err := m.Session(ctx, "sess_old")
	if err != nil {
		t.Fatal(err)
	}
	old := m.PIDs()[0]
	killTree(old)
	fixture.WaitUntil(t, "the manager to see its browser die", func() bool { return len(m.PIDs()) == 0 })
	if _, err := s.AcquireTab(ctx); engine.CodeOf(err) != engine.ExecutionError {
		t.Fatalf("AcquireTab on a dead browser: %v", err)
	}
	if _, err := m.Session(ctx, "sess_old"); engine.CodeOf(err) != engine.SessionNotFound {
		t.Fatalf("session on dead browser: %v, want SESSION_NOT_FOUND", err)
	}
	s2, err := m.Session(ctx, "sess_new")
	if err != nil {
		t.Fatal(err)
	}
	if pids := m.PIDs(); len(pids) != 1 || pids[0] == old {
		t.Fatalf("PIDs after relaunch = %v (old %d)", pids, old)
	}
	tb, err := s2.AcquireTab(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer tb.Release(true)
	if r, err := tb.Navigate(ctx, srv.URL("/page/1"), WaitLoad); err != nil || r.Status != 200 {
		t.Fatalf("navigate after relaunch: %+v %v", r, err)
	}
}

func TestNoBrowserError(t *testing.T) {
	m := NewManager(Options{Browser: []string{filepath.Join(t.TempDir(), "no-such-chrome")}, TempDir: t.TempDir()})
	defer m.Close()
	_, err := m.Session(testCtx(t), "sess_x")
	if engine.CodeOf(err) != engine.ExecutionError {
		t.Fatalf("err = %v, want EXECUTION_ERROR", err)
	}
	if d := m.Describe(); d.Error == "" {
		t.Fatalf("Describe after failed launch has no error: %+v", d)
	}
	if !strings.Contains(errNoBrowser.Error(), "apt install chromium") ||
		!strings.Contains(errNoBrowser.Error(), "brew install --cask chromium") ||
		!strings.Contains(errNoBrowser.Error(), "--browser") {
		t.Fatalf("errNoBrowser does not name the three fixes: %v", errNoBrowser)
	}
}

func TestSweepRemovesDeadProfiles(t *testing.T) {
	dir := t.TempDir()
	// A pid far above pid_max is never alive.
	stale := filepath.Join(dir, userDataPrefix+"999999999-abc")
	mine := filepath.Join(dir, userDataPrefix+"1-abc") // pid 1 is alive
	for _, d := range []string{stale, mine} {
		if err := os.MkdirAll(filepath.Join(d, "Default"), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	m := NewManager(Options{TempDir: dir})
	defer m.Close()
	if _, err := os.Stat(stale); !os.IsNotExist(err) {
		t.Fatalf("stale profile not swept: %v", err)
	}
	if _, err := os.Stat(mine); err != nil {
		t.Fatalf("live profile removed: %v", err)
	}
}

func TestRemoteEndpointPool(t *testing.T) {
	fixture.NeedChromium(t)
	srv := fixture.New(t)
	bin, _ := findBinary()
	ctx := testCtx(t)
	proc, err := startProcess(ctx, bin, t.TempDir(), false, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(proc.kill)
	m := newManager(t, Options{Browser: []string{proc.wsURL}})
	s, err := m.Session(ctx, "sess_remote")
	if err != nil {
		t.Fatal(err)
	}
	if d := m.Describe(); d.Mode != "remote" || d.Product == "" {
		t.Fatalf("Describe = %+v", d)
	}
	if len(m.PIDs()) != 0 {
		t.Fatalf("a remote endpoint launched a local browser: %v", m.PIDs())
	}
	tb, err := s.AcquireTab(ctx)
	if err != nil {
		t.Fatal(err)
	}
	r, err := tb.Navigate(ctx, srv.URL("/page/3"), WaitLoad)
	tb.Release(true)
	if err != nil || r.Status != 200 {
		t.Fatalf("remote navigate: %+v %v", r, err)
	}
	if err := m.Close(); err != nil {
		t.Fatal(err)
	}
	if !proc.alive() {
		t.Fatal("closing the manager killed the remote browser")
	}
}
