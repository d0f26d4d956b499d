package pagetools

import (
	"context"
	"net/netip"
	"testing"

	"github.com/browsertask/browsertask/browser"
	"github.com/browsertask/browsertask/engine"
)

// fakes: the engine's sessions and the browser's policy, for the checks
// that come before any browser work.
type fakeSessions []*engine.Session

func (f fakeSessions) ListSessions(context.Context) ([]*engine.Session, error)     { return f, nil }
func (fakeSessions) RecordSessionEvent(context.Context, engine.SessionEvent) error { return nil }

type fakeBrowsers struct {
	pol   engine.URLPolicy
	named bool
}

func (f fakeBrowsers) Named(string) bool        { return f.named }
func (f fakeBrowsers) Policy() engine.URLPolicy { return f.pol }
func (fakeBrowsers) Session(context.Context, string) (*browser.Session, error) {
	return nil, engine.Errorf(engine.ExecutionError, "no browser in this test")
}

func TestNavigateHeldToTrustLevelAndSessions(t *testing.T) {
	closed := int64(1)
	tools := New(fakeSessions{{ID: "sess_a"}, {ID: "sess_closed", ClosedAt: &closed}},
		fakeBrowsers{pol: engine.URLPolicy{TrustLevel: "restricted", Resolve: func(string) ([]netip.Addr, error) { return []netip.Addr{netip.MustParseAddr("127.0.0.1")}, nil }}})
	for u, code := range map[string]engine.ErrorCode{
		"http://127.0.0.1:8080/": engine.TrustLevelNotAllowed,
		"http://10.1.2.3/":       engine.TrustLevelNotAllowed,
		"file:///etc/passwd":     engine.InvalidParameter,
		"javascript:alert(1)":    engine.InvalidParameter,
	} {
		e := engine.AsError(tools.checkURL(u))
		if e == nil || e.Code != code || e.Details["field"] != "url" {
			t.Errorf("checkURL(%q) = %v; want %s naming url", u, e, code)
		}
	}
	for id, code := range map[string]engine.ErrorCode{
		"":            engine.InvalidParameter,
		"sess_nope":   engine.SessionNotFound,
		"sess_closed": engine.SessionNotFound,
		"sess_a":      engine.ExecutionError, // open, but not in this process
	} {
		_, err := tools.pages.get(t.Context(), id)
		if engine.CodeOf(err) != code {
			t.Errorf("session %q: %v; want %s", id, err, code)
		}
	}
}
