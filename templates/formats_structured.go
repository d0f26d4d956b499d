package templates

import (
	"context"
	"fmt"

	"github.com/browsertask/browsertask/engine"
	"github.com/browsertask/browsertask/internal/extract/structured"
)

// extract_structured's page reading with inputs.formats (formats.go):
//
//   - The model, when one is asked for missing properties, is given the
//     page's Markdown (its main content, headings, lists and tables kept)
//     instead of the whole page's text when formats includes "markdown":
//     less navigation and boilerplate for the same token budget. A page
//     without main content falls back to its text.
//   - Each item carries the formats asked for, as batch_extract_pages'
//     pages do: markdown (with markdownBytes and tokensEstimate), html,
//     metadata, screenshotArtifactId; the result and items.json cut
//     markdown and html at maxChars, pages.md holds every page's whole
//     Markdown, in checkpoint order (the order of inputs.urls; a crawl's
//     visit order).
//   - "text" and "links" are refused: an item is an object filled from
//     the page, not the page's text or links (batch_extract_pages and
//     crawl_site give those).

// checkStructuredFormats refuses the formats extract_structured does not
// carry. Errors: INVALID_PARAMETER naming inputs.formats[i].
func checkStructuredFormats(formats []string) error {
	for i, f := range formats {
		if f == formatText || f == formatLinks {
			field := fmt.Sprintf("inputs.formats[%d]", i)
			return engine.Errorf(engine.InvalidParameter, "%s: extract_structured's items carry markdown, html, metadata and screenshot, not %q; read the page's %s with batch_extract_pages or crawl_site", field, f, f).
				WithDetails(map[string]any{"field": field, "allowed": []string{formatMarkdown, formatHTML, formatMetadata, formatScreenshot}})
		}
	}
	return nil
}

// modelText is the page text the model is given: the page's Markdown
// when formats includes markdown and the page has some, else its text.
func (r *structuredRun) modelText(out *structuredItem, p *structured.Page) string {
	if r.in.has(formatMarkdown) && out.Markdown != "" {
		return out.Markdown
	}
	return p.Text()
}

// pagesMD stores pages.md from the run's checkpoints made for its
// outputSchema, one at a time. Errors: as streamPagesMD.
func (r *structuredRun) pagesMD(ctx context.Context, env engine.Env) (string, error) {
	return streamPagesMD(ctx, env, func(add func(mdPage) error) error {
		return env.EachItem(ctx, engine.ItemsQuery{After: -1}, func(it engine.Item) error {
			if !madeFor(it, r.hash) {
				return nil
			}
			s := restoreStructured(it.Key, it.Output, itemError(it))
			m := mdPage{URL: s.URL, Markdown: s.Markdown}
			switch {
			case s.Error != nil && s.Markdown == "":
				m.Note = "failed: " + string(s.Error.Code) + ": " + s.Error.Message
			case s.ContentError != "":
				m.Note = "no main content: " + s.ContentError
			}
			return add(m)
		})
	})
}
