package cli

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/browsertask/browsertask/internal/fixture"
)

// TestCLISessionsNewImportExportClose logs in from a terminal through a
// held session (sessions new --save), closes it from another command,
// then runs in the saved login twice: imported into a held session and
// restored for one run.
func TestCLISessionsNewImportExportClose(t *testing.T) {
	fixture.NeedChromium(t)
	srv := fixture.New(t)
	dir := t.TempDir()
	db := filepath.Join(dir, "bt.db")
	state, state2 := filepath.Join(dir, "login.json"), filepath.Join(dir, "login2.json")
	shared := []string{"--db", db, "--browser", "/usr/bin/chromium"}
	holdRe := regexp.MustCompile(`holding browser session (sess_[0-9a-f-]+): `)

	// The login runs from the terminal in a session of its own, saved.
	out, errs, code := cli(t, "", append([]string{"run", "login", "--session", "new", "--save-session", state, "--input", "url=" + srv.URL("/login"),
		"--input", "username=" + fixture.LoginUser, "--input", "password=" + fixture.LoginPassword}, shared...)...)
	if code != 0 {
		t.Fatalf("login: exit %d\n%s", code, errs)
	}
	if r := runJSON(t, out); r["status"] != "succeeded" || !strings.Contains(errs, "saved session ") {
		t.Fatalf("login: %v\n%s", r, errs)
	}

	// The saved login, imported into a held session other commands run in.
	holder := startCLI(t, nil, append([]string{"sessions", "import", state, "--save", state2}, shared...)...)
	id := holder.stderr.waitFor(t, holdRe, holder.done)[1]
	out, _, _ = cli(t, "", append([]string{"sessions"}, shared...)...)
	if !regexp.MustCompile(`(?m)^` + id + `\s+idle\s+0$`).MatchString(out) {
		t.Fatalf("sessions lists the held one idle:\n%s", out)
	}
	members := []string{"--input", "urls=" + srv.URL("/members"), "--input", `fields={"welcome":"#welcome"}`}
	out, errs, code = cli(t, "", append(append([]string{"run", "batch_extract_pages", "--session", id}, members...), shared...)...)
	if code != 0 || !strings.Contains(out, `"welcome": "Welcome alice"`) {
		t.Fatalf("in the imported session: exit %d\n%s\n%s", code, out, errs)
	}
	holder.stderr.waitFor(t, regexp.MustCompile(`saved session `+id+` to .*login2.json \(a run in it ended\)`), holder.done)
	// A password cannot travel to the holder: the advice says what does.
	_, errs, code = cli(t, "", append([]string{"run", "login", "--session", id, "--input", "url=" + srv.URL("/login"),
		"--input", "username=" + fixture.LoginUser, "--input", "password=x"}, shared...)...)
	if code != 1 || !strings.Contains(errs, "recovery: a run with secret inputs (a password) runs in the process that opens its session: use --session new here") {
		t.Fatalf("secret into a held session: exit %d %s", code, errs)
	}
	// Exporting a session held elsewhere says who saves it.
	_, errs, code = cli(t, "", append([]string{"sessions", "export", id, "-o", filepath.Join(dir, "x.json")}, shared...)...)
	if code != 1 || !strings.Contains(errs, "lives in another browsertask process") || !strings.Contains(errs, "--save FILE") {
		t.Fatalf("export elsewhere: exit %d %s", code, errs)
	}
	if _, errs, code = cli(t, "", append([]string{"sessions", "close", id}, shared...)...); code != 0 || !strings.Contains(errs, "closed "+id) {
		t.Fatalf("close: exit %d %s", code, errs)
	}
	if _, code := holder.wait(t); code != 0 || !strings.Contains(holder.stderr.String(), "session "+id+" was closed") {
		t.Fatalf("holder: exit %d\n%s", code, holder.stderr.String())
	}
	if st, err := os.Stat(state2); err != nil || st.Mode().Perm() != 0o600 {
		t.Fatalf("state file: %v %v", err, st)
	}
	// The holder's saved state starts a later run logged in.
	out, errs, code = cli(t, "", append(append([]string{"run", "batch_extract_pages", "--session-state", state2}, members...), shared...)...)
	if code != 0 || !strings.Contains(out, `"welcome": "Welcome alice"`) {
		t.Fatalf("--session-state: exit %d\n%s\n%s", code, out, errs)
	}
	// Unknown verbs suggest.
	_, errs, _ = cli(t, "", append([]string{"sessions", "nwe"}, shared...)...)
	if !strings.Contains(errs, `unknown sessions command "nwe": did you mean "new"?`) {
		t.Fatalf("sessions nwe: %s", errs)
	}
}
