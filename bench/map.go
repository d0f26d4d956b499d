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

// benchMap is scenario 15: map_site (no browser) over the generated
// 2000-page site and over python3-doc when it is installed, side by side
// with crawl_site render "http" over the same site (the same frontier
// reading the pages' fields): URLs/s from the submission to the last byte
// of urls.json, through MCP against an in-process daemon.
func benchMap(ctx context.Context, o *options, log *slog.Logger, out io.Writer) error {
	site := fixture.Start()
	defer site.Close()
	bs, err := startBenchServer(ctx, o, log, "map", func(c *engine.Config) { c.MaxURLs = max(c.MaxURLs, 5000) })
	if err != nil {
		return err
	}
	defer bs.close()
	targets := []struct{ name, start string }{{"generated site", site.URL("/big/0")}}
	if dir, err := fixture.LocateCorpus(fixture.CorpusPython); err == nil {
		cs, err := fixture.StartCorpus(dir)
		if err != nil {
			return err
		}
		defer cs.Close()
		targets = append(targets, struct{ name, start string }{fixture.CorpusPython, cs.URL() + "/index.html"})
	} else {
		fmt.Fprintf(out, "  %s not installed (%v): generated site only\n", fixture.CorpusPython, err)
	}
	for _, tg := range targets {
		// crawl_site first: the site's files are then warm for both.
		t0 := time.Now()
		id, err := bs.cl.submitAsync(ctx, "crawl_site", map[string]any{"startUrl": tg.start, "maxPages": 5000, "maxDepth": 100,
			"concurrency": o.tabs, "render": "http", "fields": map[string]any{"h1": "h1"}})
		if err != nil {
			return err
		}
		run, err := bs.cl.waitRun(ctx, id, 50*time.Millisecond)
		if err != nil {
			return err
		}
		if len(run.ArtifactIDs) > 0 {
			if _, err := bs.cl.readArtifact(ctx, run.ArtifactIDs[0], true); err != nil {
				return err
			}
		}
		crawlTook := time.Since(t0)
		n, rate, err := mapOnce(ctx, bs.cl, tg.start, o.tabs)
		if err != nil {
			return fmt.Errorf("map_site on %s: %w", tg.name, err)
		}
		crawlRate := float64(n) / crawlTook.Seconds()
		fmt.Fprintf(out, "  %s: map_site %d URLs, %.0f URLs/s; crawl_site render http %.0f pages/s (map %.1f× crawl)\n", tg.name, n, rate, crawlRate, ratio(rate, crawlRate))
	}
	return nil
}

// mapOnce runs one map_site and returns its URL count and URLs/s.
func mapOnce(ctx context.Context, cl *client, start string, tabs int) (int, float64, error) {
	t0 := time.Now()
	id, err := cl.submitAsync(ctx, "map_site", map[string]any{"startUrl": start, "maxPages": 5000, "maxDepth": 100, "concurrency": tabs})
	if err != nil {
		return 0, 0, err
	}
	run, err := cl.waitRun(ctx, id, 50*time.Millisecond)
	if err != nil {
		return 0, 0, err
	}
	if run.Status != "succeeded" && run.Status != "partial_success" || len(run.ArtifactIDs) == 0 {
		return 0, 0, fmt.Errorf("run %s ended %s: %s", id, run.Status, run.Error)
	}
	data, err := cl.readArtifact(ctx, run.ArtifactIDs[0], true)
	if err != nil {
		return 0, 0, err
	}
	var urls []json.RawMessage
	if err := json.Unmarshal(data, &urls); err != nil {
		return 0, 0, fmt.Errorf("urls.json: %w", err)
	}
	return len(urls), float64(len(urls)) / time.Since(t0).Seconds(), nil
}
