package snapshot

import (
	"context"

	"github.com/go-rod/rod"
	"github.com/go-rod/rod/lib/proto"

	"github.com/browsertask/browsertask/engine"
)

// Element returns the element ref names on page, for tools that act on it
// in ways Act does not (setting a file input's files). field names the
// argument in errors. Errors: INVALID_PARAMETER naming field (not a
// reference, or unknown on this tab), STEP_EXECUTION_FAILED when the node
// is gone from the page.
func Element(ctx context.Context, page *rod.Page, refs *Refs, field, ref string) (*rod.Element, error) {
	k, err := refs.lookup(field, ref)
	if err != nil {
		return nil, err
	}
	p := page.Context(ctx)
	res, err := proto.DOMResolveNode{BackendNodeID: k.backend}.Call(p)
	if err != nil {
		return nil, &engine.Error{Code: engine.StepExecutionFailed, Message: field + " " + ref + " is no longer on the page", Err: err,
			Recovery: "take a new snapshot: the page changed since the reference was given"}
	}
	return p.ElementFromObject(res.Object)
}
