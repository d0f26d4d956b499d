package browser

import (
	"context"
	"testing"

	"github.com/browsertask/browsertask/internal/fixture"
)

// newManager returns a Manager with its profiles under a test temp dir,
// closed when the test ends.
func newManager(t *testing.T, o Options) *Manager {
	t.Helper()
	fixture.NeedChromium(t)
	if o.TempDir == "" {
		o.TempDir = t.TempDir()
	}
	m := NewManager(o)
	t.Cleanup(func() { _ = m.Close() })
	return m
}

// testCtx is the context a test's browser calls run under: the test's
// own deadline (fixture.Context), not a guessed bound — a loaded machine
// launches Chromium and loads pages slower, never wrongly. A test whose
// promise is about time bounds that call itself.
func testCtx(t *testing.T) context.Context {
	t.Helper()
	ctx, cancel := fixture.Context(t)
	t.Cleanup(cancel)
	return ctx
}

// testTab opens session sessionID of m (launching the browser on first
// use) and takes a tab held for the rest of
// the test at most; the caller releases it.
func testTab(t *testing.T, m *Manager, sessionID string) *Tab {
	t.Helper()
	s, err := m.Session(testCtx(t), sessionID)
	if err != nil {
		t.Fatal(err)
	}
	tb, err := s.AcquireTab(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	return tb
}
