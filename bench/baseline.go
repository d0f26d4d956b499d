package main

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/go-rod/rod"
	"github.com/go-rod/rod/lib/proto"
	"golang.org/x/sync/errgroup"

	"github.com/browsertask/browsertask/browser"
)

// waitLoadJS is the load wait batch_extract_pages uses (browser/navigate.go).
const waitLoadJS = `new Promise(r => document.readyState === 'complete' ? r(true) : window.addEventListener('load', () => r(true), {once: true}))`

// baseline is the floor: bare go-rod CDP calls in the same Chromium the
// daemon under test uses (its browser.Manager), in a fresh incognito
// context per repeat, with tabs reused across URLs — per URL one
// Page.navigate, one Runtime.evaluate waiting for load, one Runtime.evaluate
// of the template's own extraction script. No database, no MCP, no events.
type baseline struct {
	bm  *browser.Manager
	js  string
	seq int
}

// run extracts urls with tabs tabs and returns the elapsed time, from
// creating the context to the JSON of every page.
func (b *baseline) run(ctx context.Context, urls []string, tabs int) (time.Duration, error) {
	b.seq++
	start := time.Now()
	s, err := b.bm.Session(ctx, fmt.Sprintf("bench_baseline_%d", b.seq))
	if err != nil {
		return 0, err
	}
	defer b.bm.CloseSession(context.Background(), s.ID())
	rb := s.Browser()
	script := fmt.Sprintf(b.js, extractConfig())
	jobs := make(chan int, len(urls))
	for i := range urls {
		jobs <- i
	}
	close(jobs)
	out := make([]json.RawMessage, len(urls))
	var g errgroup.Group
	for w := 0; w < tabs; w++ {
		g.Go(func() error { return baselineWorker(ctx, rb, urls, script, jobs, out) })
	}
	if err := g.Wait(); err != nil {
		return 0, err
	}
	if _, err := json.Marshal(out); err != nil {
		return 0, err
	}
	elapsed := time.Since(start)
	return elapsed, checkPages(urls, out)
}

// baselineWorker opens one tab and extracts jobs in it.
func baselineWorker(ctx context.Context, rb *rod.Browser, urls []string, script string, jobs <-chan int, out []json.RawMessage) error {
	p, err := openTab(ctx, rb)
	if err != nil {
		return err
	}
	for i := range jobs {
		if err := extractOne(p, urls[i], script, &out[i]); err != nil {
			return err
		}
	}
	return nil
}

// checkPages verifies every page was extracted from the right document: a
// benchmark that measures wrong work is worse than none.
func checkPages(urls []string, pages []json.RawMessage) error {
	for i, raw := range pages {
		var p struct {
			Title  string         `json:"title"`
			Fields map[string]any `json:"fields"`
		}
		if err := json.Unmarshal(raw, &p); err != nil {
			return fmt.Errorf("page %d: %w", i, err)
		}
		n := urls[i][strings.LastIndexByte(urls[i], '/')+1:]
		if p.Title != "Page "+n || p.Fields["name"] != "Item "+n {
			return fmt.Errorf("page %s: extracted title %q name %v", urls[i], p.Title, p.Fields["name"])
		}
	}
	return nil
}

// openTab opens a blank tab in rb's browser context, bound to ctx.
func openTab(ctx context.Context, rb *rod.Browser) (*rod.Page, error) {
	t, err := proto.TargetCreateTarget{URL: "about:blank", BrowserContextID: rb.BrowserContextID}.Call(rb.Context(ctx))
	if err != nil {
		return nil, err
	}
	p, err := rb.PageFromTarget(t.TargetID)
	if err != nil {
		return nil, err
	}
	return p.Context(ctx), nil
}
