package main

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"strings"
	"time"

	"github.com/browsertask/browsertask/browser"
	"github.com/browsertask/browsertask/engine"
	"github.com/browsertask/browsertask/internal/fidelity"
	"github.com/browsertask/browsertask/internal/fixture"
)

// fidelityResult holds scenario 14's reports, one per corpus.
type fidelityResult struct {
	Reports []*fidelity.Report
	// Skipped names the corpora that are not installed, with why.
	Skipped []string
	// Details is the file every difference was written to.
	Details string
	Elapsed time.Duration
}

// benchFidelity runs batch_extract_pages with render "browser" and render
// "http" on every page of each corpus (internal/fixture/corpus.go), served
// on loopback, through MCP against an in-process daemon whose Chromium
// resolves no name but 127.0.0.1 and localhost (the saved pages name
// hundreds of outside hosts), and compares the two readings page by page
// (internal/fidelity). It prints per corpus the share of pages equal per
// aspect with the classes of the rest, and writes every difference to
// o.fidelityOut.
func benchFidelity(ctx context.Context, o *options, log *slog.Logger, out io.Writer) (*fidelityResult, error) {
	res := &fidelityResult{Details: o.fidelityOut}
	start := time.Now()
	dir, err := os.MkdirTemp("", "browsertask-bench-fidelity-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)
	cfg := engine.DefaultConfig()
	cfg.MaxTabsPerSession = max(cfg.MaxTabsPerSession, o.tabs)
	srv, err := startInprocWith(ctx, dir, cfg, browser.Options{ExtraArgs: []string{fixture.LoopbackResolverRules}}, log)
	if err != nil {
		return nil, err
	}
	defer srv.stop()
	cl, err := connectHTTP(ctx, srv.endpoint())
	if err != nil {
		return nil, err
	}
	defer cl.close()
	f, err := os.Create(o.fidelityOut)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	w := bufio.NewWriter(f)
	fmt.Fprintln(w, "corpus\tpage\taspect\tclass\tdetail")
	ex := &mcpExtractor{cl: cl, tabs: o.tabs}
	for _, c := range fixture.Corpora() {
		if !selected(o.fidelityCorpora, c.Name) {
			continue
		}
		cdir, err := fixture.LocateCorpus(c.Name)
		if err != nil {
			res.Skipped = append(res.Skipped, err.Error())
			fmt.Fprintf(out, "  skipped: %v\n", err)
			continue
		}
		pages, err := fixture.CorpusPages(cdir)
		if err != nil {
			return nil, err
		}
		if o.fidelityMatch != "" {
			pages = matchingPages(pages, o.fidelityMatch)
		}
		if o.fidelityPages > 0 {
			pages = fixture.SamplePages(pages, o.fidelityPages)
		}
		cs, err := fixture.StartCorpus(cdir)
		if err != nil {
			return nil, err
		}
		name := c.Name
		progress := func(done, total int) { fmt.Fprintf(out, "  %s: %d/%d pages compared\n", name, done, total) }
		r, err := fidelity.Run(ctx, ex, fidelity.Corpus{Name: c.Name, Generator: c.Generator, Dir: cdir, BaseURL: cs.URL(),
			Pages: pages, Progress: progress})
		cs.Close()
		if err != nil {
			return nil, err
		}
		r.Print(out)
		if err := r.WriteDetails(w); err != nil {
			return nil, err
		}
		res.Reports = append(res.Reports, r)
	}
	if err := w.Flush(); err != nil {
		return nil, err
	}
	res.Elapsed = time.Since(start)
	fmt.Fprintf(out, "  every difference (corpus, page, aspect, class, detail): %s\n", o.fidelityOut)
	return res, nil
}

// matchingPages keeps the pages whose path contains one of the
// comma-separated strings of list.
func matchingPages(pages []string, list string) []string {
	var out []string
	for _, p := range pages {
		for _, s := range strings.Split(list, ",") {
			if s = strings.TrimSpace(s); s != "" && strings.Contains(p, s) {
				out = append(out, p)
				break
			}
		}
	}
	return out
}

// selected reports whether name is in the comma-separated list (empty or
// "all" selects every name).
func selected(list, name string) bool {
	if list == "" || list == "all" {
		return true
	}
	for _, s := range strings.Split(list, ",") {
		if strings.TrimSpace(s) == name {
			return true
		}
	}
	return false
}

// mcpExtractor runs batch_extract_pages over MCP for the comparison.
type mcpExtractor struct {
	cl   *client
	tabs int
}

// Extract submits one run with fidelity.Inputs and reads its pages.json;
// a run that ended without one is an error naming its status.
func (e *mcpExtractor) Extract(ctx context.Context, urls []string, render string) ([]fidelity.Page, error) {
	id, err := e.cl.submitAsync(ctx, "batch_extract_pages", fidelity.Inputs(urls, render, e.tabs))
	if err != nil {
		return nil, err
	}
	run, err := e.cl.waitRun(ctx, id, 100*time.Millisecond)
	if err != nil {
		return nil, err
	}
	if len(run.ArtifactIDs) == 0 {
		return nil, fmt.Errorf("run %s ended %s without pages.json: %s", id, run.Status, run.Error)
	}
	data, err := e.cl.readArtifact(ctx, run.ArtifactIDs[0], true)
	if err != nil {
		return nil, err
	}
	return fidelity.DecodePages(data)
}

// printFidelitySummary prints the scenario's figures for the summary: per
// corpus and aspect, the share of pages equal.
func printFidelitySummary(out io.Writer, r *fidelityResult) {
	fmt.Fprintf(out, "fidelity (HTTP path vs Chromium, batch_extract_pages, every page; %.0f s; equal on the pages both paths finished):\n", r.Elapsed.Seconds())
	fmt.Fprintf(out, "  %-18s %6s %8s %7s %7s %7s %7s %7s\n", "corpus", "pages", "finished", "title", "text", "links", "meta", "fields")
	for _, rep := range r.Reports {
		fmt.Fprintf(out, "  %-18s %6d %8d", rep.Name, rep.Pages, rep.Finished)
		for _, a := range fidelity.Aspects {
			fmt.Fprintf(out, " %6.1f%%", 100*rep.Share(a))
		}
		fmt.Fprintln(out)
	}
	for _, rep := range r.Reports {
		for _, g := range rep.Gaps() {
			fmt.Fprintf(out, "  below the acceptance threshold: %s\n", g)
		}
	}
	for _, s := range r.Skipped {
		fmt.Fprintf(out, "  skipped: %s\n", s)
	}
}
