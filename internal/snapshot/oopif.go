package snapshot

import (
	"context"
	"encoding/json"
	"errors"

	"github.com/go-rod/rod"
	"github.com/go-rod/rod/lib/proto"

	"github.com/browsertask/browsertask/engine"
)

// frameClient addresses CDP commands to the target of an out-of-process
// frame (a cross-site iframe under site isolation) by its session. Such a
// frame's accessibility tree and nodes live in another renderer: the
// page's own session cannot read or resolve them.
type frameClient struct {
	b   *rod.Browser
	id  proto.TargetSessionID
	ctx context.Context
}

// Call implements proto.Client.
func (c frameClient) Call(ctx context.Context, sessionID, method string, params any) ([]byte, error) {
	return c.b.Call(ctx, sessionID, method, params)
}

// GetSessionID implements proto.Sessionable.
func (c frameClient) GetSessionID() proto.TargetSessionID { return c.id }

// GetContext implements proto.Contextable.
func (c frameClient) GetContext() context.Context { return c.ctx }

// frameSession returns a session on out-of-process frame frame of p,
// attaching to its target (whose id is the frame's) on first use; the
// session is kept in refs for the frame's document and reused by Act.
func (r *Refs) frameSession(p *rod.Page, frame proto.PageFrameID) (frameClient, error) {
	c := frameClient{b: p.Browser(), ctx: p.GetContext()}
	r.mu.Lock()
	id, ok := r.frames[frame]
	r.mu.Unlock()
	if ok {
		c.id = id
		return c, nil
	}
	res, err := proto.TargetAttachToTarget{TargetID: proto.TargetTargetID(frame), Flatten: true}.Call(p.Browser().Context(p.GetContext()))
	if err != nil {
		return c, err
	}
	c.id = res.SessionID
	r.mu.Lock()
	r.frames[frame] = res.SessionID
	r.mu.Unlock()
	return c, nil
}

// sessionOf returns the session of an out-of-process frame the snapshot
// read, if frame is one.
func (r *Refs) sessionOf(p *rod.Page, frame proto.PageFrameID) (frameClient, bool) {
	r.mu.Lock()
	id, ok := r.frames[frame]
	r.mu.Unlock()
	return frameClient{b: p.Browser(), id: id, ctx: p.GetContext()}, ok
}

// Scripts of actions in an out-of-process frame. Input events cannot be
// aimed there from the page's session without the frame's offset, so the
// element acts through the DOM: click() (a click event, no pointer
// events), hover's mouse and pointer events (CSS :hover does not apply),
// a value set with input and change events for fill and type.
const (
	frameClick = `function () { this.scrollIntoView({block: 'center'}); if (this.focus) this.focus(); this.click(); return 'ok' }`
	frameHover = `function () {
  for (const t of ['pointerover', 'pointerenter', 'mouseover', 'mouseenter', 'pointermove', 'mousemove'])
    this.dispatchEvent(new (t.startsWith('pointer') ? PointerEvent : MouseEvent)(t, {bubbles: !t.endsWith('enter'), composed: true}));
  return 'ok' }`
	frameValue = `function (v, append) {
  if (!('value' in this)) return 'not a text field';
  this.focus(); this.value = append ? this.value + v : v;
  this.dispatchEvent(new Event('input', {bubbles: true})); this.dispatchEvent(new Event('change', {bubbles: true}));
  return 'ok' }`
	frameScroll = `function () { this.scrollIntoView({block: 'center'}); return 'ok' }`
	frameFocus  = `function () { this.focus(); return 'ok' }`
)

// actInFrame does action to node backend of an out-of-process frame
// through session c. Errors as Act's.
func actInFrame(c frameClient, backend proto.DOMBackendNodeID, ref, action, value string) error {
	res, err := proto.DOMResolveNode{BackendNodeID: backend}.Call(c)
	if err != nil {
		return &engine.Error{Code: engine.StepExecutionFailed, Message: "ref " + ref + " is no longer on the page", Err: err,
			Recovery: "take a new snapshot: the page changed since the reference was given"}
	}
	fn, args := "", ""
	arg := func(v any) string { b, _ := json.Marshal(v); return string(b) }
	switch action {
	case "click":
		fn = frameClick
	case "hover":
		fn = frameHover
	case "fill", "type":
		fn = frameValue
		args = arg(value) + ", " + arg(action == "type")
	case "select":
		fn = selectScript
		args = arg(value)
	case "scroll":
		fn = frameScroll
	case "focus", "press":
		fn = frameFocus
	default:
		return &engine.Error{Code: engine.StepExecutionFailed, Message: action + " " + ref + ": not possible inside a cross-site frame",
			Recovery: "act on the frame's elements one at a time (click, fill, select, hover, scroll, focus)"}
	}
	// The arguments are written into the call as JSON literals.
	call := "function () { return (" + fn + ").call(this, " + args + ") }"
	out, err := proto.RuntimeCallFunctionOn{ObjectID: res.Object.ObjectID, FunctionDeclaration: call, ReturnByValue: true}.Call(c)
	if err == nil && out.ExceptionDetails != nil {
		err = errors.New(out.ExceptionDetails.Text)
	}
	if err != nil {
		return &engine.Error{Code: engine.StepExecutionFailed, Message: action + " " + ref + ": " + err.Error(), Err: err,
			Recovery: "take a new snapshot and check the element is visible and enabled"}
	}
	if s := out.Result.Value.Str(); s != "ok" {
		return &engine.Error{Code: engine.StepExecutionFailed, Message: action + " " + ref + ": " + s,
			Recovery: "take a new snapshot and choose an element that takes this action"}
	}
	return nil
}

// isRemote reports whether frame is an out-of-process frame read through a
// session of its own.
func (r *Refs) isRemote(frame proto.PageFrameID) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	_, ok := r.frames[frame]
	return ok
}
