package templates

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/browsertask/browsertask/browser"
	"github.com/browsertask/browsertask/engine"
)

// blockResourcesSchema is the blockResources input of batch_extract_pages
// and crawl_site.
const blockResourcesSchema = `{"type": "array", "uniqueItems": true, "maxItems": 4,
      "items": {"type": "string", "enum": ["image", "media", "font", "stylesheet"]},
      "default": ["image", "media", "font"],
      "description": "Resource types the browser does not load while reading pages: their requests are failed before they reach the network, which saves bandwidth and renderer time. Extraction does not read them: fields, title, text and links come out the same (an attr such as src still gives the URL). Default [\"image\", \"media\", \"font\"]; [] loads everything; add \"stylesheet\" only when no field or text depends on CSS (hidden elements and text layout do). Applies only to pages loaded in the browser: render \"browser\", and the pages render \"auto\" reads in the browser (an HTTP fetch loads no sub-resources)."}`

// resourceBlocking is the blockResources input, embedded in the inputs of
// the extraction templates. Nil means the default.
type resourceBlocking struct {
	BlockResources *[]string `json:"blockResources"`
}

// blockedTypes returns the resource types to block: the input, or
// image, media and font when it was left out.
func (r resourceBlocking) blockedTypes() []string {
	if r.BlockResources == nil {
		return []string{browser.ResourceImage, browser.ResourceMedia, browser.ResourceFont}
	}
	return *r.BlockResources
}

// check refuses unknown and repeated types. Errors: INVALID_PARAMETER
// naming inputs.blockResources[i] and the accepted values.
func (r resourceBlocking) check() error {
	if r.BlockResources == nil {
		return nil
	}
	known := browser.ResourceTypes()
	for i, t := range *r.BlockResources {
		field := fmt.Sprintf("inputs.blockResources[%d]", i)
		if !slices.Contains(known, t) {
			return engine.Errorf(engine.InvalidParameter, "%s: unknown resource type %q; use one of %s", field, t, strings.Join(known, ", ")).
				WithDetails(map[string]any{"field": field})
		}
		if slices.Index(*r.BlockResources, t) < i {
			return engine.Errorf(engine.InvalidParameter, "%s: %q is listed twice; list each type once", field, t).
				WithDetails(map[string]any{"field": field})
		}
	}
	return nil
}

// setup is the urlPool hook that gives each tab the run's blocking when
// the run takes it (a tab of a named session comes back from an earlier
// run with nothing blocked). Tabs are only used by render "browser".
func (r resourceBlocking) setup() func(ctx context.Context, tb *browser.Tab) error {
	types := r.blockedTypes()
	return func(ctx context.Context, tb *browser.Tab) error {
		return tb.BlockResources(ctx, types)
	}
}
