package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"time"
)

// extractResult holds scenario 1's figures: pages/s per repeat.
type extractResult struct {
	Pages, Tabs    int
	Engine, Base   []float64
	EngineMed      float64
	BaseMed        float64
	Ratio          float64
	PerRepeatRatio []float64
	// MedianPairRatio is the median of the per-repeat ratios, which
	// cancels load drift between repeats better than the ratio of medians.
	MedianPairRatio float64
	// CPU per page (ms, median of the repeats) of the browser's processes
	// and of this process, for each side: where a gap comes from.
	EngineBrowserCPU, EngineSelfCPU, BaseBrowserCPU, BaseSelfCPU []float64
}

// benchExtract runs batch_extract_pages end to end through MCP (submit
// async, poll get_task_run, read pages.json with get_artifact) against an
// in-process daemon, alternating with the bare go-rod baseline, repeats
// times each after one small warm-up of both (so neither pays the browser
// launch).
func benchExtract(ctx context.Context, o *options, log *slog.Logger, out io.Writer) (*extractResult, error) {
	js, err := templateExtractJS()
	if err != nil {
		return nil, err
	}
	pages := pageServer()
	defer pages.Close()
	bs, err := startBenchServer(ctx, o, log, "extract", nil)
	if err != nil {
		return nil, err
	}
	defer bs.close()
	srv, cl := bs.srv, bs.cl
	// The same browser: the baseline opens its own incognito context and
	// raw CDP tabs in the Chromium the daemon launched.
	base := &baseline{bm: srv.bm, js: js}

	warm := min(20, o.pages)
	if _, err := engineExtract(ctx, cl, pageURLs(pages, warm, 0), o.tabs, nil); err != nil {
		return nil, fmt.Errorf("warm-up (engine): %w", err)
	}
	if _, err := base.run(ctx, pageURLs(pages, warm, 1), o.tabs); err != nil {
		return nil, fmt.Errorf("warm-up (baseline): %w", err)
	}
	res := &extractResult{Pages: o.pages, Tabs: o.tabs}
	for r := 0; r < o.repeats; r++ {
		// ABBA order: drift in the machine's load hits both sides alike.
		var (
			ed, bd     time.Duration
			ecpu, bcpu [2]float64 // CPU seconds: this process, the browser
		)
		measured := func(d *time.Duration, cpu *[2]float64, f func() (time.Duration, error)) (err error) {
			s0, b0 := cpuTimes(srv.bm.PIDs())
			*d, err = f()
			s1, b1 := cpuTimes(srv.bm.PIDs())
			cpu[0], cpu[1] = s1-s0, b1-b0
			return err
		}
		engineSide := func() error {
			return measured(&ed, &ecpu, func() (time.Duration, error) {
				return engineExtract(ctx, cl, pageURLs(pages, o.pages, 2+2*r), o.tabs, nil)
			})
		}
		baseSide := func() error {
			return measured(&bd, &bcpu, func() (time.Duration, error) {
				return base.run(ctx, pageURLs(pages, o.pages, 3+2*r), o.tabs)
			})
		}
		first, second := engineSide, baseSide
		if r%2 == 1 {
			first, second = baseSide, engineSide
		}
		if err := first(); err != nil {
			return nil, fmt.Errorf("repeat %d: %w", r+1, err)
		}
		if err := second(); err != nil {
			return nil, fmt.Errorf("repeat %d: %w", r+1, err)
		}
		e, b := float64(o.pages)/ed.Seconds(), float64(o.pages)/bd.Seconds()
		res.Engine, res.Base = append(res.Engine, e), append(res.Base, b)
		res.PerRepeatRatio = append(res.PerRepeatRatio, ratio(e, b))
		perPage := func(sec float64) float64 { return sec * 1000 / float64(o.pages) }
		res.EngineBrowserCPU = append(res.EngineBrowserCPU, perPage(ecpu[1]))
		res.EngineSelfCPU = append(res.EngineSelfCPU, perPage(ecpu[0]))
		res.BaseBrowserCPU = append(res.BaseBrowserCPU, perPage(bcpu[1]))
		res.BaseSelfCPU = append(res.BaseSelfCPU, perPage(bcpu[0]))
		fmt.Fprintf(out, "  repeat %d: browsertask %.1f pages/s (%.1f s), bare rod %.1f pages/s (%.1f s), ratio %.2f;"+
			" CPU ms/page browser+this process: browsertask %.1f+%.1f, bare %.1f+%.1f\n",
			r+1, e, ed.Seconds(), b, bd.Seconds(), ratio(e, b),
			perPage(ecpu[1]), perPage(ecpu[0]), perPage(bcpu[1]), perPage(bcpu[0]))
	}
	res.EngineMed, res.BaseMed = median(res.Engine), median(res.Base)
	res.Ratio = ratio(res.EngineMed, res.BaseMed)
	res.MedianPairRatio = median(res.PerRepeatRatio)
	return res, nil
}

// engineExtract is one batch_extract_pages run through MCP; it returns the
// time from the submission to the last byte of pages.json. onSubmit, when
// not nil, is called with the run's id as soon as it is submitted.
func engineExtract(ctx context.Context, cl *client, urls []string, tabs int, onSubmit func(runID string)) (time.Duration, error) {
	start := time.Now()
	fields := map[string]any{}
	for k, v := range benchFields {
		fields[k] = v
	}
	id, err := cl.submitAsync(ctx, "batch_extract_pages", map[string]any{
		"urls": urls, "fields": fields, "concurrency": tabs, "perHostConcurrency": perHost(tabs),
	})
	if err != nil {
		return 0, err
	}
	if onSubmit != nil {
		onSubmit(id)
	}
	run, err := cl.waitRun(ctx, id, 100*time.Millisecond)
	if err != nil {
		return 0, err
	}
	if run.Status != "succeeded" || len(run.ArtifactIDs) == 0 {
		return 0, fmt.Errorf("run %s ended %s: %s", id, run.Status, run.Error)
	}
	data, err := cl.readArtifact(ctx, run.ArtifactIDs[0], true)
	if err != nil {
		return 0, err
	}
	elapsed := time.Since(start)
	var pages []json.RawMessage
	if err := json.Unmarshal(data, &pages); err != nil {
		return 0, fmt.Errorf("pages.json: %w", err)
	}
	if len(pages) != len(urls) {
		return 0, fmt.Errorf("pages.json has %d pages, want %d", len(pages), len(urls))
	}
	return elapsed, checkPages(urls, pages)
}
