package snapshot

import (
	"context"
	"errors"
	"strings"

	"github.com/go-rod/rod"
	"github.com/go-rod/rod/lib/proto"

	"github.com/browsertask/browsertask/engine"
)

// Actions are what Act does to an element, by name. "press" only focuses
// the element: the caller then presses the key in the focused element
// (browser.Tab.Press knows the key names).
var Actions = []string{"click", "hover", "fill", "type", "select", "scroll", "focus", "press", "drag"}

// Act does action to the element ref names on page (a reference from the
// tab's refs): click it, hover it, fill it (replace its value with value),
// type value into it (keystrokes appended to what is there), select the
// option of a select whose value or label is value, scroll it into view,
// or focus it (also for press), or drag it onto the element the
// reference value names (drag.go). Errors: INVALID_PARAMETER naming "ref" or
// "action" (unknown reference or action, a select without value),
// STEP_EXECUTION_FAILED when the element is gone from the page, cannot be
// acted on, or has no such option; the CDP error otherwise.
func Act(ctx context.Context, page *rod.Page, refs *Refs, ref, action, value string) error {
	if !known(action) {
		return &engine.Error{Code: engine.InvalidParameter, Message: "action: " + quote(action) + " is not an action",
			Recovery: "use one of " + strings.Join(Actions, ", ")}
	}
	k, err := refs.lookup("ref", ref)
	if err != nil {
		return err
	}
	p := page.Context(ctx)
	if c, ok := refs.sessionOf(p, k.frame); ok {
		return actInFrame(c, k.backend, ref, action, value)
	}
	res, err := proto.DOMResolveNode{BackendNodeID: k.backend}.Call(p)
	if err != nil {
		return &engine.Error{Code: engine.StepExecutionFailed, Message: "ref " + ref + " is no longer on the page", Err: err,
			Recovery: "take a new snapshot: the page changed since the reference was given"}
	}
	el, err := p.ElementFromObject(res.Object)
	if err != nil {
		return err
	}
	var target *rod.Element
	if action == "drag" {
		if target, err = resolve(p, refs, "target", value); err != nil {
			return err
		}
	}
	switch action {
	case "drag":
		err = drag(ctx, page, el, target)
	case "click":
		err = el.Click(proto.InputMouseButtonLeft, 1)
	case "hover":
		err = el.Hover()
	case "fill":
		if err = el.SelectAllText(); err == nil {
			err = el.Input(value)
		}
		if err == nil && value == "" {
			_, err = el.Eval(`function () { this.value = ''; this.dispatchEvent(new Event('input', {bubbles: true})) }`)
		}
	case "type":
		err = el.Input(value)
	case "select":
		err = selectOption(el, value)
	case "scroll":
		err = el.ScrollIntoView()
	case "focus", "press":
		err = el.Focus()
	}
	if err != nil && !errors.Is(err, context.Canceled) && !errors.Is(err, context.DeadlineExceeded) && engine.AsError(err) == nil {
		return &engine.Error{Code: engine.StepExecutionFailed, Message: action + " " + ref + ": " + err.Error(), Err: err,
			Recovery: "take a new snapshot and check the element is visible and enabled"}
	}
	return err
}

// resolve returns the element ref names on p. Errors: INVALID_PARAMETER
// naming field (unknown reference), STEP_EXECUTION_FAILED when the node
// left the page.
func resolve(p *rod.Page, refs *Refs, field, ref string) (*rod.Element, error) {
	k, err := refs.lookup(field, ref)
	if err != nil {
		return nil, err
	}
	res, err := proto.DOMResolveNode{BackendNodeID: k.backend}.Call(p)
	if err != nil {
		return nil, &engine.Error{Code: engine.StepExecutionFailed, Message: field + ": " + ref + " is no longer on the page", Err: err,
			Recovery: "take a new snapshot: the page changed since the reference was given"}
	}
	return p.ElementFromObject(res.Object)
}

func known(action string) bool {
	for _, a := range Actions {
		if a == action {
			return true
		}
	}
	return false
}

// selectOption chooses the option of a select whose value, or else label,
// is value, firing input and change as a person's choice does.
func selectOption(el *rod.Element, value string) error {
	res, err := el.Eval(selectScript, value)
	if err != nil {
		return err
	}
	if s := res.Value.Str(); s != "ok" {
		return &engine.Error{Code: engine.StepExecutionFailed, Message: "select " + quote(value) + ": " + s,
			Recovery: "use one of the options the snapshot lists after \"of\""}
	}
	return nil
}

// Element returns the element ref names on page (in a cross-site frame
// too), for callers that read it before acting (whether a field holds a
// secret) or act on it in ways Act does not (setting a file input's
// files). field names the argument in errors, which are Act's for a
// reference.
func Element(ctx context.Context, page *rod.Page, refs *Refs, field, ref string) (*rod.Element, error) {
	return resolve(page.Context(ctx), refs, field, ref)
}

// selectScript chooses the option of a select by value or label (see
// selectOption); it answers 'ok' or why not.
const selectScript = `function (v) {
  if (this.tagName !== 'SELECT') return 'not a select';
  const o = Array.from(this.options).find(o => o.value === v) || Array.from(this.options).find(o => o.label.trim() === v.trim());
  if (!o) return 'no option with value or label ' + JSON.stringify(v);
  this.value = o.value;
  this.dispatchEvent(new Event('input', {bubbles: true}));
  this.dispatchEvent(new Event('change', {bubbles: true}));
  return 'ok';
}`
