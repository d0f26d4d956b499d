package browser

import (
	"context"
	"os"
	"testing"
	"time"
)

// requireChromium skips the test when no browser is installed, unless CI is
// set, where a missing browser is a failure.
func requireChromium(t *testing.T) {
	t.Helper()
	if _, err := findBinary(); err != nil {
		if os.Getenv("CI") != "" {
			t.Fatalf("Chromium is required in CI: %v", err)
		}
		t.Skipf("no Chromium: %v", err)
	}
}

// newManager returns a Manager with its profiles under a test temp dir,
// closed when the test ends.
func newManager(t *testing.T, o Options) *Manager {
	t.Helper()
	requireChromium(t)
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
