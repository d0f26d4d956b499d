package pagetools

import (
	"context"
	"sync/atomic"
	"time"

	"github.com/go-rod/rod"
	"github.com/go-rod/rod/lib/proto"

	"github.com/browsertask/browsertask/engine"
)

// settleBound is how long an action's answer waits for the page it made
// the main frame load; past it the answer shows the page as it is (the
// next snapshot shows the rest).
const settleBound = 30 * time.Second

// settle runs action and, when the main frame's request for a navigation
// (a link followed, a form submitted, a script setting location) reached
// us while it ran, waits until that frame stopped loading, so the snapshot
// the action answers with is of the page it led to. CDP does not order
// that event before the action's own answer (a form's submission is even
// queued as a task of the page), so a navigation announced later is not
// waited for: the answer then shows the page it left, and the next
// browser_snapshot the new one. No delay is guessed either way.
func settle(ctx context.Context, page *rod.Page, action func() error) error {
	ectx, stop := context.WithCancel(ctx)
	defer stop()
	main := page.FrameID
	var requested atomic.Bool
	stopped := make(chan struct{}, 1)
	wait := page.Context(ectx).EachEvent(
		func(e *proto.PageFrameRequestedNavigation) {
			if e.FrameID == main {
				requested.Store(true)
			}
		},
		func(e *proto.PageFrameStoppedLoading) {
			if e.FrameID == main && requested.Load() {
				select {
				case stopped <- struct{}{}:
				default:
				}
			}
		},
	)
	engine.Go(ectx, nil, "pagetools.settle", wait, nil)
	if err := action(); err != nil {
		return err
	}
	if !requested.Load() {
		return nil
	}
	t := time.NewTimer(settleBound)
	defer t.Stop()
	select {
	case <-stopped:
	case <-t.C:
	case <-ctx.Done():
		return context.Cause(ctx)
	}
	return nil
}
