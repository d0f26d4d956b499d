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
