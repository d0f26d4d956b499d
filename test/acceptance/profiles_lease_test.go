package acceptance

// Issue 31, acceptance 2: two processes on one database share one
// persistent profile: both finish their runs on it, never two Chromiums on
// its directory at once, and a kill -9 of the holder lets the other take
// the profile over.

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/browsertask/browsertask/internal/fixture"
)

// profileBrowsers returns the pids of the Chromiums running on user-data
// directory dir: the browser processes (no --type=: not a zygote, renderer
// or utility, which outlive a killed browser for a moment) at the root of
// the process trees whose command line names it (a browser's brief forks
// carry the same switches, and /usr/bin/chromium may be a wrapper script
// that execs).
func profileBrowsers(dir string) []int {
	entries, _ := os.ReadDir("/proc")
	on := map[int]bool{}
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		if strings.Contains(cmdline(pid), "--user-data-dir="+dir) {
			on[pid] = true
		}
	}
	var out []int
	for pid := range on {
		if !on[parentOf(pid)] && !strings.Contains(cmdline(pid), "--type=") {
			out = append(out, pid)
		}
	}
	return out
}

// parentOf returns a process's parent pid (0 when unknown).
func parentOf(pid int) int {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return 0
	}
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	var state string
	var ppid int
	if i < 0 || i+2 > len(s) {
		return 0
	}
	if _, err := fmt.Sscanf(s[i+2:], "%s %d", &state, &ppid); err != nil {
		return 0
	}
	return ppid
}

// watchProfileBrowsers samples profileBrowsers until ctx ends and records
// the most seen at once, counting a browser only when two consecutive
// samples both see it: a sample reads the process table one process at a
// time, and a wrapper script exec'ing Chromium or a browser's brief fork
// can look like a second root for one sample, while a second Chromium on
// the directory would run for a second at least.
func watchProfileBrowsers(ctx context.Context, dir string, most *atomic.Int64) {
	prev := map[int]bool{}
	for ctx.Err() == nil {
		cur := map[int]bool{}
		n := int64(0)
		for _, pid := range profileBrowsers(dir) {
			cur[pid] = true
			if prev[pid] {
				n++
			}
		}
		if n > most.Load() {
			most.Store(n)
		}
		prev = cur
		time.Sleep(10 * time.Millisecond)
	}
}

// signedInProfile imports the fixture's login into profile name of the
// database at dbPath through the CLI.
func signedInProfile(t *testing.T, fx *fixture.Server, dbPath, name string) {
	t.Helper()
	c := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	resp, err := c.PostForm(fx.URL("/login"), url.Values{"f1": {fixture.LoginUser}, "f2": {fixture.LoginPassword}})
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	sid := ""
	for _, ck := range resp.Cookies() {
		if ck.Name == "sid" {
			sid = ck.Value
		}
	}
	file := filepath.Join(t.TempDir(), "cookies.txt")
	txt := fmt.Sprintf("# Netscape HTTP Cookie File\n127.0.0.1\tFALSE\t/\tFALSE\t%d\tsid\t%s\n", time.Now().Add(time.Hour).Unix(), sid)
	if err := os.WriteFile(file, []byte(txt), 0o600); err != nil {
		t.Fatal(err)
	}
	if out, errOut, code := cli(t, "", "profiles", "import", name, file, "--db", dbPath); code != 0 {
		t.Fatalf("profiles import: %d %s %s", code, out, errOut)
	}
}

func TestBlackboxProfileLeaseAcrossProcesses(t *testing.T) {
	fixture.NeedChromium(t)
	fx := fixture.New(t)
	a := startServe(t)
	b := startServe(t, "--db", a.db)
	signedInProfile(t, fx, a.db, "work")
	dir := filepath.Join(filepath.Dir(a.db), "profiles", "work")
	ctx, stop := context.WithCancel(context.Background())
	defer stop()
	var most atomic.Int64
	go watchProfileBrowsers(ctx, dir, &most)
	csA, csB := connectHTTP(t, a, nil), connectHTTP(t, b, nil)
	members := obj{"templateId": "batch_extract_pages", "profile": "work", "inputs": membersInputs(fx), "options": obj{"mode": "async"}}
	// A holds the profile for a while (the ticker counts every 150 ms).
	hold := func(until int) obj {
		return obj{"templateId": "run_steps", "profile": "work", "options": obj{"mode": "async"}, "inputs": obj{
			"startUrl": fx.URL(fmt.Sprintf("/live/ticker?until=%d", until)),
			"steps":    []any{obj{"action": "wait_for", "selector": "#done", "timeoutMs": 120000}, obj{"action": "extract", "name": "tick", "selector": "#tick"}}}}
	}

	// Both finish: one run on each process at once.
	r1 := callOK(t, csA, "run_task_template", hold(10))["runId"].(string)
	r2 := callOK(t, csB, "run_task_template", members)["runId"].(string)
	for _, id := range []string{r1, r2} {
		if run := waitTerminal(t, csA, id); run["status"] != "succeeded" {
			t.Fatalf("run %s: %v %v", id, run["status"], run["error"])
		}
	}
	if secret := sub(waitTerminal(t, csA, r2), "result")["pages"].([]any)[0].(obj)["fields"].(obj)["secret"]; secret != "members-only-42" {
		t.Fatalf("members page on B with the profile: secret %v", secret)
	}
	if n := most.Load(); n != 1 {
		t.Fatalf("at most %d Chromiums on the profile at once, want exactly 1", n)
	}

	// kill -9 of the holder: A holds the profile (its Chromium runs on the
	// directory) with a long run; B's run waits, then takes it over.
	callOK(t, csA, "run_task_template", hold(1000000))
	fixture.WaitUntil(t, "A's Chromium on the profile", func() bool {
		for _, pid := range profileBrowsers(dir) {
			for _, d := range descendants(a.cmd.Process.Pid) {
				if d == pid {
					return true
				}
			}
		}
		return false
	})
	r3 := callOK(t, csB, "run_task_template", members)["runId"].(string)
	a.kill9()
	run := waitTerminal(t, csB, r3)
	if run["status"] != "succeeded" {
		t.Fatalf("B's run after A's kill -9: %v %v\n%s", run["status"], run["error"], b.logTail(30))
	}
	if secret := sub(run, "result")["pages"].([]any)[0].(obj)["fields"].(obj)["secret"]; secret != "members-only-42" {
		t.Fatalf("members page on B after the takeover: secret %v", secret)
	}
	if n := most.Load(); n != 1 {
		t.Fatalf("at most %d Chromiums on the profile at once, want exactly 1", n)
	}
}
