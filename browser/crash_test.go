package browser

import (
	"context"
	"testing"
	"time"

	"github.com/go-rod/rod/lib/proto"

	"github.com/browsertask/browsertask/engine"
	"github.com/browsertask/browsertask/internal/fixture"
)

func TestRendererCrashIsPageCrashed(t *testing.T) {
	srv := fixture.New(t)
	m := newManager(t, Options{})
	ctx := testCtx(t)
	s, err := m.Session(ctx, "sess_crash")
	if err != nil {
		t.Fatal(err)
	}
	tb, err := s.AcquireTab(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tb.Navigate(ctx, srv.URL("/page/1"), WaitLoad); err != nil {
		t.Fatal(err)
	}
	// Page.crash makes the renderer crash, as a real crash would.
	c, cancel := context.WithTimeout(ctx, 2*time.Second)
	_ = proto.PageCrash{}.Call(tb.Page().Context(c))
	cancel()
	fixture.WaitUntil(t, "the crash to be detected", tb.Crashed)
	_, err = tb.Eval(ctx, `1+1`)
	if engine.CodeOf(err) != engine.PageCrashed {
		t.Fatalf("Eval on a crashed tab = %v, want PAGE_CRASHED", err)
	}
	tb.Release(true) // a crashed tab is closed, not pooled
	waitReleased(t, s)
	tb2, err := s.AcquireTab(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer tb2.Release(true)
	if tb2.Page().TargetID == tb.Page().TargetID {
		t.Fatal("crashed tab was reused")
	}
	if r, err := tb2.Navigate(ctx, srv.URL("/page/2"), WaitLoad); err != nil || r.Status != 200 {
		t.Fatalf("after crash: %+v %v", r, err)
	}
}

// waitReleased waits until every tab of s is handed back: Release returns
// before the tab is pooled or closed, and frees its slot last.
func waitReleased(t *testing.T, s *Session) {
	t.Helper()
	fixture.WaitUntil(t, "the released tabs to be pooled or closed", func() bool { return len(s.slots) == 0 })
}
