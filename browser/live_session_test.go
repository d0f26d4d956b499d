package browser

import (
	"context"
	"testing"

	"github.com/browsertask/browsertask/internal/fixture"
)

// TestSessionTabsInTheLiveViews: a tab the interactive tools hold in a
// named session is filed under LiveSessionKey with the tools' label, never
// under a run; SessionLiveKey says the session lives here; a viewer gets
// frames; a tab a run acquired stays its run's when shown again; closing
// the session ends the viewer's frames and leaves the browser no tab or
// frame of it.
func TestSessionTabsInTheLiveViews(t *testing.T) {
	srv := fixture.New(t)
	m := newManager(t, Options{})
	ctx := testCtx(t)
	if err := m.OpenSession(ctx, "sess_tools", nil); err != nil {
		t.Fatal(err)
	}
	key, here := m.SessionLiveKey("sess_tools")
	if key != "session:sess_tools" || !here {
		t.Fatalf("SessionLiveKey = %q, %v; want session:sess_tools, true", key, here)
	}
	if _, here := m.SessionLiveKey("sess_elsewhere"); here {
		t.Fatal("a session this process never opened is said to live here")
	}
	s, err := m.Session(ctx, "sess_tools")
	if err != nil {
		t.Fatal(err)
	}
	tb, err := s.AcquireTab(context.WithoutCancel(ctx))
	if err != nil {
		t.Fatal(err)
	}
	tb.ShowLive("sess_tools", "t1")
	tb.ShowLive("sess_tools", "t9") // a second call changes nothing
	if _, err := tb.Navigate(ctx, srv.URL("/live/ticker"), WaitLoad); err != nil {
		t.Fatal(err)
	}
	tabs := m.LiveTabs(ctx, key)
	if len(tabs) != 1 || tabs[0].Label != "t1" || tabs[0].URL != srv.URL("/live/ticker") || tabs[0].Closed {
		t.Fatalf("the session's live tabs %+v; want t1 at the ticker", tabs)
	}
	frames, err := m.WatchTab(ctx, key, tabs[0].ID, 320, 240)
	if err != nil {
		t.Fatal(err)
	}
	if f := nextFrame(t, frames); len(f.JPEG) == 0 {
		t.Fatal("an empty frame")
	}

	rctx, run := runTab(t, m, "ses_run", "run_shown")
	run.ShowLive("ses_run", "t1")
	if got := m.LiveTabs(rctx, LiveSessionKey("ses_run")); len(got) != 0 {
		t.Errorf("a run's tab was filed under its session too: %+v", got)
	}
	if got := m.LiveTabs(rctx, "run_shown"); len(got) != 1 || got[0].Label != "" {
		t.Errorf("the run's live tabs %+v; want its one tab, unlabelled", got)
	}
	run.Release(false)

	if err := m.CloseSession(ctx, "sess_tools"); err != nil {
		t.Fatal(err)
	}
	for range frames { // closed by the session's close
	}
	if got := m.LiveTabs(ctx, key); len(got) != 0 {
		t.Errorf("live tabs of the closed session: %+v; want none", got)
	}
	if f := m.LiveFrame(key, tabs[0].ID); f != nil {
		t.Error("the closed session's last frame is kept")
	}
	tb.Release(false) // the tools let go later: nothing left to close
}
