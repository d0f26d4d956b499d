package templates

import (
	"context"
	"encoding/json"

	"github.com/browsertask/browsertask/engine"
)

// The extraction templates keep the pages a run finished when it stops
// early (engine.Keeper): pages.json holds them as a finished run's would,
// in checkpoint order, failed pages with their error.

var (
	_ engine.Keeper = (*BatchExtractPages)(nil)
	_ engine.Keeper = (*CrawlSite)(nil)
)

// Keep stores the finished pages as pages.json (and pages.md with
// formats markdown: keptMarkdown).
func (t *BatchExtractPages) Keep(ctx context.Context, env engine.Env, items []engine.Item) (string, string, error) {
	id, err := streamPages(ctx, env, "pages.json", func(add func(any) error) error {
		return env.EachItem(ctx, engine.ItemsQuery{After: -1}, func(it engine.Item) error {
			return add(restorePage(it.Key, it.Output, itemError(it)))
		})
	})
	if err == nil {
		if in, perr := parseBatchInputs(env.Inputs()); perr == nil && in.has(formatMarkdown) {
			err = keptMarkdown(ctx, env)
		}
	}
	return id, "pages.json", err
}

// Keep stores the crawled pages as pages.json (links only when the inputs
// asked for them, as in a finished crawl).
func (t *CrawlSite) Keep(ctx context.Context, env engine.Env, items []engine.Item) (string, string, error) {
	in, err := parseCrawlInputs(env.Inputs())
	if err != nil {
		return "", "", err
	}
	id, err := streamPages(ctx, env, "pages.json", func(add func(any) error) error {
		return env.EachItem(ctx, engine.ItemsQuery{After: -1}, func(it engine.Item) error {
			return add(keptCrawlPage(it, in.IncludeLinks))
		})
	})
	if err == nil && in.has(formatMarkdown) {
		err = keptMarkdown(ctx, env)
	}
	return id, "pages.json", err
}

// keptCrawlPage is a crawl checkpoint as pages.json shows it (links only
// when the inputs asked for them).
func keptCrawlPage(it engine.Item, includeLinks bool) *crawlPageOut {
	p := &crawlPageOut{}
	if json.Unmarshal(it.Output, p) != nil || p.URL == "" {
		p = &crawlPageOut{pageOut: pageOut{URL: it.Key, Fields: map[string]any{}}}
	}
	if p.Error == nil {
		p.Error = itemError(it)
	}
	if !includeLinks {
		p.Links = nil
	}
	return p
}

// itemError is a checkpointed item's error; a failed item stored without
// one gets a generic error, as urlPool.restore gives it.
func itemError(it engine.Item) *engine.Error {
	if it.Error == nil && it.Status == engine.ItemFailed {
		return engine.Errorf(engine.StepExecutionFailed, "failed in an earlier attempt")
	}
	return it.Error
}
