package templates

import (
	"context"
	"encoding/json"

	"github.com/browsertask/browsertask/engine"
)

// pageSummary is one page in the run's result (pages.json has the rest).
type pageSummary struct {
	URL        string         `json:"url"`
	FinalURL   string         `json:"finalUrl"`
	HTTPStatus int            `json:"httpStatus"`
	Title      string         `json:"title"`
	Fields     map[string]any `json:"fields"`
	Error      *engine.Error  `json:"error"`
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
}

// finish writes pages.json (every page, in input order, earlier attempts
// included) and builds the outcome. Errors: STEP_EXECUTION_FAILED when no
// page succeeded (details list the first errors), EXECUTION_ERROR when the
// artifact cannot be stored, ctx's cause when ctx ended.
func (r *batchRun) finish(ctx context.Context, pages []*pageOut) (*engine.Outcome, error) {
	res := batchResult{Pages: make([]pageSummary, 0, len(pages))}
	var firstErrors []map[string]any
	for _, p := range pages {
		if p.Fields == nil {
			p.Fields = map[string]any{}
		}
		res.Pages = append(res.Pages, pageSummary{URL: p.URL, FinalURL: p.FinalURL, HTTPStatus: p.HTTPStatus,
			Title: p.Title, Fields: p.Fields, Error: p.Error})
		res.Summary.Total++
		if p.Error == nil {
			res.Summary.Succeeded++
			continue
		}
		res.Summary.Failed++
		if len(firstErrors) < maxFirstErrors {
			firstErrors = append(firstErrors, map[string]any{"url": p.URL, "httpStatus": p.HTTPStatus,
				"errorCode": p.Error.Code, "message": p.Error.Message})
		}
	}
	data, err := json.MarshalIndent(pages, "", "  ")
	if err != nil {
		return nil, engine.Wrap(engine.ExecutionError, err, "encode pages.json: %v", err)
	}
	id, err := r.env.PutArtifact(ctx, "pages.json", "application/json", data)
	if err != nil {
		if ctx.Err() != nil {
			return nil, context.Cause(ctx)
		}
		return nil, engine.Wrap(engine.ExecutionError, err, "store pages.json: %v", err)
	}
	res.ArtifactID = id
	if res.Summary.Total > 0 && res.Summary.Succeeded == 0 {
		first := firstErrors[0]
		return nil, engine.Errorf(engine.StepExecutionFailed, "all %d pages failed; first: %s: %s",
			res.Summary.Failed, first["url"], first["message"]).
			WithDetails(map[string]any{"failed": res.Summary.Failed, "errors": firstErrors, "artifactId": id})
	}
	return &engine.Outcome{Result: res, Partial: res.Summary.Failed > 0}, nil
}
