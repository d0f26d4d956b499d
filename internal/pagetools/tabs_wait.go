package pagetools

import (
	"context"
	"strings"
	"time"

	"github.com/go-rod/rod/lib/proto"

	"github.com/browsertask/browsertask/engine"
	"github.com/browsertask/browsertask/internal/snapshot"
)

// frameWaitStep is how long each round of waitText waits on the main
// document before it looks in the page's frames.
const frameWaitStep = 500 * time.Millisecond

// waitText waits until the current tab shows text: in the main document's
// visible text (the tab's own wait) or, on a page with iframes, in a
// snapshot, which reads every frame (cross-site ones included) — the main
// document's innerText holds none of its frames' text. Errors:
// ELEMENT_NOT_FOUND (details.text) once timeout passed; the tab's errors.
func waitText(ctx context.Context, p *page, text string, timeout time.Duration) error {
	if timeout <= 0 {
		timeout = 10 * time.Second
	}
	deadline := time.Now().Add(timeout)
	for {
		step := min(time.Until(deadline), frameWaitStep)
		err := p.tab.WaitText(ctx, text, max(step, time.Millisecond))
		if engine.CodeOf(err) != engine.ElementNotFound {
			return err
		}
		if ft, ferr := (proto.PageGetFrameTree{}).Call(p.tab.Page().Context(ctx)); ferr == nil && len(ft.FrameTree.ChildFrames) > 0 {
			snap, serr := snapshot.Take(ctx, p.tab.Page(), p.refs, snapshot.Options{})
			if serr == nil && strings.Contains(snap.Text, text) {
				return nil
			}
		}
		if !time.Now().Before(deadline) {
			return engine.Errorf(engine.ElementNotFound, "the text %q did not appear within %d ms", text, timeout.Milliseconds()).
				WithDetails(map[string]any{"text": text})
		}
	}
}
