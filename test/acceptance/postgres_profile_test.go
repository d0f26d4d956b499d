package acceptance

// Issue 31 on the PostgreSQL store (issue 33): a profile imported through
// the CLI into a Postgres database is used by a `serve` on that database; a
// run with profile reads the members page and get_task_run keeps its
// profile, a run without one does not read it and has none.

import (
	"fmt"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/browsertask/browsertask/internal/fixture"
)

// inDir runs p (not started) with dir as its working and data directory
// (XDG_DATA_HOME). With a postgres:// --db the profiles directory is the
// data directory's (XDG_DATA_HOME/browsertask/profiles), so the CLI and
// the daemon must share it (and nothing may land in the source tree).
func inDir(p *proc, dir string) *proc {
	p.cmd.Dir = dir
	p.cmd.Env = append(p.cmd.Env, "XDG_DATA_HOME="+dir)
	return p
}

// startServeIn is startServe with inDir.
func startServeIn(t *testing.T, dir string, args ...string) *proc {
	t.Helper()
	p := inDir(newProcCmd(t, "serve", append([]string{"--addr", "127.0.0.1:0"}, args...)), dir)
	if err := p.cmd.Start(); err != nil {
		t.Fatalf("start serve: %v", err)
	}
	p.watch()
	t.Cleanup(p.cleanup)
	fixture.WaitUntil(t, "serve listening", func() bool {
		if p.exited() {
			t.Fatalf("serve exited before listening (%v):\n%s", p.waitErr, p.logTail(40))
		}
		if m := listeningRE.FindStringSubmatch(p.log()); m != nil {
			p.addr = m[1]
		}
		if p.addr == "" {
			return false
		}
		resp, err := http.Get("http://" + p.addr + "/healthz")
		if err != nil {
			return false
		}
		resp.Body.Close()
		return resp.StatusCode == http.StatusOK
	})
	return p
}

// loginCookiesTxt signs into the fixture site over HTTP and returns its
// session cookie as a Netscape cookies.txt.
func loginCookiesTxt(t *testing.T, fx *fixture.Server) string {
	t.Helper()
	c := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	resp, err := c.PostForm(fx.URL("/login"), url.Values{"f1": {fixture.LoginUser}, "f2": {fixture.LoginPassword}})
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	for _, ck := range resp.Cookies() {
		if ck.Name == "sid" {
			return fmt.Sprintf("# Netscape HTTP Cookie File\n127.0.0.1\tFALSE\t/\tFALSE\t%d\tsid\t%s\n", time.Now().Add(time.Hour).Unix(), ck.Value)
		}
	}
	t.Fatalf("the fixture login set no sid cookie (status %d)", resp.StatusCode)
	return ""
}

func TestBlackboxPostgresProfileRun(t *testing.T) {
	pg := fixture.PostgresURL(t)
	fixture.NeedChromium(t)
	t.Parallel()
	fx := fixture.New(t)
	dir := t.TempDir()

	file := filepath.Join(t.TempDir(), "cookies.txt")
	if err := os.WriteFile(file, []byte(loginCookiesTxt(t, fx)), 0o600); err != nil {
		t.Fatal(err)
	}
	imp := exec.Command(bbBinary, "profiles", "import", "work", file, "--db", pg)
	imp.Dir, imp.Env = dir, []string{"HOME=" + dir, "PATH=" + os.Getenv("PATH"), "XDG_DATA_HOME=" + dir}
	if out, err := imp.CombinedOutput(); err != nil {
		t.Fatalf("profiles import: %v\n%s", err, out)
	}

	srv := startServeIn(t, dir, "--db", pg)
	cs := connectHTTP(t, srv, nil)
	list := callOK(t, cs, "list_profiles", obj{})
	profiles, _ := list["profiles"].([]any)
	if len(profiles) != 1 || profiles[0].(obj)["name"] != "work" {
		t.Fatalf("list_profiles on the Postgres daemon: %v", list)
	}

	with := callOK(t, cs, "run_task_template", obj{"templateId": "batch_extract_pages", "profile": "work",
		"inputs": membersInputs(fx), "options": obj{"mode": "async"}})["runId"].(string)
	without := callOK(t, cs, "run_task_template", obj{"templateId": "batch_extract_pages",
		"inputs": membersInputs(fx), "options": obj{"mode": "async"}})["runId"].(string)
	run := waitTerminal(t, cs, with)
	if run["status"] != "succeeded" || run["profile"] != "work" {
		t.Fatalf("run with profile: status %v, profile %v, error %v\n%s", run["status"], run["profile"], run["error"], srv.logTail(30))
	}
	if secret := sub(run, "result")["pages"].([]any)[0].(obj)["fields"].(obj)["secret"]; secret != "members-only-42" {
		t.Fatalf("members page with the profile: secret %v", secret)
	}
	if again := callOK(t, cs, "get_task_run", obj{"runId": with}); again["profile"] != "work" {
		t.Fatalf("get_task_run(%s).profile = %v, want work", with, again["profile"])
	}
	run = waitTerminal(t, cs, without)
	if _, has := run["profile"]; has {
		t.Fatalf("run without profile has profile %v", run["profile"])
	}
	// The members page answers 401 without the login: every page failed.
	if run["status"] != "failed" || sub(run, "error")["errorCode"] != "STEP_EXECUTION_FAILED" {
		t.Fatalf("run without profile: status %v, error %v; want failed with STEP_EXECUTION_FAILED (HTTP 401)", run["status"], run["error"])
	}
}
