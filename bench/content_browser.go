package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sort"
	"time"

	"github.com/go-rod/rod"
	"github.com/go-rod/rod/lib/proto"

	"github.com/browsertask/browsertask/browser"
	"github.com/browsertask/browsertask/internal/extract/content"
	"github.com/browsertask/browsertask/internal/fixture"
)

// contentPageTimeout bounds one page in the browser: load and
// serialization. A page past it counts as failed (all its With snippets
// missed), as a run's page timeout would fail it.
const contentPageTimeout = 30 * time.Second

// serializeJS is what the browser path reads after load: the rendered
// DOM as HTML, the doctype in front so the parser keeps standards mode.
const serializeJS = `(() => { const d = document.doctype; return (d ? '<!DOCTYPE ' + d.name + '>' : '') + document.documentElement.outerHTML })()`

// scoreBrowser loads every page in Chromium (its own browser.Manager,
// resolving no name but loopback, so the saved pages' outside hosts fail
// at once) with tabs tabs, and extracts the serialized DOM.
func scoreBrowser(ctx context.Context, pages []contentPage, tabs int, log *slog.Logger) (*contentScore, error) {
	bm := browser.NewManager(browser.Options{Logger: log, ExtraArgs: []string{fixture.LoopbackResolverRules}, MaxTabsPerSession: max(tabs, 1)})
	defer bm.Close()
	s, err := bm.Session(ctx, "bench_content")
	if err != nil {
		return nil, err
	}
	defer bm.CloseSession(context.Background(), s.ID())
	rb := s.Browser()
	sc := &scorer{s: &contentScore{Path: "browser (Chromium DOM after load → content.Extract)"}}
	tabCh := make(chan *rod.Page, tabs)
	for range max(tabs, 1) {
		p, err := openTab(ctx, rb)
		if err != nil {
			return nil, err
		}
		tabCh <- p
	}
	start := time.Now()
	err = forEachPage(ctx, pages, tabs, func(ctx context.Context, p contentPage) error {
		tab := <-tabCh
		html, err := renderedHTML(ctx, tab, p.URL)
		if err != nil && ctx.Err() == nil {
			// A tab stuck on a page is replaced, so one page cannot
			// slow the rest.
			_ = tab.Close()
			if nt, terr := openTab(ctx, rb); terr == nil {
				tab = nt
			} else {
				return terr
			}
		}
		tabCh <- tab
		var res content.Result
		if err == nil {
			res, err = content.Extract([]byte(html), content.Options{PageURL: p.URL})
		}
		sc.add(p, res, err)
		return ctx.Err()
	})
	sc.s.Elapsed = time.Since(start)
	sort.Float64s(sc.s.Ratios)
	return sc.s, err
}

// renderedHTML navigates tab to u, waits for load and returns the DOM
// serialized, within contentPageTimeout.
func renderedHTML(ctx context.Context, tab *rod.Page, u string) (string, error) {
	pctx, cancel := context.WithTimeout(ctx, contentPageTimeout)
	defer cancel()
	p := tab.Context(pctx)
	nav, err := proto.PageNavigate{URL: u}.Call(p)
	if err != nil {
		return "", err
	}
	if nav.ErrorText != "" {
		return "", fmt.Errorf("navigate %s: %s", u, nav.ErrorText)
	}
	if _, err := (proto.RuntimeEvaluate{Expression: waitLoadJS, AwaitPromise: true, ReturnByValue: true}).Call(p); err != nil {
		return "", err
	}
	r, err := proto.RuntimeEvaluate{Expression: serializeJS, ReturnByValue: true}.Call(p)
	if err != nil {
		return "", err
	}
	if r.ExceptionDetails != nil {
		return "", errors.New(r.ExceptionDetails.Text)
	}
	return r.Result.Value.Str(), nil
}
