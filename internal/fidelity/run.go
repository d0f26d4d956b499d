package fidelity

import (
	"context"
	"fmt"
	"net/url"
	"path/filepath"
	"strings"
	"time"
)

// Extractor runs batch_extract_pages on urls with Inputs(urls, render, …)
// and returns its pages.json. The bench implements it over MCP against an
// in-process daemon, the templates' test with the template itself.
type Extractor interface {
	Extract(ctx context.Context, urls []string, render string) ([]Page, error)
}

// Corpus is one served corpus to compare.
type Corpus struct {
	Name      string
	Generator string
	// Dir is the directory served, the files the classifier reads.
	Dir string
	// BaseURL is where Dir is served ("http://127.0.0.1:PORT").
	BaseURL string
	// Pages are the pages to compare, paths relative to Dir.
	Pages []string
	// Progress, when set, is told after each batch how many pages are
	// compared (a full run takes minutes per corpus).
	Progress func(done, total int)
}

// BatchSize is how many URLs one batch_extract_pages run takes (the
// profile's maxUrls is 1000; smaller runs keep each pages.json small).
const BatchSize = 500

// PageURL is where page rel of a corpus is served.
func PageURL(base, rel string) string {
	segs := strings.Split(rel, "/")
	for i, s := range segs {
		segs[i] = url.PathEscape(s)
	}
	return strings.TrimSuffix(base, "/") + "/" + strings.Join(segs, "/")
}

// Run extracts every page of c with render "browser" and render "http"
// (the browser first in each batch), compares them page by page and
// returns the corpus's report. A page missing from one side's pages.json
// counts as failed on that side.
func Run(ctx context.Context, ex Extractor, c Corpus) (*Report, error) {
	r := NewReport(c.Name, c.Generator)
	start := time.Now()
	for from := 0; from < len(c.Pages); from += BatchSize {
		rels := c.Pages[from:min(from+BatchSize, len(c.Pages))]
		urls := make([]string, len(rels))
		for i, rel := range rels {
			urls[i] = PageURL(c.BaseURL, rel)
		}
		sides := map[string]map[string]Page{}
		for _, render := range []string{"browser", "http"} {
			t0 := time.Now()
			pages, err := ex.Extract(ctx, urls, render)
			if err != nil {
				return nil, fmt.Errorf("%s: render %s, pages %d-%d: %w", c.Name, render, from+1, from+len(rels), err)
			}
			r.Time[render] += time.Since(t0)
			byURL := map[string]Page{}
			for _, p := range pages {
				byURL[p.URL] = p
			}
			sides[render] = byURL
		}
		for i, rel := range rels {
			b, bok := sides["browser"][urls[i]]
			h, hok := sides["http"][urls[i]]
			if !bok {
				b = Page{URL: urls[i], Error: &PageError{ErrorCode: "MISSING", Message: "not in pages.json"}}
			}
			if !hok {
				h = Page{URL: urls[i], Error: &PageError{ErrorCode: "MISSING", Message: "not in pages.json"}}
			}
			src, _ := ReadSource(filepath.Join(c.Dir, filepath.FromSlash(rel)), urls[i], c.Dir) // nil: classes without the markup
			r.Add(rel, b, h, src)
		}
		if c.Progress != nil {
			c.Progress(r.Pages, len(c.Pages))
		}
	}
	r.Elapsed = time.Since(start)
	return r, nil
}
