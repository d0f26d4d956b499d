package templates

import (
	"encoding/json"

	"github.com/browsertask/browsertask/browser"
	"github.com/browsertask/browsertask/engine"
	"github.com/browsertask/browsertask/modelfill"
)

// ExtractStructured is the extract_structured template: for every URL it
// fills the caller's options.outputSchema from what the page states in
// machine-readable form (package structured) and asks a model only for the
// properties still missing, when one is configured (package modelfill).
type ExtractStructured struct {
	b     *browser.Manager
	model modelfill.Sampler
}

var (
	_ engine.Template = (*ExtractStructured)(nil)
	_ engine.Keeper   = (*ExtractStructured)(nil)
)

// NewExtractStructured returns the template; it opens pages in the run's
// session of b and asks model (nil: no model, the missing properties stay
// missing) for what the pages' own data did not give.
func NewExtractStructured(b *browser.Manager, model modelfill.Sampler) engine.Template {
	return &ExtractStructured{b: b, model: model}
}

// structuredInputs are extract_structured's validated inputs.
type structuredInputs struct {
	URLs        []string `json:"urls"`
	Instruction string   `json:"instruction"`
	// Render is "browser" (default) or "http": the page's HTML fetched
	// without a browser (structured data is in the HTML a server sends;
	// nothing scripts add is seen).
	Render string `json:"render"`
	pageLoad
}

// parseStructuredInputs decodes inputs and applies the defaults. Errors:
// INVALID_PARAMETER.
func parseStructuredInputs(raw json.RawMessage) (*structuredInputs, error) {
	in := &structuredInputs{}
	if err := decodeInputs(raw, in); err != nil {
		return nil, err
	}
	in.pageLoad.applyDefaults()
	if in.Render == "" {
		in.Render = renderBrowser
	}
	return in, nil
}

// structuredInputSchema is extract_structured's input JSON Schema.
const structuredInputSchema = `{
  "$schema": "https://json-schema.org/draft/2020-12/schema",
  "type": "object",
  "additionalProperties": false,
  "required": ["urls"],
  "properties": {
    "urls": {
      "type": "array", "minItems": 1, "maxItems": 1000,
      "description": "Absolute http(s) URLs to fill options.outputSchema from, one object per page; duplicates are removed, order is kept. The server's maxUrls also applies.",
      "items": {"type": "string", "minLength": 1, "maxLength": 8192}
    },
    "instruction": {"type": "string", "maxLength": 4000, "description": "Shown to the model with each page that still has missing properties (e.g. \"prices without tax\"); unused when no model is configured or nothing is missing."},
    "render": {"type": "string", "enum": ["browser", "http"], "default": "browser", "description": "How pages are read: \"browser\" (Chromium, the default: what the page shows after its scripts ran) or \"http\" (the HTML the server sends, fetched and parsed without a browser: much faster; JSON-LD, microdata, meta tags and x-selector hints in server-rendered markup are all there, nothing scripts add is; in a named session the browser is used)."},
    "concurrency": ` + concurrencySchema + `,
    "perPageTimeoutMs": ` + perPageTimeoutSchema + `,
    "waitFor": ` + waitForSchema + `
  }
}`

// structuredResultSchema is extract_structured's result JSON Schema.
const structuredResultSchema = `{
  "$schema": "https://json-schema.org/draft/2020-12/schema",
  "type": "object",
  "required": ["summary", "items", "artifactId"],
  "properties": {
    "summary": {
      "type": "object",
      "required": ["total", "succeeded", "failed", "promptTokens", "completionTokens", "modelCalls"],
      "properties": {
        "total": {"type": "integer"}, "succeeded": {"type": "integer"}, "failed": {"type": "integer"},
        "promptTokens": {"type": "integer", "description": "Prompt tokens the model reported, all pages and attempts."},
        "completionTokens": {"type": "integer", "description": "Completion tokens the model reported, all pages and attempts."},
        "modelCalls": {"type": "integer", "description": "Questions sent to the model (0 when every page's own data sufficed or no model is configured)."}
      }
    },
    "items": {
      "type": "array",
      "items": {
        "type": "object", "required": ["url", "object", "error"],
        "properties": {
          "url": {"type": "string"},
          "object": {"anyOf": [{"type": "object", "description": "The page's object; it validates against options.outputSchema."}, {"type": "null"}]},
          "error": ` + errorObjectSchema + `
        }
      }
    },
    "artifactId": {"type": "string", "description": "items.json: every page with its object, the source of each value, the properties still missing and its error."},
    "ndjsonArtifactId": {"type": "string", "description": "items.ndjson: the object of every page that succeeded, one JSON object per line (absent when none did)."}
  }
}`

// Info describes the template.
func (t *ExtractStructured) Info() engine.TemplateInfo {
	return engine.TemplateInfo{
		TemplateID: "extract_structured",
		Version:    1,
		Versions:   []int{1},
		Title:      "Fill a JSON Schema from each of a list of web pages",
		Description: "Requires options.outputSchema: the JSON Schema (2020-12) of the object you want from every page. " +
			"Opens each URL in a real Chromium (or, with render \"http\", fetches its HTML without a browser: much faster for server-rendered shops and articles) and fills the schema's properties from deterministic sources first, " +
			"at no cost: per-property hints in the schema (\"x-selector\": a CSS selector, with \"x-attr\" for an " +
			"attribute), then JSON-LD, microdata, RDFa Lite, OpenGraph and other meta tags, matched by property name " +
			"and common synonyms (price ← offers.price or product:price:amount, name ← headline or og:title…) and " +
			"coerced to the types the schema asks for (\"$1,299.00\" → 1299, dates → ISO 8601). A model is asked only " +
			"for what is still missing, and only when there is one: the server's configured endpoint (--model-url), " +
			"else your own model through MCP sampling when your client declared the sampling capability (the run " +
			"then waits for each sampling/createMessage answer: on tasks/result for a 2025-11-25 task, in tasks/get's " +
			"inputRequests for a 2026-07-28 task). The page text of pages with missing properties is sent to that " +
			"model (cut to about 6000 tokens), with the schema and your instruction. Each page gives one object that validates against the schema, or fails " +
			"with STEP_EXECUTION_FAILED naming the validation problems (e.g. \"price: required property is missing\"); " +
			"some failing gives partial_success, all failing STEP_EXECUTION_FAILED. The result lists every page's " +
			"object; items.json adds where each value came from, items.ndjson holds one object per line. The summary " +
			"counts the model's calls and tokens, and so do the run's metrics (all attempts). Example options.outputSchema: {\"type\":\"object\",\"required\":" +
			"[\"name\",\"price\"],\"properties\":{\"name\":{\"type\":\"string\"},\"price\":{\"type\":\"number\"}," +
			"\"currency\":{\"type\":\"string\"},\"rating\":{\"type\":\"number\"}}}. Resumable: after a restart, pages " +
			"already done are neither fetched nor sent to the model again.",
		InputSchema:          json.RawMessage(structuredInputSchema),
		ResultSchema:         json.RawMessage(structuredResultSchema),
		TrustLevel:           "any",
		Resumable:            true,
		ContinuesEarlierRuns: true,
		NeedsBrowser:         true,
		UsesOutputSchema:     true,
		EstimatedStepsHint:   "one step per unique URL; pages a model completes take as long as the model answers",
		Examples: []json.RawMessage{json.RawMessage(`{"urls":["https://shop.example/p/1","https://shop.example/p/2"],` +
			`"instruction":"prices as shown, without shipping","concurrency":4}`)},
	}
}

// Check applies the URL policy to every URL and the profile's limits.
// options.outputSchema is checked by the engine (required, JSON Schema
// 2020-12) and compiled again by Run. Errors: INVALID_PARAMETER,
// TRUST_LEVEL_NOT_ALLOWED, each naming the field.
func (t *ExtractStructured) Check(inputs json.RawMessage, p engine.Profile) error {
	in, err := parseStructuredInputs(inputs)
	if err != nil {
		return err
	}
	if p.MaxURLs > 0 && len(in.URLs) > p.MaxURLs {
		return engine.Errorf(engine.InvalidParameter, "inputs.urls: %d URLs exceed this server's maxUrls %d; split the list into several runs", len(in.URLs), p.MaxURLs).
			WithDetails(map[string]any{"field": "inputs.urls", "maxUrls": p.MaxURLs})
	}
	if err := checkConcurrency(in.Concurrency, p); err != nil {
		return err
	}
	return checkURLs(in.URLs, urlPolicy(t.b, p))
}
