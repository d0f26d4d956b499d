package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"time"

	"github.com/browsertask/browsertask/internal/fixture"
)

// mixedResult holds scenario 8's figures: batch_extract_pages over the
// mixed fixture site (half its hosts build their pages with JavaScript)
// with render "auto" against render "browser".
type mixedResult struct {
	Pages, Tabs        int
	Auto, Browser      []float64 // pages/s per repeat
	AutoMed, BrowserMd float64
	Ratio              float64
	AutoHTTP           float64 // share over HTTP, last repeat
	Mismatches         int     // pages whose title or fields differ, all repeats
}

// benchMixed runs the mixed site's pages (-mixed-pages per host, every
// host interleaved) through batch_extract_pages with render "auto" and
// "browser", alternating (ABBA), and compares every page's title and
// fields between the two.
func benchMixed(ctx context.Context, o *options, log *slog.Logger, out io.Writer) (*mixedResult, error) {
	site, err := fixture.StartMixed()
	if err != nil {
		return nil, err
	}
	defer site.Close()
	bs, err := startBenchServer(ctx, o, log, "mixed", nil)
	if err != nil {
		return nil, err
	}
	defer bs.close()
	cl := bs.cl
	urls := site.URLs(o.mixedPages)
	res := &mixedResult{Pages: len(urls), Tabs: o.tabs}
	run := func(render string) (float64, []json.RawMessage, error) {
		t0 := time.Now()
		id, err := cl.submitAsync(ctx, "batch_extract_pages", map[string]any{
			"urls": urls, "fields": fixture.MixedFields(), "concurrency": o.tabs, "perHostConcurrency": perHost(o.tabs), "render": render, "includeText": false,
		})
		if err != nil {
			return 0, nil, err
		}
		pages, err := finishedPages(ctx, cl, id, len(urls))
		if err != nil {
			return 0, nil, err
		}
		return float64(len(urls)) / time.Since(t0).Seconds(), pages, nil
	}
	for r := 0; r < o.repeats; r++ {
		order := []string{"auto", "browser"}
		if r%2 == 1 {
			order = []string{"browser", "auto"}
		}
		got := map[string][]json.RawMessage{}
		rates := map[string]float64{}
		for _, render := range order {
			rate, pages, err := run(render)
			if err != nil {
				return nil, fmt.Errorf("repeat %d (%s): %w", r+1, render, err)
			}
			rates[render], got[render] = rate, pages
		}
		mism, share := comparePages(got["auto"], got["browser"])
		res.Mismatches += mism
		res.AutoHTTP = share
		res.Auto, res.Browser = append(res.Auto, rates["auto"]), append(res.Browser, rates["browser"])
		fmt.Fprintf(out, "  repeat %d: auto %.1f pages/s (%.0f%% over HTTP), browser %.1f pages/s → %.2f×; %d pages differ\n",
			r+1, rates["auto"], share*100, rates["browser"], ratio(rates["auto"], rates["browser"]), mism)
	}
	res.AutoMed, res.BrowserMd = median(res.Auto), median(res.Browser)
	res.Ratio = ratio(res.AutoMed, res.BrowserMd)
	return res, nil
}

// comparePages counts the pages whose title or fields differ between the
// auto and the browser run (same order), and auto's share over HTTP.
func comparePages(auto, browser []json.RawMessage) (mismatches int, share float64) {
	type page struct {
		Title      string          `json:"title"`
		Fields     json.RawMessage `json:"fields"`
		RenderedBy string          `json:"renderedBy"`
	}
	overHTTP := 0
	for i := range auto {
		var a, b page
		if json.Unmarshal(auto[i], &a) != nil || json.Unmarshal(browser[i], &b) != nil ||
			a.Title != b.Title || !bytes.Equal(a.Fields, b.Fields) {
			mismatches++
		}
		if a.RenderedBy == "http" {
			overHTTP++
		}
	}
	return mismatches, float64(overHTTP) / float64(max(len(auto), 1))
}
