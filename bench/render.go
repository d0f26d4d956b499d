package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"time"
)

// renderResult holds scenario 7's figures: batch_extract_pages over static
// pages with render "http" and "auto" against the bare go-rod pool, pages/s
// per repeat, and the share of pages auto served over HTTP.
type renderResult struct {
	Pages, Tabs              int
	HTTP, Auto, Base         []float64
	AutoShare                []float64
	HTTPMed, AutoMed         float64
	BaseMed                  float64
	HTTPRatio, AutoRatio     float64
	AutoShareMed             float64
	HTTPPairMed, AutoPairMed float64
}

// benchRender runs batch_extract_pages end to end through MCP (as
// scenario 1) with render "http" and render "auto", and the bare go-rod
// pool in the same Chromium, rotating which goes first, repeats times.
func benchRender(ctx context.Context, o *options, log *slog.Logger, out io.Writer) (*renderResult, error) {
	js, err := templateExtractJS()
	if err != nil {
		return nil, err
	}
	pages := pageServer()
	defer pages.Close()
	bs, err := startBenchServer(ctx, o, log, "render", nil)
	if err != nil {
		return nil, err
	}
	defer bs.close()
	srv, cl := bs.srv, bs.cl
	base := &baseline{bm: srv.bm, js: js}
	warm := min(20, o.pages)
	for i, render := range []string{"http", "auto"} {
		if _, _, err := engineExtractRender(ctx, cl, pageURLs(pages, warm, 700+i), o.tabs, render); err != nil {
			return nil, fmt.Errorf("warm-up (%s): %w", render, err)
		}
	}
	if _, err := base.run(ctx, pageURLs(pages, warm, 702), o.tabs); err != nil {
		return nil, fmt.Errorf("warm-up (baseline): %w", err)
	}
	res := &renderResult{Pages: o.pages, Tabs: o.tabs}
	var httpPairs, autoPairs []float64
	for r := 0; r < o.repeats; r++ {
		var hd, ad, bd time.Duration
		var share float64
		sides := []func() error{
			func() (err error) {
				hd, _, err = engineExtractRender(ctx, cl, pageURLs(pages, o.pages, 710+3*r), o.tabs, "http")
				return err
			},
			func() (err error) {
				ad, share, err = engineExtractRender(ctx, cl, pageURLs(pages, o.pages, 711+3*r), o.tabs, "auto")
				return err
			},
			func() (err error) {
				bd, err = base.run(ctx, pageURLs(pages, o.pages, 712+3*r), o.tabs)
				return err
			},
		}
		// Rotate the order so load drift hits every side alike.
		for i := range sides {
			if err := sides[(i+r)%len(sides)](); err != nil {
				return nil, fmt.Errorf("repeat %d: %w", r+1, err)
			}
		}
		h, a, b := float64(o.pages)/hd.Seconds(), float64(o.pages)/ad.Seconds(), float64(o.pages)/bd.Seconds()
		res.HTTP, res.Auto, res.Base = append(res.HTTP, h), append(res.Auto, a), append(res.Base, b)
		res.AutoShare = append(res.AutoShare, share)
		httpPairs, autoPairs = append(httpPairs, ratio(h, b)), append(autoPairs, ratio(a, b))
		fmt.Fprintf(out, "  repeat %d: http %.1f pages/s, auto %.1f pages/s (%.0f%% over HTTP), bare rod %.1f pages/s → http %.1f×, auto %.1f×\n",
			r+1, h, a, share*100, b, ratio(h, b), ratio(a, b))
	}
	res.HTTPMed, res.AutoMed, res.BaseMed = median(res.HTTP), median(res.Auto), median(res.Base)
	res.HTTPRatio, res.AutoRatio = ratio(res.HTTPMed, res.BaseMed), ratio(res.AutoMed, res.BaseMed)
	res.AutoShareMed = median(res.AutoShare)
	res.HTTPPairMed, res.AutoPairMed = median(httpPairs), median(autoPairs)
	return res, nil
}

// engineExtractRender is one batch_extract_pages run through MCP with the
// given render mode and the scenario's fields; it returns the time from
// the submission to the last byte of pages.json, and the share of pages
// read over HTTP (renderedBy).
func engineExtractRender(ctx context.Context, cl *client, urls []string, tabs int, render string) (time.Duration, float64, error) {
	start := time.Now()
	fields := map[string]any{}
	for k, v := range benchFields {
		fields[k] = v
	}
	id, err := cl.submitAsync(ctx, "batch_extract_pages", map[string]any{
		"urls": urls, "fields": fields, "concurrency": tabs, "perHostConcurrency": perHost(tabs), "render": render,
	})
	if err != nil {
		return 0, 0, err
	}
	pages, err := finishedPages(ctx, cl, id, len(urls))
	if err != nil {
		return 0, 0, err
	}
	elapsed := time.Since(start)
	overHTTP := 0
	for _, raw := range pages {
		var p struct {
			RenderedBy string `json:"renderedBy"`
		}
		if json.Unmarshal(raw, &p) == nil && p.RenderedBy == "http" {
			overHTTP++
		}
	}
	return elapsed, float64(overHTTP) / float64(len(urls)), checkPages(urls, pages)
}

// finishedPages waits for run id to succeed and returns its pages.json,
// which must hold want pages.
func finishedPages(ctx context.Context, cl *client, id string, want int) ([]json.RawMessage, error) {
	run, err := cl.waitRun(ctx, id, 50*time.Millisecond)
	if err != nil {
		return nil, err
	}
	if run.Status != "succeeded" || len(run.ArtifactIDs) == 0 {
		return nil, fmt.Errorf("run %s ended %s: %s", id, run.Status, run.Error)
	}
	data, err := cl.readArtifact(ctx, run.ArtifactIDs[0], true)
	if err != nil {
		return nil, err
	}
	var pages []json.RawMessage
	if err := json.Unmarshal(data, &pages); err != nil {
		return nil, fmt.Errorf("pages.json: %w", err)
	}
	if len(pages) != want {
		return nil, fmt.Errorf("pages.json has %d pages, want %d", len(pages), want)
	}
	return pages, nil
}
