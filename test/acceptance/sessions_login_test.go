package acceptance

// Issue 4, acceptance 1-3: login in a session (semantic detection), the
// members-only page in that session and not in another, login failures,
// secrets nowhere in the database, events or logs, export → close → restore.

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/browsertask/browsertask/internal/fixture"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// membersInputs extracts the members-only page.
func membersInputs(fx *fixture.Server) obj {
	return obj{"urls": []any{fx.URL("/members")}, "fields": obj{"secret": "#secret"}, "includeText": false}
}

// newSession creates a browser session and returns its id.
func newSession(t *testing.T, cs *sdk.ClientSession, args obj) string {
	t.Helper()
	s := callOK(t, cs, "create_browser_session", args)
	id, _ := s["sessionId"].(string)
	if !strings.HasPrefix(id, "sess_") || num(s, "expiresAt") <= num(s, "createdAt") {
		t.Fatalf("create_browser_session: %v", s)
	}
	return id
}

func TestBlackboxSessionsAndLogin(t *testing.T) {
	fixture.NeedChromium(t)
	t.Parallel()
	fx := fixture.New(t)
	p := startServe(t)
	cs := connectHTTP(t, p, nil)
	wrong := "WrongPass-77zz-nope"
	loginArgs := func(page, password string) obj {
		return obj{"url": fx.URL(page), "username": fixture.LoginUser, "password": password}
	}

	// login outside a session is refused before a run exists.
	if code, msg := callErr(t, cs, "run_task_template", obj{"templateId": "login", "inputs": loginArgs("/login", fixture.LoginPassword)}); code != "INVALID_PARAMETER" || !strings.Contains(msg, "sessionId") {
		t.Fatalf("login without sessionId: %s %s", code, msg)
	}

	// Acceptance 1: semantic login, members page in that session only.
	s1 := newSession(t, cs, nil)
	res := runOK(t, cs, "login", s1, loginArgs("/login", fixture.LoginPassword))
	if res["loggedIn"] != true || !strings.HasSuffix(res["finalUrl"].(string), "/members") || res["sessionId"] != s1 {
		t.Fatalf("login result: %v", res)
	}
	pages := runOK(t, cs, "batch_extract_pages", s1, membersInputs(fx))["pages"].([]any)
	if f := pages[0].(obj)["fields"].(obj); f["secret"] != "members-only-42" {
		t.Fatalf("members page in the logged-in session: %v", pages[0])
	}
	s2 := newSession(t, cs, nil)
	e := runFails(t, cs, "batch_extract_pages", s2, membersInputs(fx), "STEP_EXECUTION_FAILED")
	if !strings.Contains(e["message"].(string), "401") {
		t.Fatalf("another session must get HTTP 401: %v", e)
	}
	listed := map[string]bool{}
	for _, s := range callOK(t, cs, "list_browser_sessions", nil)["sessions"].([]any) {
		listed[s.(obj)["sessionId"].(string)] = true
	}
	if !listed[s1] || !listed[s2] {
		t.Fatalf("list_browser_sessions misses %s or %s: %v", s1, s2, listed)
	}

	// Acceptance 2: missing password field, wrong password.
	noPass := runFails(t, cs, "login", s2, obj{"url": fx.URL("/login-nopass"), "username": "alice", "password": wrong, "timeoutMs": 500}, "TPL_LOGIN_FIELD_NOT_FOUND")
	bad := runFails(t, cs, "login", s2, obj{"url": fx.URL("/login-bare"), "username": "alice", "password": wrong, "successTimeoutMs": 2000}, "STEP_EXECUTION_FAILED")
	if !strings.Contains(noPass["message"].(string), "password") || !strings.Contains(bad["message"].(string), "Invalid credentials") {
		t.Fatalf("login errors: %v / %v", noPass, bad)
	}

	// Acceptance 3: export → close → restore.
	exp := callOK(t, cs, "export_session_state", obj{"sessionId": s1})
	data, mime, _ := readArtifact(t, cs, exp["artifactId"].(string), 0, 262144)
	var state struct {
		Cookies []struct{ Name string }   `json:"cookies"`
		Origins []struct{ Origin string } `json:"origins"`
	}
	if err := json.Unmarshal(data, &state); err != nil || mime != "application/json" || len(state.Cookies) != 1 || state.Cookies[0].Name != "sid" || len(state.Origins) != 1 {
		t.Fatalf("exported state (%s): %s %v", mime, data, err)
	}
	closed := callOK(t, cs, "close_browser_session", obj{"sessionId": s1})
	if closed["sessionId"] != s1 || closed["closedAt"] == nil {
		t.Fatalf("close: %v", closed)
	}
	if code, _ := callErr(t, cs, "close_browser_session", obj{"sessionId": s1}); code != "SESSION_NOT_FOUND" {
		t.Fatalf("closing twice: %s", code)
	}
	if code, _ := callErr(t, cs, "run_task_template", obj{"templateId": "batch_extract_pages", "sessionId": s1, "inputs": membersInputs(fx)}); code != "SESSION_NOT_FOUND" {
		t.Fatalf("run in a closed session: %s", code)
	}
	s3 := newSession(t, cs, obj{"storageStateArtifactId": exp["artifactId"]})
	pages = runOK(t, cs, "batch_extract_pages", s3, membersInputs(fx))["pages"].([]any)
	if f := pages[0].(obj)["fields"].(obj); f["secret"] != "members-only-42" {
		t.Fatalf("members page in the restored session: %v", pages[0])
	}
	var inline obj
	_ = json.Unmarshal(data, &inline)
	s4 := newSession(t, cs, obj{"storageState": inline})
	runOK(t, cs, "batch_extract_pages", s4, membersInputs(fx))
	if code, _ := callErr(t, cs, "create_browser_session", obj{"storageState": obj{"cookies": "nope"}}); code != "INVALID_PARAMETER" {
		t.Fatalf("bad storageState: %s", code)
	}

	// The passwords appear nowhere: database files, events, logs.
	secrets := []string{fixture.LoginPassword, "Tr0ub4dor", `Tr0ub4dor\u00263`, wrong}
	var events strings.Builder
	for _, r := range callOK(t, cs, "list_task_runs", obj{"templateId": "login", "limit": 100})["runs"].([]any) {
		ev := callOK(t, cs, "get_task_run_events", obj{"runId": r.(obj)["runId"]})
		b, _ := json.Marshal(ev)
		events.Write(b)
		run := getRun(t, cs, r.(obj)["runId"].(string))
		b, _ = json.Marshal(run)
		events.Write(b)
	}
	check := func(when string) {
		for _, sec := range secrets {
			if hits := fileContains(t, sec, p.db, p.db+"-wal", p.db+"-shm", p.logPath); len(hits) > 0 {
				t.Errorf("%s: secret %q found in %v", when, sec, hits)
			}
			if strings.Contains(events.String(), sec) {
				t.Errorf("%s: secret %q found in events or runs", when, sec)
			}
		}
	}
	check("while running")
	p.stop(5 * time.Second)
	check("after shutdown")
	if !strings.Contains(p.log(), "browser session created") {
		t.Fatal("the log file checked is not the server's")
	}
}

func TestBlackboxSessionIdleExpiry(t *testing.T) {
	fixture.NeedChromium(t)
	t.Parallel()
	fx := fixture.New(t)
	cs := connectHTTP(t, startServe(t, "--session-idle-ttl-ms", "1500"), nil)
	id := newSession(t, cs, nil)
	// In use, it stays alive past its idle TTL.
	ctx, cancel := fixture.Context(t)
	defer cancel()
	if _, isErr, err := tryCall(ctx, cs, "run_task_template", obj{"templateId": "batch_extract_pages", "sessionId": id,
		"inputs": obj{"urls": []any{fx.URL("/slow?ms=2500")}}, "options": obj{"mode": "sync"}}); err != nil || isErr {
		t.Fatalf("run in the session: %v %v", isErr, err)
	}
	deadline := time.Now().Add(10 * time.Second)
	for {
		found := false
		for _, s := range callOK(t, cs, "list_browser_sessions", nil)["sessions"].([]any) {
			found = found || s.(obj)["sessionId"] == id
		}
		if !found {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("an idle session was not closed after sessionIdleTtlMs")
		}
		time.Sleep(200 * time.Millisecond)
	}
	if code, _ := callErr(t, cs, "run_task_template", obj{"templateId": "batch_extract_pages", "sessionId": id, "inputs": obj{"urls": []any{fx.URL("/page/1")}}}); code != "SESSION_NOT_FOUND" {
		t.Fatalf("run in an expired session: %s", code)
	}
}
