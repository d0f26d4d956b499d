package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/browsertask/browsertask/engine"
	"github.com/browsertask/browsertask/internal/fixture"
)

// Scenario 13 (-only autocost): what render "auto" costs on a real
// documentation site, side by side with "http" and "browser" in one run.
// batch_extract_pages reads every page of a corpus (python3-doc unless
// -autocost-corpus names another of internal/fixture's documentation
// corpora, served on loopback by this process) with fields h1 and all h2,
// 5 tabs, once per render mode and repeat, the order rotating; the CPU of
// this process (daemon and page server, in process) and of Chromium is
// read around each run (cpu.go). Chromium is launched by a warm-up run
// first, so no mode pays for the launch. The goal (issue 28): auto ≤ 3×
// http's CPU per page on a static site.

// autoCostResult holds scenario 13's figures: CPU ms per page (this
// process + Chromium) per render mode and repeat, auto's share over HTTP.
type autoCostResult struct {
	Corpus       string
	Pages, Tabs  int
	CPU          map[string][]float64 // render → ms/page per repeat
	Share        []float64            // auto's pages over HTTP per repeat
	Reasons      map[string]int       // auto's renderReasons, failed pages, all repeats
	AutoOverHTTP float64              // median ratio auto/http CPU per page
}

// autoCostModes are the render modes scenario 13 compares.
var autoCostModes = []string{"http", "auto", "browser"}

// benchAutoCost runs scenario 13.
func benchAutoCost(ctx context.Context, o *options, log *slog.Logger, out io.Writer) (*autoCostResult, error) {
	dir, err := fixture.LocateCorpus(o.autoCostCorpus)
	if err != nil {
		return nil, err
	}
	rel, err := fixture.CorpusPages(dir)
	if err != nil {
		return nil, err
	}
	site, err := fixture.StartCorpus(dir)
	if err != nil {
		return nil, err
	}
	defer site.Close()
	urls := make([]string, len(rel))
	for i, p := range rel {
		urls[i] = site.URL() + "/" + filepath.ToSlash(p)
	}
	bs, err := startBenchServer(ctx, o, log, "autocost", func(c *engine.Config) { c.MaxURLs = max(c.MaxURLs, len(urls)) })
	if err != nil {
		return nil, err
	}
	defer bs.close()
	if _, _, err := autoCostRun(ctx, bs.cl, urls[:min(10, len(urls))], o.tabs, "browser"); err != nil {
		return nil, fmt.Errorf("warm-up: %w", err)
	}
	res := &autoCostResult{Corpus: o.autoCostCorpus, Pages: len(urls), Tabs: o.tabs, CPU: map[string][]float64{}, Reasons: map[string]int{}}
	var ratios []float64
	for r := 0; r < o.repeats; r++ {
		perPage := map[string]float64{}
		for i := range autoCostModes {
			mode := autoCostModes[(i+r)%len(autoCostModes)]
			s0, b0 := cpuTimes(bs.srv.bm.PIDs())
			reasons, share, err := autoCostRun(ctx, bs.cl, urls, o.tabs, mode)
			if err != nil {
				return nil, fmt.Errorf("repeat %d, render %s: %w", r+1, mode, err)
			}
			s1, b1 := cpuTimes(bs.srv.bm.PIDs())
			perPage[mode] = (s1 - s0 + b1 - b0) * 1000 / float64(len(urls))
			res.CPU[mode] = append(res.CPU[mode], perPage[mode])
			if mode == "auto" {
				res.Share = append(res.Share, share)
			}
			for k, n := range reasons {
				if mode == "auto" || strings.HasSuffix(k, ": failed pages") {
					res.Reasons[k] += n
				}
			}
		}
		ratios = append(ratios, ratio(perPage["auto"], perPage["http"]))
		fmt.Fprintf(out, "  repeat %d: CPU ms/page http %.1f, auto %.1f (%.1f%% over HTTP), browser %.1f → auto/http %.2f×, browser/http %.1f×\n",
			r+1, perPage["http"], perPage["auto"], 100*res.Share[r], perPage["browser"],
			ratio(perPage["auto"], perPage["http"]), ratio(perPage["browser"], perPage["http"]))
	}
	res.AutoOverHTTP = median(ratios)
	fmt.Fprintf(out, "13. render auto's cost on %s (%d pages, fields h1 and all h2, %d tabs, median of %d): CPU ms/page (this process + Chromium) http %.1f, auto %.1f, browser %.1f → auto/http %.2f× (target ≤ 3: %s), browser/http %.1f×; auto %.1f%% over HTTP; auto's browser pages and every mode's failed pages over all repeats %s\n",
		res.Corpus, res.Pages, res.Tabs, len(ratios), median(res.CPU["http"]), median(res.CPU["auto"]), median(res.CPU["browser"]),
		res.AutoOverHTTP, verdict(res.AutoOverHTTP <= 3), ratio(median(res.CPU["browser"]), median(res.CPU["http"])),
		100*median(res.Share), reasonList(res.Reasons))
	return res, nil
}

// autoCostRun is one batch_extract_pages run of scenario 13; it returns
// the pages' renderReasons (counted, group reasons cut after the group;
// failed pages under "<render>: failed pages") and the share read over
// HTTP.
func autoCostRun(ctx context.Context, cl *client, urls []string, tabs int, render string) (map[string]int, float64, error) {
	id, err := cl.submitAsync(ctx, "batch_extract_pages", map[string]any{
		"urls": urls, "concurrency": tabs, "perHostConcurrency": perHost(tabs), "render": render,
		"fields": map[string]any{"h1": "h1", "h2s": map[string]any{"selector": "h2", "all": true}},
	})
	if err != nil {
		return nil, 0, err
	}
	// A page failing under load (a timeout in Chromium) costs CPU like
	// any other: a partial success is measured, its failures counted.
	run, err := cl.waitRun(ctx, id, 50*time.Millisecond)
	if err != nil {
		return nil, 0, err
	}
	if (run.Status != "succeeded" && run.Status != "partial_success") || len(run.ArtifactIDs) == 0 {
		return nil, 0, fmt.Errorf("run %s ended %s: %s", id, run.Status, run.Error)
	}
	data, err := cl.readArtifact(ctx, run.ArtifactIDs[0], true)
	if err != nil {
		return nil, 0, err
	}
	var pages []json.RawMessage
	if err := json.Unmarshal(data, &pages); err != nil || len(pages) != len(urls) {
		return nil, 0, fmt.Errorf("pages.json: %d pages, want %d (%v)", len(pages), len(urls), err)
	}
	reasons := map[string]int{}
	overHTTP := 0
	for _, raw := range pages {
		var p struct {
			RenderedBy   string          `json:"renderedBy"`
			RenderReason string          `json:"renderReason"`
			Error        json.RawMessage `json:"error"`
		}
		if json.Unmarshal(raw, &p) != nil {
			continue
		}
		if len(p.Error) > 0 && string(p.Error) != "null" {
			reasons[render+": failed pages"]++
		}
		if p.RenderedBy == "http" {
			overHTTP++
			continue
		}
		r := p.RenderReason
		if i := strings.Index(r, " needs JavaScript: "); i >= 0 {
			r = r[:i] + " needs JavaScript"
		}
		reasons[r]++
	}
	return reasons, float64(overHTTP) / float64(len(urls)), nil
}

// reasonList writes reasons as "reason ×n, …", most frequent first.
func reasonList(reasons map[string]int) string {
	keys := make([]string, 0, len(reasons))
	for k := range reasons {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool {
		if reasons[keys[i]] != reasons[keys[j]] {
			return reasons[keys[i]] > reasons[keys[j]]
		}
		return keys[i] < keys[j]
	})
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = fmt.Sprintf("%q ×%d", k, reasons[k])
	}
	return "[" + strings.Join(parts, ", ") + "]"
}
