package templates

import (
	"context"
	"encoding/json"

	"github.com/browsertask/browsertask/browser"
	"github.com/browsertask/browsertask/engine"
)

// ScreenshotPages is the screenshot_pages template: one PNG or JPEG image
// artifact per URL.
type ScreenshotPages struct {
	b *browser.Manager
}

var _ engine.Template = (*ScreenshotPages)(nil)

// NewScreenshotPages returns the template, working in the run's session of b.
func NewScreenshotPages(b *browser.Manager) engine.Template { return &ScreenshotPages{b: b} }

// shotInputs are screenshot_pages' validated inputs.
type shotInputs struct {
	URLs     []string  `json:"urls"`
	FullPage bool      `json:"fullPage"`
	Format   string    `json:"format"`
	Quality  int       `json:"quality"`
	Viewport *viewport `json:"viewport"`
	pageLoad
}

func shotInputSchema() string {
	return `{
  "$schema": "https://json-schema.org/draft/2020-12/schema",
  "type": "object", "additionalProperties": false, "required": ["urls"],
  "properties": {
    "urls": ` + urlListSchema + `,
    "fullPage": {"type": "boolean", "default": false, "description": "Capture the whole scrollable page (up to 16384 px tall) instead of the viewport."},
    "format": {"type": "string", "enum": ["png", "jpeg"], "default": "png"},
    "quality": {"type": "integer", "minimum": 1, "maximum": 100, "description": "JPEG quality (jpeg only)."},
    "viewport": ` + viewportSchema() + `,
    "concurrency": ` + concurrencySchema() + `,
    "perPageTimeoutMs": ` + perPageTimeoutSchema() + `,
    "waitFor": ` + waitForSchema + `
  }
}`
}

const shotResultSchema = `{
  "$schema": "https://json-schema.org/draft/2020-12/schema",
  "type": "object", "required": ["summary", "screenshots"],
  "properties": {
    "summary": {"type": "object", "required": ["total", "succeeded", "failed"]},
    "screenshots": {"type": "array", "items": {"type": "object", "required": ["url", "artifactId", "error"],
      "properties": {"url": {"type": "string"}, "finalUrl": {"type": "string"}, "httpStatus": {"type": "integer"},
        "artifactId": {"type": "string", "description": "The image (read it with get_artifact; base64)."},
        "mimeType": {"type": "string"}, "size": {"type": "integer"}, "error": ` + errorObjectSchema + `}}}
  }
}`

// Info describes the template.
func (t *ScreenshotPages) Info() engine.TemplateInfo {
	return engine.TemplateInfo{
		TemplateID: "screenshot_pages", Version: 1, Versions: []int{1},
		Title: "Take screenshots of web pages",
		Description: "Opens each URL (1..100) in Chromium and saves one image artifact per page: PNG (default) or " +
			"JPEG (format, quality), of the viewport (viewport {width, height}, default 1280x800) or the whole page " +
			"(fullPage). The result lists, per URL, the artifactId of its image (read it with get_artifact: base64), " +
			"the final URL and HTTP status. A page that cannot be loaded, times out (NAVIGATION_TIMEOUT) or answers " +
			"HTTP >= 400 gets no image and an error; some failures give partial_success, all failing gives " +
			"STEP_EXECUTION_FAILED. Resumable. The answer of a finished run shows the first 3 screenshots as image " +
			"content (downscaled JPEG, within the answer budget) and links every image (resource_link; " +
			"resources/read returns the original).",
		InputSchema: json.RawMessage(shotInputSchema()), ResultSchema: json.RawMessage(shotResultSchema),
		TrustLevel: "any", Resumable: true, NeedsBrowser: true,
		EstimatedStepsHint: "one step per URL; a screenshot adds 50-300 ms per page",
		Examples:           []json.RawMessage{json.RawMessage(`{"urls":["https://example.com/"],"fullPage":true,"viewport":{"width":1280,"height":800}}`)},
	}
}

func parseShotInputs(raw json.RawMessage) (*shotInputs, error) {
	in := &shotInputs{}
	if err := decodeInputs(raw, in); err != nil {
		return nil, err
	}
	if in.Format == "" {
		in.Format = "png"
	}
	in.pageLoad.applyDefaults()
	return in, nil
}

// Check applies the URL policy and the profile's limits. Errors:
// INVALID_PARAMETER, TRUST_LEVEL_NOT_ALLOWED.
func (t *ScreenshotPages) Check(inputs json.RawMessage, p engine.Profile) error {
	in, err := parseShotInputs(inputs)
	if err != nil {
		return err
	}
	if in.Quality > 0 && in.Format != "jpeg" {
		return engine.Errorf(engine.InvalidParameter, "inputs.quality applies to format jpeg only").
			WithDetails(map[string]any{"field": "inputs.quality"})
	}
	if err := checkConcurrency(in.Concurrency, p); err != nil {
		return err
	}
	return checkURLs(in.URLs, urlPolicy(t.b, p))
}

// Run captures every URL. Errors: STEP_EXECUTION_FAILED (every page
// failed), EXECUTION_ERROR (browser lost), ctx's cause.
func (t *ScreenshotPages) Run(ctx context.Context, env engine.Env) (*engine.Outcome, error) {
	in, err := parseShotInputs(env.Inputs())
	if err != nil {
		return nil, err
	}
	vp := viewport{Width: defaultViewportWidth, Height: defaultViewportHeight}
	if in.Viewport != nil {
		vp = *in.Viewport
	}
	opts := browser.ScreenshotOptions{FullPage: in.FullPage, Format: in.Format, Quality: in.Quality}
	c := &capturePages{template: "screenshot_pages", what: "screenshot", mime: "image/" + in.Format,
		ext: map[string]string{"png": "png", "jpeg": "jpg"}[in.Format], listMime: true,
		setup: func(ctx context.Context, tb *browser.Tab) error { return tb.SetViewport(ctx, vp.Width, vp.Height) },
		take:  func(ctx context.Context, tb *browser.Tab) ([]byte, error) { return tb.Screenshot(ctx, opts) }}
	shots, tally, err := c.run(ctx, t.b, env, dedupe(in.URLs), in.pageLoad)
	if err != nil {
		return nil, err
	}
	res := struct {
		Summary     batchSummary      `json:"summary"`
		Screenshots []json.RawMessage `json:"screenshots"`
	}{Summary: tally.batchSummary, Screenshots: shots}
	return tally.outcome(res, nil)
}
