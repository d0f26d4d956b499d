package main

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/url"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"time"

	"golang.org/x/sync/errgroup"

	"github.com/browsertask/browsertask/engine"
	"github.com/browsertask/browsertask/internal/extract/content"
	"github.com/browsertask/browsertask/internal/extract/fetch"
	"github.com/browsertask/browsertask/internal/fixture"
)

// contentScore is one path's score on go-trafilatura's comparison set,
// counted as its scripts/comparison/content.go counts: per expected
// snippet a true positive or false negative (With), a false positive or
// true negative (Without); a page that failed counts all its With as
// false negatives and all its Without as true negatives.
type contentScore struct {
	Path           string
	Docs, Failed   int
	TP, FN, FP, TN int
	Elapsed        time.Duration
	// Ratios are Markdown bytes / raw HTML bytes of the comparison
	// directory's pages (acceptance 3), sorted.
	Ratios []float64
	// ExtractErrWith and ExtractErrWithout are the With and Without
	// snippets of pages content.Extract refused (not of pages that did
	// not load): counted above as FN and TN, while go-trafilatura's
	// script leaves such pages out of its counts (an error gives an empty
	// evaluation there), so scriptRule subtracts them.
	ExtractErrWith, ExtractErrWithout int
	// Errs are the first failures' messages (up to maxContentErrs), to
	// say why pages failed.
	Errs []string
}

func (s *contentScore) precision() float64 { return iratio(s.TP, s.TP+s.FP) }
func (s *contentScore) recall() float64    { return iratio(s.TP, s.TP+s.FN) }
func (s *contentScore) accuracy() float64  { return iratio(s.TP+s.TN, s.TP+s.TN+s.FP+s.FN) }
func (s *contentScore) fscore() float64    { return iratio(2*s.TP, 2*s.TP+s.FP+s.FN) }
func (s *contentScore) pagesPerSec() float64 {
	return float64(s.Docs) / max(s.Elapsed.Seconds(), 1e-9)
}

// scriptRule is the score counted exactly as go-trafilatura's
// scripts/comparison/content.go counts it: pages whose extraction
// returned an error are left out.
func (s *contentScore) scriptRule() *contentScore {
	r := *s
	r.FN -= s.ExtractErrWith
	r.TN -= s.ExtractErrWithout
	return &r
}

func iratio(a, b int) float64 { return ratio(float64(a), float64(b)) }

// contentResult holds scenario 15's two scores.
type contentResult struct {
	HTTP, Browser *contentScore
	Skipped       string
}

// contentPage is one entry of the set, served at URL.
type contentPage struct {
	fixture.Expectation
	URL        string
	RawBytes   int64
	Comparison bool // under test-files/comparison (the 945 pages)
}

// benchContent scores internal/extract/content on go-trafilatura's
// comparison set (the 945 pages of test-files/comparison and the mock
// pages scripts/comparison/data.go also names), served on loopback: over
// the HTTP path (internal/extract/fetch fetches and decodes each page,
// content.Extract reads it) and over the browser path (Chromium, resolving
// no name but loopback, loads each page; document.documentElement.outerHTML
// after load goes to content.Extract). It prints precision, recall,
// accuracy, F and pages/s per path, and the Markdown/raw HTML byte ratio.
func benchContent(ctx context.Context, o *options, log *slog.Logger, out io.Writer) (*contentResult, error) {
	testFiles, entries, err := fixture.TrafilaturaExpectations()
	if err != nil {
		fmt.Fprintf(out, "  skipped: %v\n", err)
		return &contentResult{Skipped: err.Error()}, nil
	}
	srv, err := fixture.StartCorpus(testFiles)
	if err != nil {
		return nil, err
	}
	defer srv.Close()
	pages, missing := contentPages(testFiles, srv.URL(), entries)
	fmt.Fprintf(out, "  %d entries in data.go, %d pages found (%d in comparison/), %d missing\n", len(entries), len(pages), countComparison(pages), missing)
	if o.contentPages > 0 && o.contentPages < len(pages) {
		pages = pages[:o.contentPages]
		fmt.Fprintf(out, "  scoring the first %d pages only (-content-pages)\n", len(pages))
	}
	paths := map[string]bool{}
	for _, p := range strings.Split(o.contentPaths, ",") {
		paths[strings.TrimSpace(p)] = true
	}
	res := &contentResult{}
	if paths["http"] {
		if res.HTTP, err = scoreHTTP(ctx, pages, o.tabs); err != nil {
			return nil, err
		}
		printContentScore(out, res.HTTP)
	}
	if paths["browser"] {
		if res.Browser, err = scoreBrowser(ctx, pages, o.tabs, log); err != nil {
			return nil, err
		}
		printContentScore(out, res.Browser)
	}
	return res, nil
}

// contentPages finds each entry's file where the script looks for it:
// comparison/ first, then mock/.
func contentPages(testFiles, base string, entries []fixture.Expectation) (pages []contentPage, missing int) {
	for _, e := range entries {
		found := false
		for _, sub := range []string{"comparison", "mock"} {
			st, err := os.Stat(filepath.Join(testFiles, sub, e.File))
			if err != nil || !st.Mode().IsRegular() {
				continue
			}
			pages = append(pages, contentPage{Expectation: e, URL: base + "/" + sub + "/" + pathEscape(e.File),
				RawBytes: st.Size(), Comparison: sub == "comparison"})
			found = true
			break
		}
		if !found {
			missing++
		}
	}
	return pages, missing
}

// pathEscape escapes a file name for a URL path (names hold non-ASCII
// letters and spaces).
func pathEscape(name string) string {
	return (&url.URL{Path: name}).EscapedPath()
}

func countComparison(pages []contentPage) int {
	n := 0
	for _, p := range pages {
		if p.Comparison {
			n++
		}
	}
	return n
}

// maxContentErrs is how many failures a path prints.
const maxContentErrs = 20

// scorer accumulates a path's counts from its workers.
type scorer struct {
	mu sync.Mutex
	s  *contentScore
}

// add scores one page's extraction (res) or failure (err).
// extractErr says err came from content.Extract, not from loading.
func (sc *scorer) add(p contentPage, res content.Result, err error, extractErr bool) {
	sc.mu.Lock()
	defer sc.mu.Unlock()
	s := sc.s
	s.Docs++
	if err != nil {
		s.Failed++
		s.FN += len(p.With)
		s.TN += len(p.Without)
		if extractErr {
			s.ExtractErrWith += len(p.With)
			s.ExtractErrWithout += len(p.Without)
		}
		if len(s.Errs) < maxContentErrs {
			s.Errs = append(s.Errs, p.File+": "+err.Error())
		}
		return
	}
	// The script matches snippets against go-trafilatura's ContentText,
	// whose whitespace is collapsed to single spaces; Result.Text keeps
	// paragraph breaks as blank lines, so it is collapsed the same way
	// first (a snippet such as "on that page. " spans a paragraph end).
	text := strings.Join(strings.Fields(res.Text), " ")
	for _, w := range p.With {
		if text != "" && strings.Contains(text, w) {
			s.TP++
		} else {
			s.FN++
		}
	}
	for _, w := range p.Without {
		if text != "" && strings.Contains(text, w) {
			s.FP++
		} else {
			s.TN++
		}
	}
	if p.Comparison && p.RawBytes > 0 {
		s.Ratios = append(s.Ratios, float64(len(res.Markdown))/float64(p.RawBytes))
	}
}

// scoreHTTP fetches every page through the HTTP path with workers
// fetches at a time.
func scoreHTTP(ctx context.Context, pages []contentPage, workers int) (*contentScore, error) {
	f, err := fetch.New(fetch.Options{Policy: engine.URLPolicy{TrustLevel: "local"}})
	if err != nil {
		return nil, err
	}
	defer f.Close()
	sc := &scorer{s: &contentScore{Path: "HTTP (fetch → content.Extract)"}}
	start := time.Now()
	err = forEachPage(ctx, pages, workers, func(ctx context.Context, p contentPage) error {
		pg, err := f.Fetch(ctx, p.URL)
		if err == nil && pg.Status != 200 {
			err = fmt.Errorf("status %d", pg.Status)
		}
		var res content.Result
		loaded := err == nil
		if loaded {
			res, err = content.Extract([]byte(pg.Body), content.Options{PageURL: pg.URL})
		}
		sc.add(p, res, err, loaded)
		return ctx.Err()
	})
	sc.s.Elapsed = time.Since(start)
	sort.Float64s(sc.s.Ratios)
	return sc.s, err
}

// forEachPage runs fn over pages with n workers.
func forEachPage(ctx context.Context, pages []contentPage, n int, fn func(context.Context, contentPage) error) error {
	jobs := make(chan contentPage)
	g, gctx := errgroup.WithContext(ctx)
	g.Go(func() error {
		defer close(jobs)
		for _, p := range pages {
			select {
			case jobs <- p:
			case <-gctx.Done():
				return gctx.Err()
			}
		}
		return nil
	})
	for range max(n, 1) {
		g.Go(func() error {
			for p := range jobs {
				if err := fn(gctx, p); err != nil {
					return err
				}
			}
			return nil
		})
	}
	return g.Wait()
}

// printContentScore prints one path's line and the byte ratio.
func printContentScore(out io.Writer, s *contentScore) {
	fmt.Fprintf(out, "  %s: %d pages (%d failed) in %.1f s, %.1f pages/s — precision %.3f, recall %.3f, accuracy %.3f, F %.3f (TP %d FN %d FP %d TN %d)\n",
		s.Path, s.Docs, s.Failed, s.Elapsed.Seconds(), s.pagesPerSec(), s.precision(), s.recall(), s.accuracy(), s.fscore(), s.TP, s.FN, s.FP, s.TN)
	if r := s.scriptRule(); s.ExtractErrWith+s.ExtractErrWithout > 0 {
		fmt.Fprintf(out, "    counted as go-trafilatura's script counts (pages whose extraction erred left out): precision %.3f, recall %.3f, accuracy %.3f, F %.3f\n",
			r.precision(), r.recall(), r.accuracy(), r.fscore())
	}
	if len(s.Ratios) > 0 {
		fmt.Fprintf(out, "    Markdown bytes / raw HTML bytes over %d comparison pages: median %.3f, p90 %.3f\n",
			len(s.Ratios), quantile(s.Ratios, 0.5), quantile(s.Ratios, 0.9))
	}
	for _, e := range s.Errs {
		fmt.Fprintf(out, "    failed: %s\n", e)
	}
}

// quantile is the q-quantile of sorted xs (nearest rank).
func quantile(xs []float64, q float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	i := int(q*float64(len(xs))+0.5) - 1
	return xs[min(max(i, 0), len(xs)-1)]
}
