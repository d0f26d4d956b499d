package templates

import (
	"context"
	"encoding/json"

	"github.com/browsertask/browsertask/browser"
	"github.com/browsertask/browsertask/engine"
)

// SavePDF is the save_pdf template: one application/pdf artifact per URL.
type SavePDF struct {
	b *browser.Manager
}

var _ engine.Template = (*SavePDF)(nil)

// NewSavePDF returns the template, working in the run's session of b.
func NewSavePDF(b *browser.Manager) engine.Template { return &SavePDF{b: b} }

// paperSizes are the paper names save_pdf accepts, in inches.
var paperSizes = map[string][2]float64{
	"letter": {8.5, 11}, "legal": {8.5, 14}, "tabloid": {11, 17},
	"a3": {11.69, 16.54}, "a4": {8.27, 11.69}, "a5": {5.83, 8.27},
}

// pdfInputs are save_pdf's validated inputs.
type pdfInputs struct {
	URLs            []string `json:"urls"`
	Landscape       bool     `json:"landscape"`
	PrintBackground bool     `json:"printBackground"`
	Paper           string   `json:"paper"`
	pageLoad
}

func pdfInputSchema() string {
	return `{
  "$schema": "https://json-schema.org/draft/2020-12/schema",
  "type": "object", "additionalProperties": false, "required": ["urls"],
  "properties": {
    "urls": ` + urlListSchema + `,
    "landscape": {"type": "boolean", "default": false},
    "printBackground": {"type": "boolean", "default": false, "description": "Print background colours and images."},
    "paper": {"type": "string", "enum": ["letter", "legal", "tabloid", "a3", "a4", "a5"], "default": "letter"},
    "concurrency": ` + concurrencySchema() + `,
    "perPageTimeoutMs": ` + perPageTimeoutSchema() + `,
    "waitFor": ` + waitForSchema + `
  }
}`
}

const pdfResultSchema = `{
  "$schema": "https://json-schema.org/draft/2020-12/schema",
  "type": "object", "required": ["summary", "pdfs"],
  "properties": {
    "summary": {"type": "object", "required": ["total", "succeeded", "failed"]},
    "pdfs": {"type": "array", "items": {"type": "object", "required": ["url", "artifactId", "error"],
      "properties": {"url": {"type": "string"}, "finalUrl": {"type": "string"}, "httpStatus": {"type": "integer"},
        "artifactId": {"type": "string", "description": "The PDF (application/pdf; get_artifact returns base64)."},
        "size": {"type": "integer"}, "error": ` + errorObjectSchema + `}}}
  }
}`

// Info describes the template.
func (t *SavePDF) Info() engine.TemplateInfo {
	return engine.TemplateInfo{
		TemplateID: "save_pdf", Version: 1, Versions: []int{1},
		Title: "Save web pages as PDF",
		Description: "Opens each URL (1..100) in Chromium and prints it to one PDF artifact (application/pdf) per page, " +
			"with paper (letter default, legal, tabloid, a3, a4, a5), landscape and printBackground. The result lists, " +
			"per URL, the artifactId of its PDF (read it with get_artifact: base64), the final URL and HTTP status. " +
			"A page that cannot be loaded, times out (NAVIGATION_TIMEOUT) or answers HTTP >= 400 gets no PDF and an " +
			"error; some failures give partial_success, all failing gives STEP_EXECUTION_FAILED. Resumable.",
		InputSchema: json.RawMessage(pdfInputSchema()), ResultSchema: json.RawMessage(pdfResultSchema),
		TrustLevel: "any", Resumable: true, NeedsBrowser: true,
		EstimatedStepsHint: "one step per URL; printing adds 100-500 ms per page",
		Examples:           []json.RawMessage{json.RawMessage(`{"urls":["https://example.com/"],"paper":"a4","printBackground":true}`)},
	}
}

func parsePDFInputs(raw json.RawMessage) (*pdfInputs, error) {
	in := &pdfInputs{}
	if err := decodeInputs(raw, in); err != nil {
		return nil, err
	}
	if in.Paper == "" {
		in.Paper = "letter"
	}
	in.pageLoad.applyDefaults()
	return in, nil
}

// Check applies the URL policy and the profile's limits. Errors:
// INVALID_PARAMETER, TRUST_LEVEL_NOT_ALLOWED.
func (t *SavePDF) Check(inputs json.RawMessage, p engine.Profile) error {
	in, err := parsePDFInputs(inputs)
	if err != nil {
		return err
	}
	if err := checkConcurrency(in.Concurrency, p); err != nil {
		return err
	}
	return checkURLs(in.URLs, urlPolicy(t.b, p))
}

// Run prints every URL. Errors: STEP_EXECUTION_FAILED (every page failed),
// EXECUTION_ERROR (browser lost), ctx's cause.
func (t *SavePDF) Run(ctx context.Context, env engine.Env) (*engine.Outcome, error) {
	in, err := parsePDFInputs(env.Inputs())
	if err != nil {
		return nil, err
	}
	size := paperSizes[in.Paper]
	opts := browser.PDFOptions{Landscape: in.Landscape, PrintBackground: in.PrintBackground, PaperWidth: size[0], PaperHeight: size[1]}
	c := &capturePages{template: "save_pdf", what: "PDF", mime: "application/pdf", ext: "pdf",
		take: func(ctx context.Context, tb *browser.Tab) ([]byte, error) { return tb.PDF(ctx, opts) }}
	pdfs, tally, err := c.run(ctx, t.b, env, dedupe(in.URLs), in.pageLoad)
	if err != nil {
		return nil, err
	}
	res := struct {
		Summary batchSummary      `json:"summary"`
		PDFs    []json.RawMessage `json:"pdfs"`
	}{Summary: tally.batchSummary, PDFs: pdfs}
	return tally.outcome(res, nil)
}
