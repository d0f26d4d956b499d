package browser

import (
	"log/slog"
	"strings"
	"testing"

	"github.com/browsertask/browsertask/engine"
	"github.com/browsertask/browsertask/internal/fixture"
)

// TestBlockedRequestLogMasksRunSecrets (issue 26, "every string … shown
// passes the run's masker"): a request the URL policy refuses is logged
// with its URL, which may carry a secret a form sent with GET; the log
// line masks it with the masker of the run holding the tab, as the
// run's own log does.
func TestBlockedRequestLogMasksRunSecrets(t *testing.T) {
	var logs fixture.Buffer
	site := fixture.New(t)
	daemon := fixture.New(t) // stands for the daemon's own listener
	m := newManager(t, Options{Logger: slog.New(slog.NewTextHandler(&logs, nil))})
	m.DenyHost(daemon.Host())
	s, err := m.Session(testCtx(t), "sess_log")
	if err != nil {
		t.Fatal(err)
	}
	const secret = "UniqPin4711x"
	ctx := engine.WithRedactor(engine.WithRunID(t.Context(), "run_log"), func(v string) string {
		return strings.ReplaceAll(v, secret, engine.SecretMask)
	})
	tb, err := s.AcquireTab(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer tb.Release(true)
	_, err = tb.Navigate(testCtx(t), site.URL("/redirect?to="+daemon.URL("/page/1?pin="+secret)), WaitLoad)
	if e := engine.AsError(err); err == nil || e.Details["policy"] != "daemon-address" {
		t.Fatalf("navigation: %v, want refused with policy daemon-address", err)
	}
	out := logs.String()
	if !strings.Contains(out, "request blocked by the URL policy") || !strings.Contains(out, "/page/1?pin=***") {
		t.Fatalf("no blocked-request line with the masked URL in the log:\n%s", out)
	}
	if strings.Contains(out, secret) {
		t.Fatalf("the log holds the run's secret:\n%s", out)
	}
}
