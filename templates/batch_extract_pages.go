// Package templates holds the task templates: each is one engine.Template
// implemented in one file, plus its test and fixture pages.
package templates

import (
	"bytes"
	"encoding/json"
	"sort"
	"strings"

	"github.com/browsertask/browsertask/browser"
	"github.com/browsertask/browsertask/engine"
)

// Limits and defaults of batch_extract_pages.
const (
	batchMaxURLs    = 1000
	maxTextChars    = 20000
	maxLinksPerPage = 1000
	maxFirstErrors  = 5
)

// BatchExtractPages is the batch_extract_pages template: open many URLs in
// a pool of reused tabs and extract the same fields from each.
type BatchExtractPages struct {
	b *browser.Manager
}

var _ engine.Template = (*BatchExtractPages)(nil)

// NewBatchExtractPages returns the template; it opens pages in the run's
// session of b.
func NewBatchExtractPages(b *browser.Manager) engine.Template {
	return &BatchExtractPages{b: b}
}

// fieldSpec is one entry of inputs.fields: a selector string or
// {selector, attr?, all?}.
type fieldSpec struct {
	Selector string `json:"selector"`
	Attr     string `json:"attr,omitempty"`
	All      bool   `json:"all,omitempty"`
}

// UnmarshalJSON accepts both the short (string) and the long form.
func (f *fieldSpec) UnmarshalJSON(b []byte) error {
	if s := bytes.TrimSpace(b); len(s) > 0 && s[0] == '"' {
		return json.Unmarshal(s, &f.Selector)
	}
	type plain fieldSpec
	return json.Unmarshal(b, (*plain)(f))
}

// batchInputs are the validated inputs.
type batchInputs struct {
	URLs         []string             `json:"urls"`
	Fields       map[string]fieldSpec `json:"fields"`
	IncludeText  *bool                `json:"includeText"`
	IncludeLinks bool                 `json:"includeLinks"`
	IncludeMeta  bool                 `json:"includeMeta"`
	// Render is "browser" (default), "http" (batch_extract_http.go) or
	// "auto" (render_auto.go).
	Render string `json:"render"`
	pageFormats
	pageLoad
	resourceBlocking
	politeness
}

// parseBatchInputs decodes inputs and applies the defaults.
func parseBatchInputs(raw json.RawMessage) (*batchInputs, error) {
	in := &batchInputs{}
	if len(bytes.TrimSpace(raw)) > 0 {
		if err := json.Unmarshal(raw, in); err != nil {
			return nil, engine.Errorf(engine.InvalidParameter, "inputs: %v", err)
		}
	}
	explicitText := in.IncludeText != nil
	if !explicitText {
		t := true
		in.IncludeText = &t
	}
	text, links := in.pageFormats.includes(*in.IncludeText, explicitText, in.IncludeLinks)
	in.IncludeText, in.IncludeLinks = &text, links
	if in.Render == "" {
		in.Render = renderBrowser
	}
	in.pageLoad.applyDefaults()
	return in, nil
}

// Info describes the template.
func (t *BatchExtractPages) Info() engine.TemplateInfo {
	return engine.TemplateInfo{
		TemplateID: "batch_extract_pages",
		Version:    1,
		Versions:   []int{1},
		Title:      "Extract data from a list of web pages",
		Description: "Opens each URL in a real Chromium (several tabs in parallel) and extracts, per page: " +
			"the final URL after redirects, the HTTP status, the title, the named `fields` you ask for " +
			"(CSS selector → text, or an attribute with `attr`, or every match with `all: true`), and " +
			"optionally the visible text (includeText, default true, capped at 20000 characters per page), " +
			"the links (includeLinks) and the meta tags (includeMeta). Use it to scrape or check many known " +
			"URLs at once (up to maxUrls, 1000 by default; duplicates are removed, order kept); to discover " +
			"URLs by following links use crawl_site instead. A page fails when it cannot be loaded, exceeds " +
			"perPageTimeoutMs (NAVIGATION_TIMEOUT) or answers HTTP >= 400 (its status and whatever was " +
			"extracted are still recorded); some failures give partial_success, all failing gives " +
			"STEP_EXECUTION_FAILED. The result lists every page without its text; the artifact pages.json " +
			"holds everything. Resumable: after a restart, pages already done are not fetched again; submitting the " +
			"same inputs again after a run that failed or was canceled continues from the pages it finished." +
			formatsDescription,
		InputSchema:  json.RawMessage(batchInputSchema()),
		ResultSchema: json.RawMessage(batchResultSchema),
		TrustLevel:   "any",
		Resumable:    true,
		// A resubmission continues a stopped run's pages (engine/adopt.go).
		ContinuesEarlierRuns: true,
		NeedsBrowser:         true,
		EstimatedStepsHint:   "one step per unique URL; roughly 5-25 pages/s on local pages, slower on real sites",
		Examples: []json.RawMessage{json.RawMessage(`{"urls":["https://example.com/","https://example.org/"],` +
			`"fields":{"heading":"h1","links":{"selector":"a","attr":"href","all":true}},` +
			`"includeText":false,"concurrency":4}`)},
	}
}

// Check applies the URL policy to every URL and the profile's limits.
// Errors: INVALID_PARAMETER, TRUST_LEVEL_NOT_ALLOWED, each naming the field.
func (t *BatchExtractPages) Check(inputs json.RawMessage, p engine.Profile) error {
	in, err := parseBatchInputs(inputs)
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
	if err := checkFields(in.Fields); err != nil {
		return err
	}
	if err := in.resourceBlocking.check(); err != nil {
		return err
	}
	if err := in.pageFormats.check(in.Render); err != nil {
		return err
	}
	if in.Render == renderHTTP {
		if err := checkHTTPFields(in.Fields); err != nil {
			return err
		}
	}
	if err := in.politeness.check(t.policy(p), in.Render); err != nil {
		return err
	}
	return checkURLs(in.URLs, t.policy(p))
}

// SecretValues keeps the proxy's credentials and the secret header values
// out of everything stored and shown (engine.SecretInputs).
func (t *BatchExtractPages) SecretValues(inputs json.RawMessage) []string {
	in, err := parseBatchInputs(inputs)
	if err != nil {
		return nil
	}
	return in.politeness.secretValues()
}

// policy is the URL policy for a profile, with the browser manager's deny
// list and resolver (the resolver matters under trust restricted, where a
// host the daemon cannot resolve is refused).
func (t *BatchExtractPages) policy(p engine.Profile) engine.URLPolicy {
	return urlPolicy(t.b, p)
}

// checkFields refuses a field without a name or without a selector (the
// names key the extracted values; an empty one would come back as a
// nameless value nobody asked for). Errors: INVALID_PARAMETER naming the
// field.
func checkFields(fields map[string]fieldSpec) error {
	names := make([]string, 0, len(fields))
	for name := range fields {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		if strings.TrimSpace(name) == "" {
			return engine.Errorf(engine.InvalidParameter, "inputs.fields: a field name is empty (%q); name each field, e.g. {\"title\": \"h1\"}", name).
				WithDetails(map[string]any{"field": "inputs.fields"})
		}
		if strings.TrimSpace(fields[name].Selector) == "" {
			return engine.Errorf(engine.InvalidParameter, "inputs.fields.%s: the selector is empty", name).
				WithDetails(map[string]any{"field": "inputs.fields." + name})
		}
	}
	return nil
}
