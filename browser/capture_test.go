package browser

import (
	"bytes"
	"fmt"
	"testing"

	"github.com/browsertask/browsertask/internal/fixture"
)

// TestScreenshotOfEveryTab: every tab of a session can be captured, not
// only the one in front of the session's window. A screenshot of a tab
// that did not render (hidden behind another tab of the session) used to
// wait until its deadline; which tab is in front depends on the order the
// tabs were opened and used, so the test captures each of several tabs,
// twice.
func TestScreenshotOfEveryTab(t *testing.T) {
	srv := fixture.New(t)
	m := newManager(t, Options{})
	ctx := testCtx(t)
	s, err := m.Session(ctx, "sess_shots")
	if err != nil {
		t.Fatal(err)
	}
	var tabs []*Tab
	for range 3 {
		tb, err := s.AcquireTab(ctx)
		if err != nil {
			t.Fatal(err)
		}
		defer tb.Release(true)
		tabs = append(tabs, tb)
	}
	for round := range 2 {
		for _, tb := range tabs {
			if _, err := tb.Navigate(ctx, srv.URL(fmt.Sprintf("/page/%d", round+1)), WaitLoad); err != nil {
				t.Fatal(err)
			}
		}
		for i, tb := range tabs {
			if err := tb.SetViewport(ctx, 640+10*round, 480); err != nil {
				t.Fatal(err)
			}
			img, err := tb.Screenshot(ctx, ScreenshotOptions{})
			if err != nil {
				t.Fatalf("round %d, tab %d: %v", round, i, err)
			}
			if !bytes.HasPrefix(img, []byte("\x89PNG\r\n\x1a\n")) {
				t.Fatalf("round %d, tab %d: not a PNG: %q", round, i, img[:min(8, len(img))])
			}
		}
	}
}
