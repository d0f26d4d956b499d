package snapshot

import (
	"context"

	"github.com/go-rod/rod"
	"github.com/go-rod/rod/lib/proto"

	"github.com/browsertask/browsertask/engine"
)

// dragSteps is how many mouse moves a drag makes between its ends: pages
// that reorder on pointermove and HTML5 drag and drop (which starts after
// the pointer moved a few pixels with the button down) both need moves,
// not a jump.
const dragSteps = 12

// drag presses the left button on from's centre, moves the mouse to to's
// centre in steps and releases it there, as a person drags: it fires the
// pointer and mouse events and, for draggable elements, Chromium's own
// HTML5 drag and drop (dragstart, dragover, drop, dragend). The source is
// scrolled into view first; a target off screen is scrolled to after the
// press, which a page's own drag code may not expect.
func drag(ctx context.Context, p *rod.Page, from, to *rod.Element) error {
	start, err := from.WaitInteractable()
	if err != nil {
		return err
	}
	mouse := p.Context(ctx).Mouse
	if err := mouse.MoveTo(*start); err != nil {
		return err
	}
	if err := mouse.Down(proto.InputMouseButtonLeft, 1); err != nil {
		return err
	}
	release := func() { _ = mouse.Up(proto.InputMouseButtonLeft, 1) }
	if err := to.ScrollIntoView(); err != nil {
		release()
		return err
	}
	shape, err := to.Shape()
	if err != nil {
		release()
		return err
	}
	end := shape.OnePointInside()
	if end == nil {
		release()
		return &engine.Error{Code: engine.StepExecutionFailed, Message: "drag: the target has no visible box",
			Recovery: "take a new snapshot and drag onto a visible element"}
	}
	if err := mouse.MoveLinear(*end, dragSteps); err != nil {
		release()
		return err
	}
	return mouse.Up(proto.InputMouseButtonLeft, 1)
}
