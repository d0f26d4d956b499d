package browser

import (
	"encoding/json"
	"net/url"
	"strings"
	"testing"

	"github.com/browsertask/browsertask/engine"
	"github.com/browsertask/browsertask/internal/fixture"
)

// evalIn loads u in a tab of session id and evaluates expr there.
func evalIn(t *testing.T, m *Manager, id, u, expr string) (string, int) {
	t.Helper()
	tb := testTab(t, m, id)
	defer tb.Release(true)
	ctx := testCtx(t)
	nav, err := tb.Navigate(ctx, u, WaitLoad)
	if err != nil {
		t.Fatal(err)
	}
	raw, err := tb.Eval(ctx, expr)
	if err != nil {
		t.Fatal(err)
	}
	var v string
	_ = json.Unmarshal(raw, &v)
	return v, nav.Status
}

// TestExportImportState: cookies and localStorage saved from a logged-in
// session restore the login into a new session; a closed named session
// answers SESSION_NOT_FOUND afterwards.
func TestExportImportState(t *testing.T) {
	srv := fixture.New(t)
	m := newManager(t, Options{})
	ctx := testCtx(t)
	if err := m.OpenSession(ctx, "sess_a", nil); err != nil {
		t.Fatal(err)
	}
	// Log in by posting the form from the page.
	form := url.Values{"f1": {fixture.LoginUser}, "f2": {fixture.LoginPassword}}.Encode()
	js := `fetch('/login', {method: 'POST', headers: {'Content-Type': 'application/x-www-form-urlencoded'}, body: '` + form + `'}).then(r => r.url)`
	if got, _ := evalIn(t, m, "sess_a", srv.URL("/login"), js); !strings.HasSuffix(got, "/members") {
		t.Fatalf("login landed on %q", got)
	}
	if got, st := evalIn(t, m, "sess_a", srv.URL("/members"), `document.querySelector('#secret').textContent`); st != 200 || got != "members-only-42" {
		t.Fatalf("members page: %d %q", st, got)
	}
	raw, err := m.ExportSession(ctx, "sess_a")
	if err != nil {
		t.Fatal(err)
	}
	var st StorageState
	if err := json.Unmarshal(raw, &st); err != nil {
		t.Fatal(err)
	}
	if len(st.Cookies) != 1 || st.Cookies[0].Name != "sid" || len(st.Origins) != 1 ||
		st.Origins[0].Origin != srv.Base() || st.Origins[0].LocalStorage[0] != (NameValue{"theme", "dark"}) {
		t.Fatalf("exported state: %s", raw)
	}
	if err := m.CloseSession(ctx, "sess_a"); err != nil {
		t.Fatal(err)
	}
	if _, err := m.Session(ctx, "sess_a"); engine.CodeOf(err) != engine.SessionNotFound {
		t.Fatalf("closed named session: %v", err)
	}
	// A fresh session is logged out; the restored one is logged in.
	if _, st := evalIn(t, m, "sess_blank", srv.URL("/members"), `document.title`); st != 401 {
		t.Fatalf("blank session sees members page: %d", st)
	}
	if err := m.OpenSession(ctx, "sess_b", raw); err != nil {
		t.Fatal(err)
	}
	if got, _ := evalIn(t, m, "sess_b", srv.URL("/storage"), `document.querySelector('#theme').textContent`); got != "dark" {
		t.Fatalf("restored localStorage theme = %q", got)
	}
	if got, st := evalIn(t, m, "sess_b", srv.URL("/members"), `document.querySelector('#secret').textContent`); st != 200 || got != "members-only-42" {
		t.Fatalf("restored session: %d %q", st, got)
	}
	if err := m.OpenSession(ctx, "sess_c", json.RawMessage(`{"cookies": 3}`)); engine.CodeOf(err) != engine.InvalidParameter {
		t.Fatalf("bad state: %v", err)
	}
}
