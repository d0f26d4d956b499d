package templates

import (
	"context"
	"io"
	"strings"

	"github.com/browsertask/browsertask/engine"
)

// pages.md is every page's Markdown in one file a model (or a person)
// reads from top to bottom: each page under a level-1 heading that is its
// URL, in the order of pages.json, the page's own Markdown below it
// (whole, up to maxWholeChars). A page that failed or has no main content
// says so in one italic line instead. Like pages.json it is written page
// by page from the checkpoints (one Write per page, so the engine's
// redaction of secrets sees whole pages), never the whole run in memory.

// mdPage is one page as pages.md shows it.
type mdPage struct {
	URL      string
	Markdown string
	// Note is said instead of the Markdown when there is none: the
	// page's error, or why it has no main content.
	Note string
}

// section is the page's part of pages.md.
func (p mdPage) section() string {
	var b strings.Builder
	b.WriteString("# ")
	b.WriteString(p.URL)
	b.WriteString("\n\n")
	switch {
	case p.Markdown != "":
		b.WriteString(p.Markdown)
	case p.Note != "":
		b.WriteString("_(")
		b.WriteString(strings.ReplaceAll(p.Note, "\n", " "))
		b.WriteString(")_")
	default:
		b.WriteString("_(no main content found)_")
	}
	b.WriteString("\n\n")
	return b.String()
}

// mdPageOf is pages.md's view of a page output.
func mdPageOf(p *pageOut) mdPage {
	m := mdPage{URL: p.URL, Markdown: p.Markdown}
	switch {
	case p.Error != nil && p.Markdown == "":
		m.Note = "failed: " + string(p.Error.Code) + ": " + p.Error.Message
	case p.ContentError != "":
		m.Note = "no main content: " + p.ContentError
	}
	return m
}

// streamPagesMD stores pages.md from the pages each gives (it calls add
// once per page, in order) and returns the artifact's id. Errors:
// EXECUTION_ERROR, ctx's cause when ctx ended.
func streamPagesMD(ctx context.Context, env engine.Env, each func(add func(mdPage) error) error) (string, error) {
	id, err := env.PutArtifactStream(ctx, "pages.md", "text/markdown", func(w io.Writer) error {
		return each(func(p mdPage) error {
			if _, err := io.WriteString(w, p.section()); err != nil {
				return engine.Wrap(engine.ExecutionError, err, "write pages.md: %v", err)
			}
			return nil
		})
	})
	if err != nil && ctx.Err() != nil {
		return "", context.Cause(ctx)
	}
	return id, err
}

// keptMarkdown stores pages.md for a run that stopped early
// (engine.Keeper), from its checkpoints in checkpoint order, as pages.json
// is kept. Errors: as streamPagesMD.
func keptMarkdown(ctx context.Context, env engine.Env) error {
	_, err := streamPagesMD(ctx, env, func(add func(mdPage) error) error {
		return env.EachItem(ctx, engine.ItemsQuery{After: -1}, func(it engine.Item) error {
			return add(mdPageOf(restorePage(it.Key, it.Output, itemError(it))))
		})
	})
	return err
}
