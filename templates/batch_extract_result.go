package templates

import (
	"context"

	"github.com/browsertask/browsertask/engine"
	"github.com/browsertask/browsertask/internal/extract/page"
)

// pageSummary is one page in the run's result (pages.json has the rest).
type pageSummary struct {
	URL        string         `json:"url"`
	FinalURL   string         `json:"finalUrl"`
	HTTPStatus int            `json:"httpStatus"`
	Title      string         `json:"title"`
	Fields     map[string]any `json:"fields"`
	// FieldsCapped names the fields the caps cut (absent when none).
	FieldsCapped map[string]page.FieldCap `json:"fieldsCapped,omitempty"`
	// LinksCapped says how a cap cut the page's links (links_cap.go).
	LinksCapped *linksCap `json:"linksCapped,omitempty"`
	// FieldsOmitted is true when the run's result had no room left for
	// this page's fields (maxResultBytes): pages.json has them.
	FieldsOmitted bool `json:"fieldsOmitted,omitempty"`
	// Meta is the page's meta tags, when the inputs asked for them
	// (includeMeta); text and links stay in pages.json.
	Meta map[string]string `json:"meta,omitempty"`
	// RenderedBy is "browser" or "http" (inputs.render); RenderReason
	// why render "auto" used the browser.
	RenderedBy   string        `json:"renderedBy,omitempty"`
	RenderReason string        `json:"renderReason,omitempty"`
	Error        *engine.Error `json:"error"`
	// pageContent is what inputs.formats adds, cut at maxChars
	// (formats_content.go).
	pageContent
}

// summaryOf is p's entry in a run's result.
func summaryOf(p *pageOut) pageSummary {
	return pageSummary{URL: p.URL, FinalURL: p.FinalURL, HTTPStatus: p.HTTPStatus, Title: p.Title, Fields: p.Fields, FieldsCapped: p.FieldsCapped, LinksCapped: p.LinksCapped, FieldsOmitted: p.FieldsOmitted, Meta: p.Meta, RenderedBy: p.RenderedBy, RenderReason: p.RenderReason, Error: p.Error, pageContent: p.pageContent}
}

// batchSummary counts the pages.
type batchSummary struct {
	Total     int `json:"total"`
	Succeeded int `json:"succeeded"`
	Failed    int `json:"failed"`
}

// batchResult is batch_extract_pages' result.
type batchResult struct {
	Summary    batchSummary  `json:"summary"`
	Pages      []pageSummary `json:"pages"`
	ArtifactID string        `json:"artifactId"`
	// MarkdownArtifactID names pages.md (format markdown).
	MarkdownArtifactID string `json:"markdownArtifactId,omitempty"`
}

// pageTally counts the pages of a URL-list run and keeps the first errors,
// for the result's summary and the error of a run whose pages all failed.
type pageTally struct {
	batchSummary
	firstErrors []map[string]any
	// firstRecovery is the first failed page's advice, which the run's
	// error repeats when every page failed (a 404 is not "retry").
	firstRecovery string
}

// count adds one page: e is its failure (nil = succeeded), entry names it
// among the first errors (the url, and whatever else the template reports).
func (t *pageTally) count(e *engine.Error, entry map[string]any) {
	t.Total++
	if e == nil {
		t.Succeeded++
		return
	}
	t.Failed++
	if t.firstRecovery == "" {
		t.firstRecovery = e.Recovery
	}
	if len(t.firstErrors) < maxFirstErrors {
		entry["errorCode"], entry["message"] = e.Code, e.Message
		t.firstErrors = append(t.firstErrors, entry)
	}
}

// outcome returns res as the run's outcome, partial when some pages failed.
// Errors: STEP_EXECUTION_FAILED when every page failed, details listing the
// first errors (plus details).
func (t *pageTally) outcome(res any, details map[string]any) (*engine.Outcome, error) {
	if t.Total > 0 && t.Succeeded == 0 {
		first := t.firstErrors[0]
		d := map[string]any{"failed": t.Failed, "errors": t.firstErrors}
		for k, v := range details {
			d[k] = v
		}
		e := engine.Errorf(engine.StepExecutionFailed, "all %d pages failed; first: %s: %s", t.Failed, first["url"], first["message"]).
			WithDetails(d)
		if t.firstRecovery != "" {
			e.Recovery = t.firstRecovery
		}
		return nil, e
	}
	return &engine.Outcome{Result: res, Partial: t.Failed > 0}, nil
}

// finish writes pages.json (every page, in input order, earlier attempts
// included) and builds the outcome. Errors: STEP_EXECUTION_FAILED when no
// page succeeded (details list the first errors), EXECUTION_ERROR when the
// artifact cannot be stored, ctx's cause when ctx ended.
//
// pages are the slim outputs (no text or links) the result needs;
// pages.json is written from the checkpoints at itemIdx (one per page,
// -1 for none), one page at a time.
func (r *batchRun) finish(ctx context.Context, pages []*pageOut, itemIdx []int) (*engine.Outcome, error) {
	res := batchResult{Pages: make([]pageSummary, 0, len(pages))}
	var tally pageTally
	for _, p := range pages {
		if p.Fields == nil {
			p.Fields = map[string]any{}
		}
		res.Pages = append(res.Pages, summaryOf(p))
		tally.count(p.Error, map[string]any{"url": p.URL, "httpStatus": p.HTTPStatus})
	}
	res.Summary = tally.batchSummary
	id, err := streamPages(ctx, r.env, "pages.json", func(add func(any) error) error {
		return checkpointsInOrder(ctx, r.env, itemIdx, func(i int, it engine.Item) error {
			return add(restorePage(r.urls[i], it.Output, pages[i].Error))
		})
	})
	if err != nil {
		return nil, err
	}
	res.ArtifactID = id
	if r.in.has(formatMarkdown) {
		md, err := streamPagesMD(ctx, r.env, func(add func(mdPage) error) error {
			return checkpointsInOrder(ctx, r.env, itemIdx, func(i int, it engine.Item) error {
				return add(mdPageOf(restorePage(r.urls[i], it.Output, pages[i].Error)))
			})
		})
		if err != nil {
			return nil, err
		}
		res.MarkdownArtifactID = md
	}
	return tally.outcome(res, map[string]any{"artifactId": id})
}
