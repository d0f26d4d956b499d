package main

import (
	"context"
	"fmt"
	"log/slog"
	"sort"
	"strings"
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
// DOM as HTML, the doctype in front so the parser keeps standards mode;
// null while the document has no root element yet (a navigation the page
// started after its load, caught before the new document parsed).
const serializeJS = `(() => { const e = document.documentElement; if (!e) return null; const d = document.doctype; return (d ? '<!DOCTYPE ' + d.name + '>' : '') + e.outerHTML })()`

// serializeTries is how often renderedHTML waits for a load again when
// the document had no root element.
const serializeTries = 5

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
		loaded := err == nil
		if loaded {
			res, err = content.Extract([]byte(html), content.Options{PageURL: p.URL})
		}
		sc.add(p, res, err, loaded)
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
	for range serializeTries {
		if _, err := evalRetry(p, proto.RuntimeEvaluate{Expression: waitLoadJS, AwaitPromise: true, ReturnByValue: true}); err != nil {
			return "", err
		}
		r, err := evalRetry(p, proto.RuntimeEvaluate{Expression: serializeJS, ReturnByValue: true})
		if err != nil {
			return "", err
		}
		if r.ExceptionDetails != nil {
			msg := r.ExceptionDetails.Text
			if r.ExceptionDetails.Exception != nil {
				msg += ": " + r.ExceptionDetails.Exception.Description
			}
			return "", fmt.Errorf("serialize: %s", msg)
		}
		if !r.Result.Value.Nil() {
			return r.Result.Value.Str(), nil
		}
	}
	return "", fmt.Errorf("serialize %s: the document had no root element after %d loads", u, serializeTries)
}

// evalRetry evaluates e, again when the page replaced its document in
// the meantime (a script's or meta refresh's navigation destroys the
// context the evaluation ran in), as the product's navigation does
// (browser/navigate.go): the wait then applies to the new document.
func evalRetry(p *rod.Page, e proto.RuntimeEvaluate) (*proto.RuntimeEvaluateResult, error) {
	for i := 0; ; i++ {
		r, err := e.Call(p)
		if err == nil || i == 4 || !contextDestroyed(err) {
			return r, err
		}
		select {
		case <-p.GetContext().Done():
			return nil, p.GetContext().Err()
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// contextDestroyed reports whether err says the evaluation's document
// went away (Chromium's wordings).
func contextDestroyed(err error) bool {
	m := err.Error()
	return strings.Contains(m, "context was destroyed") || strings.Contains(m, "Cannot find context") ||
		strings.Contains(m, "Inspected target navigated or closed")
}
