package templates

import (
	"context"
	"encoding/json"
	"sort"

	"github.com/browsertask/browsertask/engine"
)

// The extraction templates keep the pages a run finished when it stops
// early (engine.Keeper): pages.json holds them as a finished run's would,
// in checkpoint order, failed pages with their error.

var (
	_ engine.Keeper = (*BatchExtractPages)(nil)
	_ engine.Keeper = (*CrawlSite)(nil)
)

// Keep stores the finished pages as pages.json.
func (t *BatchExtractPages) Keep(ctx context.Context, env engine.Env, items []engine.Item) (string, string, error) {
	pages := make([]*pageOut, 0, len(items))
	for _, it := range inIndexOrder(items) {
		pages = append(pages, restorePage(it.Key, it.Output, itemError(it)))
	}
	id, err := putPagesJSON(ctx, env, pages)
	return id, "pages.json", err
}

// Keep stores the crawled pages as pages.json (links only when the inputs
// asked for them, as in a finished crawl).
func (t *CrawlSite) Keep(ctx context.Context, env engine.Env, items []engine.Item) (string, string, error) {
	in, err := parseCrawlInputs(env.Inputs())
	if err != nil {
		return "", "", err
	}
	pages := make([]*crawlPageOut, 0, len(items))
	for _, it := range inIndexOrder(items) {
		p := &crawlPageOut{}
		if json.Unmarshal(it.Output, p) != nil || p.URL == "" {
			p = &crawlPageOut{pageOut: pageOut{URL: it.Key, Fields: map[string]any{}}}
		}
		if p.Error == nil {
			p.Error = itemError(it)
		}
		if !in.IncludeLinks {
			p.Links = nil
		}
		pages = append(pages, p)
	}
	id, err := putPagesJSON(ctx, env, pages)
	return id, "pages.json", err
}

// inIndexOrder sorts a copy of items by index.
func inIndexOrder(items []engine.Item) []engine.Item {
	out := append([]engine.Item(nil), items...)
	sort.SliceStable(out, func(i, j int) bool { return out[i].Index < out[j].Index })
	return out
}

// itemError is a checkpointed item's error; a failed item stored without
// one gets a generic error, as urlPool.restore gives it.
func itemError(it engine.Item) *engine.Error {
	if it.Error == nil && it.Status == engine.ItemFailed {
		return engine.Errorf(engine.StepExecutionFailed, "failed in an earlier attempt")
	}
	return it.Error
}
