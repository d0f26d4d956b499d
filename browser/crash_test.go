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
	ctx := testCtx(t, 30*time.Second)
	s, err := m.Session(ctx, "sess_crash")
	if err != nil {
		t.Fatal(err)
	}
	p, release, err := s.AcquirePage(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Navigate(ctx, p, srv.URL("/page/1"), WaitLoad); err != nil {
		t.Fatal(err)
	}
	// Page.crash makes the renderer crash, as a real crash would.
	c, cancel := context.WithTimeout(ctx, 2*time.Second)
	_ = proto.PageCrash{}.Call(p.Context(c))
	cancel()
	deadline := time.Now().Add(5 * time.Second)
	for !s.Crashed(p) && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	if !s.Crashed(p) {
		t.Fatal("crash not detected")
	}
	_, err = s.Eval(ctx, p, `1+1`)
	if engine.CodeOf(err) != engine.PageCrashed {
		t.Fatalf("Eval on a crashed tab = %v, want PAGE_CRASHED", err)
	}
	release(true) // a crashed tab is closed, not pooled
	time.Sleep(200 * time.Millisecond)
	p2, release2, err := s.AcquirePage(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer release2(true)
	if p2.TargetID == p.TargetID {
		t.Fatal("crashed tab was reused")
	}
	if r, err := s.Navigate(ctx, p2, srv.URL("/page/2"), WaitLoad); err != nil || r.Status != 200 {
		t.Fatalf("after crash: %+v %v", r, err)
	}
}
