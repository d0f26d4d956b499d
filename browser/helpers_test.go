package browser

import (
	"context"
	"testing"
	"time"

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

func testCtx(t *testing.T, d time.Duration) context.Context {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), d)
	t.Cleanup(cancel)
	return ctx
}

// testTab opens session sessionID of m (launching the browser on first
// use, under a deadline of its own) and takes a tab held for the rest of
// the test at most; the caller releases it.
func testTab(t *testing.T, m *Manager, sessionID string) *Tab {
	t.Helper()
	s, err := m.Session(testCtx(t, 30*time.Second), sessionID)
	if err != nil {
		t.Fatal(err)
	}
	tb, err := s.AcquireTab(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	return tb
}
