package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"time"

	"github.com/browsertask/browsertask/engine"
	"github.com/browsertask/browsertask/internal/fixture"
)

// crawlResult holds scenario 10's figures: crawl_site over the fixture's
// generated 2000-page site with render "auto" and with the browser.
type crawlResult struct {
	Pages, Tabs        int
	AutoRate, AutoHTTP float64 // pages/s, share read over HTTP
	BrowserRate        float64
	Ratio              float64
	// BatchRate is batch_extract_pages (browser) over the same pages: the
	// crawl's per-tab goal.
	BatchRate  float64
	BatchPages int
	CrawlBatch float64
}

// benchCrawl crawls internal/fixture's big site (BigSitePages linked
// documentation-like pages) from /big/0 with maxPages = every page, once
// with render "auto" and once with render "browser", through MCP against
// an in-process daemon whose maxUrls admits the whole site.
func benchCrawl(ctx context.Context, o *options, log *slog.Logger, out io.Writer) (*crawlResult, error) {
	site := fixture.Start()
	defer site.Close()
	bs, err := startBenchServer(ctx, o, log, "crawl", func(c *engine.Config) {
		c.MaxURLs = max(c.MaxURLs, o.crawlPages)
	})
	if err != nil {
		return nil, err
	}
	defer bs.close()
	cl := bs.cl
	res := &crawlResult{Pages: o.crawlPages, Tabs: o.tabs}
	for _, render := range []string{"auto", "browser"} {
		rate, share, err := crawlOnce(ctx, cl, site.URL("/big/0"), o.crawlPages, o.tabs, render)
		if err != nil {
			return nil, fmt.Errorf("crawl (%s): %w", render, err)
		}
		fmt.Fprintf(out, "  render %s: %.1f pages/s, %.0f%% over HTTP\n", render, rate, share*100)
		if render == "auto" {
			res.AutoRate, res.AutoHTTP = rate, share
		} else {
			res.BrowserRate = rate
		}
	}
	res.Ratio = ratio(res.AutoRate, res.BrowserRate)
	// batch_extract_pages takes at most 1000 URLs.
	urls := make([]string, min(o.crawlPages, 1000))
	for i := range urls {
		urls[i] = site.URL(fmt.Sprintf("/big/%d", i))
	}
	t0 := time.Now()
	id, err := cl.submitAsync(ctx, "batch_extract_pages", map[string]any{
		"urls": urls, "concurrency": o.tabs, "perHostConcurrency": perHost(o.tabs), "fields": map[string]any{"name": "#name"}, "includeText": false,
	})
	if err != nil {
		return nil, err
	}
	if _, err := finishedPages(ctx, cl, id, len(urls)); err != nil {
		return nil, fmt.Errorf("batch_extract_pages over the crawled pages: %w", err)
	}
	res.BatchRate, res.BatchPages = float64(len(urls))/time.Since(t0).Seconds(), len(urls)
	res.CrawlBatch = ratio(res.BrowserRate, res.BatchRate)
	fmt.Fprintf(out, "  batch_extract_pages (browser) over the first %d of those pages: %.1f pages/s\n", len(urls), res.BatchRate)
	return res, nil
}

// crawlOnce runs one crawl_site through MCP and returns its pages/s (from
// the submission to the last byte of pages.json) and the share of pages
// read over HTTP. Every page must be found and none may fail.
func crawlOnce(ctx context.Context, cl *client, start string, pages, tabs int, render string) (float64, float64, error) {
	t0 := time.Now()
	id, err := cl.submitAsync(ctx, "crawl_site", map[string]any{
		"startUrl": start, "maxPages": pages, "maxDepth": 100, "concurrency": tabs, "perHostConcurrency": perHost(tabs), "render": render, "includeText": false,
		"fields": map[string]any{"name": "#name"},
	})
	if err != nil {
		return 0, 0, err
	}
	got, err := finishedPages(ctx, cl, id, pages)
	if err != nil {
		return 0, 0, err
	}
	elapsed := time.Since(t0)
	overHTTP := 0
	for i, raw := range got {
		var p struct {
			RenderedBy string         `json:"renderedBy"`
			Fields     map[string]any `json:"fields"`
			Error      any            `json:"error"`
		}
		if err := json.Unmarshal(raw, &p); err != nil {
			return 0, 0, fmt.Errorf("page %d: %w", i, err)
		}
		if p.Error != nil || p.Fields["name"] == nil {
			return 0, 0, fmt.Errorf("page %d: error %v, name %v", i, p.Error, p.Fields["name"])
		}
		if p.RenderedBy == "http" {
			overHTTP++
		}
	}
	return float64(pages) / elapsed.Seconds(), float64(overHTTP) / float64(pages), nil
}
