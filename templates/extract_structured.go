package templates

import (
	"encoding/json"
	"strings"

	"github.com/browsertask/browsertask/browser"
	"github.com/browsertask/browsertask/engine"
	"github.com/browsertask/browsertask/internal/extract/modelfill"
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

// structuredInputs are extract_structured's validated inputs: exactly one
// of URLs (read those pages) and StartURL (discover the pages by crawling
// from it, within the crawl limits of crawl_site).
type structuredInputs struct {
	URLs []string `json:"urls"`
	// crawlScope is startUrl and the crawl limits, with startUrl only
	// (zero or nil: not given; the defaults are applied by
	// parseStructuredInputs for a crawl).
	crawlScope
	Instruction string `json:"instruction"`
	// Render is "browser" (default), "http" (the page's HTML fetched
	// without a browser: structured data is in the HTML a server sends;
	// nothing scripts add is seen) or "auto" (extract_structured_auto.go).
	Render string `json:"render"`
	pageFormats
	pageLoad
	resourceBlocking
}

// crawling reports whether the run discovers its pages from startUrl.
func (in *structuredInputs) crawling() bool { return in.StartURL != "" }

// parseStructuredInputs decodes inputs, checks that exactly one of urls
// and startUrl is given (and the crawl limits only with startUrl) and
// applies the defaults. Errors: INVALID_PARAMETER naming the fields and
// the fix.
func parseStructuredInputs(raw json.RawMessage) (*structuredInputs, error) {
	in := &structuredInputs{}
	if err := decodeInputs(raw, in); err != nil {
		return nil, err
	}
	switch {
	case len(in.URLs) > 0 && in.StartURL != "":
		return nil, engine.Errorf(engine.InvalidParameter, "inputs.urls and inputs.startUrl are both given; give exactly one: urls to read exactly those pages, or startUrl to discover the pages by crawling from it").
			WithDetails(map[string]any{"field": "inputs.startUrl", "fields": []string{"inputs.urls", "inputs.startUrl"}})
	case len(in.URLs) == 0 && in.StartURL == "":
		return nil, engine.Errorf(engine.InvalidParameter, "inputs.urls or inputs.startUrl is required; give exactly one: urls (1..maxUrls pages to read) or startUrl (a page to crawl from, with maxPages, maxDepth, sameOrigin, include, exclude)").
			WithDetails(map[string]any{"field": "inputs.urls", "fields": []string{"inputs.urls", "inputs.startUrl"}})
	}
	if !in.crawling() {
		limits := []struct {
			name  string
			given bool
		}{{"maxPages", in.MaxPages != 0}, {"maxDepth", in.MaxDepth != nil}, {"sameOrigin", in.SameOrigin != nil},
			{"include", in.Include != nil}, {"exclude", in.Exclude != nil}}
		for _, l := range limits {
			if l.given {
				return nil, engine.Errorf(engine.InvalidParameter, "inputs.%s applies only to a crawl from inputs.startUrl; leave it out with inputs.urls, or give startUrl instead of urls", l.name).
					WithDetails(map[string]any{"field": "inputs." + l.name})
			}
		}
	} else {
		in.crawlScope.applyDefaults()
	}
	in.pageLoad.applyDefaults()
	if in.Render == "" {
		in.Render = renderBrowser
	}
	return in, nil
}

// structuredInputSchema is extract_structured's input JSON Schema. The
// anyOf asks for urls or startUrl; that not both are given is checked by
// Check (a schema's own message for it names neither field).
func structuredInputSchema() string {
	return `{
  "$schema": "https://json-schema.org/draft/2020-12/schema",
  "type": "object",
  "additionalProperties": false,
  "anyOf": [{"required": ["urls"]}, {"required": ["startUrl"]}],
  "properties": {
    "urls": {
      "type": "array", "minItems": 1, "maxItems": 1000,
      "description": "Absolute http(s) URLs to fill options.outputSchema from, one object per page; duplicates are removed, order is kept. The server's maxUrls also applies. Give exactly one of urls and startUrl.",
      "items": {"type": "string", "minLength": 1, "maxLength": 8192}
    },
    "startUrl": {"type": "string", "minLength": 1, "maxLength": 8192, "description": "Instead of urls: an absolute http(s) URL to crawl from as crawl_site does (breadth first, within maxPages, maxDepth, sameOrigin, include, exclude; every link of a page up to 100000 distinct ones is followed); every page visited, the start page included, gives one object. Give exactly one of urls and startUrl."},
    ` + crawlScopeSchema("With startUrl: ") + `,
    "instruction": {"type": "string", "maxLength": 4000, "description": "Shown to the model with each page that still has missing properties (e.g. \"prices without tax\"); unused when no model is configured or nothing is missing."},
    "render": {"type": "string", "enum": ["browser", "http", "auto"], "default": "browser", "description": "How pages are read: \"browser\" (Chromium, the default: what the page shows after its scripts ran), \"http\" (the HTML the server sends, fetched and parsed without a browser: much faster; JSON-LD, microdata, meta tags and x-selector hints in server-rendered markup are all there, nothing scripts add is) or \"auto\" (fetched over HTTP; per section of a site (host and first path directory) the first pages and 1 in 20 later ones, until 4 matched, are also rendered in the browser and compared, and a section whose browser HTML fills properties the HTTP HTML did not or gives other values is read in the browser from then on; an app shell page (noscript) goes to the browser alone; items.json says renderedBy and renderReason per page). In a named session the browser is used."},
    ` + formatsSchema() + `,
    "blockResources": ` + blockResourcesSchema + `,
    "concurrency": ` + concurrencySchema() + `,
    "perPageTimeoutMs": ` + perPageTimeoutSchema() + `,
    "waitFor": ` + waitForSchema + `
  }
}`
}

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
          "depth": {"type": "integer", "description": "With startUrl: link hops from the start page (0 for the start page)."},
          "renderedBy": {"type": "string", "enum": ["browser", "http"], "description": "How the page was read (inputs.render; with \"auto\" items.json adds renderReason)."},
          ` + pageContentSchema + `
          "object": {"anyOf": [{"type": "object", "description": "The page's object; it validates against options.outputSchema."}, {"type": "null"}]},
          "error": ` + errorObjectSchema + `
        }
      }
    },
    "artifactId": {"type": "string", "description": "items.json: every page with its object, the source of each value, the properties still missing, how it was read (renderedBy, renderReason), its depth in a crawl and its error."},
    ` + markdownArtifactSchema + `
    "ndjsonArtifactId": {"type": "string", "description": "items.ndjson: the object of every page that succeeded, one JSON object per line (absent when none did)."}
  }
}`

// Info describes the template.
func (t *ExtractStructured) Info() engine.TemplateInfo {
	return engine.TemplateInfo{
		TemplateID: "extract_structured",
		Version:    1,
		Versions:   []int{1},
		Title:      "Fill a JSON Schema from each of a list of web pages, or of the pages a crawl finds",
		Description: "Requires options.outputSchema: the JSON Schema (2020-12) of the object you want from every page. " +
			"The pages are either urls (exactly those) or found by crawling from startUrl as crawl_site does (breadth first within maxPages, default 50 and at most the server's maxUrls, maxDepth, sameOrigin, include and exclude globs; every page visited gives one object and says its depth); give exactly one of urls and startUrl. " +
			"Opens each page in a real Chromium (images, media and fonts not loaded: blockResources), or with render \"http\" fetches its HTML without a browser (much faster for server-rendered shops and articles), or with render \"auto\" fetches it over HTTP and uses the browser only for hosts whose HTML lacks what the browser shows (checked on each host's first pages and a sample; items.json says renderedBy per page). It fills the schema's properties from deterministic sources first, " +
			"at no cost: per-property hints in the schema (\"x-selector\": a CSS selector, with \"x-attr\" for an " +
			"attribute; \"x-pattern\": a regular expression whose one capture group is the value, e.g. \"RFC (\\\\d+)\"; " +
			"\"x-count\": true on an integer property for the number of elements matched), then JSON-LD, microdata, RDFa Lite, OpenGraph and other meta tags, matched by property name " +
			"and common synonyms (price ← offers.price or product:price:amount, name ← headline or og:title…) and " +
			"coerced to the types the schema asks for (\"$1,299.00\" → 1299, dates → ISO 8601). A number or date is read " +
			"only from a text that holds one: an x-selector text holding several (\"9. Classes … RFC 7159\") fails the page " +
			"naming the property, the text and the numbers (add x-pattern, or narrow the selector). An array whose x-selector " +
			"matches nothing is [] unless its schema sets minItems. A model is asked only " +
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
			"already done are neither fetched nor sent to the model again. With formats: [\"markdown\"] the model reads the page's " +
			"main content as Markdown instead of its whole text, and each item carries it (pages.md has every page's).",
		InputSchema:          json.RawMessage(structuredInputSchema()),
		ResultSchema:         json.RawMessage(structuredResultSchema),
		TrustLevel:           "any",
		Resumable:            true,
		ContinuesEarlierRuns: true,
		NeedsBrowser:         true,
		UsesOutputSchema:     true,
		EstimatedStepsHint:   "one step per unique URL (with startUrl: per page visited, at most maxPages); pages a model completes take as long as the model answers",
		Examples: []json.RawMessage{json.RawMessage(`{"urls":["https://shop.example/p/1","https://shop.example/p/2"],` +
			`"instruction":"prices as shown, without shipping","concurrency":4}`),
			json.RawMessage(`{"startUrl":"https://shop.example/catalog/","maxPages":200,"maxDepth":2,"include":["*/p/*","*/catalog/*"],"render":"auto"}`)},
	}
}

// Check applies the URL policy to every URL (or the start URL) and the
// profile's limits. options.outputSchema is checked at submit by
// CheckOutputSchema, with the compile Run uses. Errors:
// INVALID_PARAMETER, TRUST_LEVEL_NOT_ALLOWED, each naming the field.
func (t *ExtractStructured) Check(inputs json.RawMessage, p engine.Profile) error {
	in, err := parseStructuredInputs(inputs)
	if err != nil {
		return err
	}
	if p.MaxURLs > 0 && len(in.URLs) > p.MaxURLs {
		return engine.Errorf(engine.InvalidParameter, "inputs.urls: %d URLs exceed this server's maxUrls %d; split the list into several runs", len(in.URLs), p.MaxURLs).
			WithDetails(map[string]any{"field": "inputs.urls", "maxUrls": p.MaxURLs})
	}
	if p.MaxURLs > 0 && in.crawling() && in.MaxPages > p.MaxURLs {
		return engine.Errorf(engine.InvalidParameter, "inputs.maxPages: %d exceeds this server's maxUrls %d; ask for at most %d pages (or raise maxUrls in the server's config)", in.MaxPages, p.MaxURLs, p.MaxURLs).
			WithDetails(map[string]any{"field": "inputs.maxPages", "maxUrls": p.MaxURLs})
	}
	if err := checkConcurrency(in.Concurrency, p); err != nil {
		return err
	}
	if err := in.resourceBlocking.check(); err != nil {
		return err
	}
	if err := in.pageFormats.check(in.Render); err != nil {
		return err
	}
	if err := checkStructuredFormats(in.Formats); err != nil {
		return err
	}
	if in.crawling() {
		return checkURL(in.StartURL, "inputs.startUrl", urlPolicy(t.b, p))
	}
	return checkURLs(in.URLs, urlPolicy(t.b, p))
}

// missingNotes are the notes that explain why a missing property is
// missing ("cells: selector:td matches no element, and the schema refuses
// an empty list (… minItems …)"), so the page's error says it.
func missingNotes(notes, missing []string) []string {
	var out []string
	for _, n := range notes {
		for _, m := range missing {
			if strings.HasPrefix(n, m+": ") || strings.HasPrefix(n, m+".") {
				out = append(out, n)
				break
			}
		}
	}
	return out
}
