package templates

import (
	"strings"
	"testing"

	"github.com/browsertask/browsertask/engine"
	"github.com/browsertask/browsertask/internal/fixture"
)

// membersStatus loads /members in session id and returns the HTTP status.
func membersStatus(t *testing.T, srv *fixture.Server, id string) int {
	t.Helper()
	ctx, cancel := fixture.Context(t)
	defer cancel()
	s, err := testManager(t).Session(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	tb, err := s.AcquireTab(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer tb.Release(true)
	nav, err := tb.Navigate(ctx, srv.URL("/members"), "load")
	if err != nil {
		t.Fatal(err)
	}
	return nav.Status
}

func TestLoginSemanticDetection(t *testing.T) {
	srv := fixture.New(t)
	m := testManager(t)
	for _, page := range []string{"/login", "/login-bare"} {
		env := newEnv(t, mustJSON(t, map[string]any{"url": srv.URL(page), "username": fixture.LoginUser, "password": fixture.LoginPassword}))
		env.sessionID = "sess_login" + strings.ReplaceAll(page, "/", "_")
		out, err := runTemplate(t, NewLogin(m), env)
		if err != nil {
			t.Fatalf("%s: %v", page, err)
		}
		res := resultOf(t, out)
		if res["loggedIn"] != true || !strings.HasSuffix(res["finalUrl"].(string), "/members") {
			t.Fatalf("%s: result %v", page, res)
		}
		if st := membersStatus(t, srv, env.sessionID); st != 200 {
			t.Fatalf("%s: members page after login: HTTP %d", page, st)
		}
	}
	if st := membersStatus(t, srv, "sess_other"); st != 401 {
		t.Fatalf("another session sees the members page: HTTP %d", st)
	}
	// Explicit selectors and a success selector work too.
	env := newEnv(t, mustJSON(t, map[string]any{"url": srv.URL("/login"), "username": fixture.LoginUser, "password": fixture.LoginPassword,
		"fields":  map[string]string{"username": "#f1", "password": "#f2", "submit": "#signin"},
		"success": map[string]string{"selector": "#welcome", "urlContains": "/members"}}))
	env.sessionID = "sess_explicit"
	if _, err := runTemplate(t, NewLogin(m), env); err != nil {
		t.Fatal(err)
	}
}

func TestLoginFailures(t *testing.T) {
	srv := fixture.New(t)
	m := testManager(t)
	env := newEnv(t, mustJSON(t, map[string]any{"url": srv.URL("/login-nopass"), "username": "alice", "password": "x-secret-1", "timeoutMs": 500}))
	_, err := runTemplate(t, NewLogin(m), env)
	if e := engine.AsError(err); e == nil || e.Code != engine.TplLoginFieldNotFound || !strings.Contains(e.Message, "password") {
		t.Fatalf("no password field: %v", err)
	}
	env = newEnv(t, mustJSON(t, map[string]any{"url": srv.URL("/login"), "username": "alice", "password": "wrong-password-9", "successTimeoutMs": 1500}))
	_, err = runTemplate(t, NewLogin(m), env)
	e := engine.AsError(err)
	if e == nil || e.Code != engine.StepExecutionFailed || !strings.Contains(e.Message, "Invalid credentials") {
		t.Fatalf("wrong password: %v", err)
	}
	if strings.Contains(e.Message, "wrong-password-9") {
		t.Fatalf("the error repeats the password: %s", e.Message)
	}
	// The schema marks the password secret: the engine masks it.
	tpl := NewLogin(m)
	if !strings.Contains(string(tpl.Info().InputSchema), `"x-secret": true`) {
		t.Fatal("password not marked secret in the schema")
	}
}
