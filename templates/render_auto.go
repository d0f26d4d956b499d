package templates

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"sync"

	"github.com/browsertask/browsertask/browser"
	"github.com/browsertask/browsertask/engine"
	"github.com/browsertask/browsertask/internal/extract/fetch"
	"github.com/browsertask/browsertask/internal/extract/page"
)

// render "auto": every page is first fetched over HTTP (httpExtractor),
// and the browser is used only where the HTML alone is not the page a
// browser shows. Decisions are made per group — a host's section, the
// first directory of the path (render_auto_group.go: "/library/", and
// "/" for the pages at the root) — on evidence, and kept for the rest of
// the run:
//
//   - The first autoFirstPages pages of a group that HTTP reads cleanly
//     (2xx HTML) are also rendered in the browser (one page when other
//     groups of its host already matched autoFirstPages samples), and
//     after that every autoSampleEvery-th one until autoEnoughSamples
//     matched. The two extractions are compared (render_auto_evidence.go):
//     a difference only JavaScript explains switches the group to the
//     browser, naming the page and what differs; a difference of our
//     text rules is counted on the sample and switches nothing. Pages of
//     a group whose first samples are still being rendered wait for them
//     (holding no tab), so no page of a group that needs JavaScript is
//     served from HTML nobody checked.
//   - HTML that is an application shell (page.AppShell: a <noscript>
//     asking for JavaScript, or a body with next to no text and a
//     script) is that page's property: the page goes to the browser
//     ("app shell: …") and is compared like a sample, so its group
//     switches only when the browser shows what the HTML lacks. HTML where
//     no requested field is found is rendered and compared too.
//   - Once a group is switched its pages go straight to the browser (no
//     HTTP fetch first). Pages already served over HTTP stay as they are.
//   - A page rendered both ways reports the browser's extraction; when
//     the browser failed on a page HTTP read, the HTTP page is kept and
//     the sample gives no verdict.
//   - Errors and non-HTML never vote: not HTML (a PDF, an image), a body
//     over the size limit, a URL that is not http(s) or a network failure
//     of the HTTP client (TLS, a refused connection) send that page to
//     the browser; a page answering HTTP >= 400 is served over HTTP (its
//     status is the error); policy refusals and timeouts are the page's
//     error, as with render "http". None of them moves its group.
//   - A field whose selector only a browser understands sends every page
//     to the browser.
//
// Each page says renderedBy ("http" or "browser") and, for the browser,
// renderReason: "sample", "sample: text differs by a text rule, not
// JavaScript (h1)", "group /library/ needs JavaScript: /library/json.html:
// fields differ (h2s)", "app shell: noscript asks for JavaScript", "not
// HTML (application/pdf)", ….
//
// Tabs are taken only when a page needs the browser, and the run's
// session is opened then (lazyTabs), so a run whose groups all serve
// their content in HTML starts a renderer only for the samples.
//
// Resume: the group decisions live in memory, but a resumed attempt
// rebuilds them from the checkpointed pages (restore): a group that had
// switched stays switched, a group's matched samples and HTTP pages
// count as before. Checkpointed pages are never fetched again.

const renderAuto = "auto"

// Sampling of render "auto" (TestRenderAutoSpeed: 400 static pages of one
// host and the mixed site, 4 hosts x 50 pages, half of them JavaScript; 4
// tabs, medians of 3 paired runs against render "browser"): one in 10
// renders 10.3% of a static host (89.7% over HTTP, under the 90% the
// issue asks for) at 10.9x browser-only, 1.9x on the mixed site; one in
// 20 renders 5.3% (94.8% over HTTP) at 15.8-17.2x and 2.1-2.6x, with the
// same fields on every page. Two first pages rather than one cost one
// render per group and keep a host from being judged on a single (index)
// page. On a real documentation site (python3-doc: 530 pages in 16
// groups) the renders, not the HTTP reads, are auto's cost: past
// autoEnoughSamples agreeing samples a group is not sampled any more,
// and a host's later groups need one first sample (bench "autocost").
const (
	// autoFirstPages is how many pages of a group are rendered both ways
	// (and must match) before its other pages are served over HTTP.
	autoFirstPages = 2
	// autoSampleEvery: after those, every autoSampleEvery-th page of a
	// group served over HTTP is rendered in the browser too…
	autoSampleEvery = 20
	// autoEnoughSamples: …until this many of the group's samples matched.
	autoEnoughSamples = 4
)

// autoRender decides, page by page, how render "auto" reads a URL.
type autoRender struct {
	http *httpExtractor
	// render reads a page in the browser in tab tb (the template's own
	// browser path); its error is fatal for the run.
	render func(ctx context.Context, tb *browser.Tab, url string) (*pageOut, error)
	tabs   *lazyTabs
	// links: compare the pages' links too (they are extracted).
	links bool
	// markdown: compare the pages' Markdown too (format markdown).
	markdown bool
	// everyPage, when set, is the reason every page goes to the browser.
	everyPage            string
	first, every, enough int

	mu     sync.Mutex
	groups map[string]*autoGroup
	// hostMatched counts the matched samples of every group of a host.
	hostMatched map[string]int
}

// newAutoBook is an autoRender with only its group bookkeeping (group,
// plan, resolve, switchedReason, restore), for templates that read and
// compare pages themselves (extract_structured).
func newAutoBook() *autoRender {
	return &autoRender{first: autoFirstPages, every: autoSampleEvery, enough: autoEnoughSamples,
		groups: map[string]*autoGroup{}, hostMatched: map[string]int{}}
}

// newAutoRender prepares render "auto" for a run: h reads pages over
// HTTP, render in the browser, tabs hands out the browser's tabs.
func newAutoRender(h *httpExtractor, render func(context.Context, *browser.Tab, string) (*pageOut, error), tabs *lazyTabs, links bool) *autoRender {
	a := newAutoBook()
	a.http, a.render, a.tabs, a.links = h, render, tabs, links
	if bad := h.ex.FieldErrors(); len(bad) > 0 {
		names := make([]string, 0, len(bad))
		for n := range bad {
			names = append(names, n)
		}
		sort.Strings(names)
		a.everyPage = fmt.Sprintf("field %s needs the browser (%s)", names[0], bad[names[0]])
	}
	return a
}

// shellReason is the renderReason of a page whose HTML is an
// application shell by its own markup, "" when it is not one.
func shellReason(doc *page.Document) string {
	switch doc.AppShell(nil) {
	case page.ShellNoscript:
		return reasonShell + "noscript asks for JavaScript"
	case page.ShellNoText:
		return reasonShell + "next to no text in the HTML"
	}
	return ""
}

// page reads one URL the way render "auto" decides. Page-level problems
// are in the page's Error; a non-nil error is fatal for the run.
func (a *autoRender) page(ctx context.Context, url string) (*pageOut, error) {
	if a.everyPage != "" {
		return a.viaBrowser(ctx, url, a.everyPage)
	}
	k := groupKey(url)
	if k == "" {
		return a.viaBrowser(ctx, url, "not an http(s) URL")
	}
	g := a.group(k)
	if r := a.switchedReason(g); r != "" {
		return a.viaBrowser(ctx, url, r)
	}
	out, pg, doc := a.http.read(ctx, url)
	if ctx.Err() != nil {
		return out, nil
	}
	if r, done := a.fetched(g, pg, out.Error); r != "" {
		return a.viaBrowser(ctx, url, r)
	} else if done {
		return out, nil
	} else if doc == nil {
		if tooDeep(out.Error) {
			// Only our parser has the limit (parse_failure.go).
			return a.viaBrowser(ctx, url, reasonTooDeep)
		}
		return out, nil
	}
	// The markup's own signs first (without the fields), then the fields.
	shell := shellReason(doc)
	check := shell == "" && doc.AppShell(&page.Result{Fields: out.Fields}) == page.ShellNoFields
	sample, r := a.plan(ctx, g, shell != "" || check)
	switch {
	case r != "":
		return a.viaBrowser(ctx, url, r)
	case !sample:
		return out, nil
	}
	b, err := a.viaBrowser(ctx, url, reasonSample)
	if err != nil || ctx.Err() != nil || b.Error != nil {
		// Fatal, cut off, or the browser failed where HTTP did not: no
		// verdict; the HTTP page stands.
		a.resolve(g, false, "")
		if err != nil || ctx.Err() != nil {
			return b, err
		}
		return out, nil
	}
	ev := a.evidence(out, b)
	switch {
	case len(ev.js) > 0:
		b.RenderReason = a.resolve(g, false, groupReason(g, url, strings.Join(ev.js, "; ")))
	case shell != "":
		a.resolve(g, true, "")
		b.RenderReason = shell
	case check:
		a.resolve(g, true, "")
		b.RenderReason = reasonChecked
	default:
		a.resolve(g, true, "")
		b.RenderReason = ev.textRuleReason()
	}
	return b, nil
}

// fetched decides what becomes of a page of group g fetched over HTTP
// (pg; nil when the fetch failed with pageErr) before its content is
// looked at: the browser reads it, for the reason returned (the HTTP
// client's network failure, a response that is not HTML, HTML over the
// size limit, a group switched meanwhile while the page answered an error
// status); or the HTTP page stands as it is (done: a failed fetch, an
// error status); or its content decides ("", false). None of these is a
// vote on the group.
func (a *autoRender) fetched(g *autoGroup, pg *fetch.Page, pageErr *engine.Error) (reason string, done bool) {
	switch {
	case pg == nil:
		if pageErr != nil && pageErr.Code == engine.StepExecutionFailed {
			if ne, ok := pageErr.Details["netError"].(string); ok {
				return "HTTP fetch failed (" + ne + ")", true
			}
		}
		return "", true
	case pg.Status < 200 || pg.Status > 299:
		// An error status is the page's answer whatever its type (a
		// text/plain 404 too): served over HTTP, no vote.
		return a.switchedReason(g), true
	case !pg.IsHTML():
		return "not HTML (" + pg.ContentType + ")", true
	case pg.Truncated:
		return fmt.Sprintf("HTML over %d bytes", pg.Bytes), true
	}
	return "", false
}

// sameLinkTargets reports whether two pages link to the same set of URLs
// (order, repeats and link texts aside).
func sameLinkTargets(a, b []page.Link) bool {
	set := func(ls []page.Link) map[string]bool {
		m := make(map[string]bool, len(ls))
		for _, l := range ls {
			m[l.Href] = true
		}
		return m
	}
	sa, sb := set(a), set(b)
	if len(sa) != len(sb) {
		return false
	}
	for h := range sa {
		if !sb[h] {
			return false
		}
	}
	return true
}

// viaBrowser reads url in the browser with one of the run's tabs and
// marks the page with reason.
func (a *autoRender) viaBrowser(ctx context.Context, url, reason string) (*pageOut, error) {
	tb, err := a.tabs.take(ctx)
	if err != nil {
		if ctx.Err() != nil {
			return &pageOut{URL: url, Fields: map[string]any{}}, nil
		}
		return nil, err
	}
	out, err := a.render(ctx, tb, url)
	if (err != nil || out == nil || out.Error != nil) && ctx.Err() == nil && a.tabs.failOver(tb) {
		return a.viaBrowser(ctx, url, reason) // its browser was lost: again in another one of the pool
	}
	a.tabs.put(tb, err != nil || out == nil || out.Error != nil)
	if err != nil {
		return nil, err
	}
	out.RenderedBy, out.RenderReason = renderBrowser, reason
	return out, nil
}

// useAuto makes pool read batch_extract_pages' pages with render "auto";
// in a named session (named) the browser reads them as with render
// "browser", each page saying so. The returned function releases the
// HTTP client and the idle tabs (Run defers it). Errors: EXECUTION_ERROR
// (the HTTP client cannot be made).
func (r *batchRun) useAuto(ctx context.Context, pool *urlPool, named bool) (func(), error) {
	if named {
		pool.work = withRenderReason(pool.work, "named session")
		return func() {}, nil
	}
	h, err := newHTTPExtractor(r.pol, r.opts, timeoutDur(r.in.PerPageTimeoutMs), r.wire)
	if err != nil {
		return nil, err
	}
	h.formats = &r.in.pageFormats
	tabs := pool.lazyTabs(ctx)
	a := newAutoRender(h, r.fetch, tabs, r.opts.Links)
	a.markdown = r.in.has(formatMarkdown)
	a.restore(r.env.FinishedItems())
	pool.noTab = true
	pool.work = func(ctx context.Context, _ *browser.Tab, _ int, url string) (pageDone, error) {
		out, err := a.page(ctx, url)
		if err != nil {
			return pageDone{}, err
		}
		return pageDone{out: out, failure: out.Error}, nil
	}
	return func() { tabs.close(); h.close() }, nil
}

// lazyTabs returns the tab source of render "auto" for the pool's run:
// the pool's session (opened on the first tab) and its per-tab setup.
func (u *urlPool) lazyTabs(ctx context.Context) *lazyTabs {
	return &lazyTabs{ctx: ctx, open: u.open, setup: func(ctx context.Context, tb *browser.Tab) error {
		if u.setup == nil {
			return nil
		}
		return u.setup(ctx, tb)
	}}
}

// withRenderReason marks the pages work reads with a renderReason.
func withRenderReason(work urlWork, reason string) urlWork {
	return func(ctx context.Context, tb *browser.Tab, i int, url string) (pageDone, error) {
		done, err := work(ctx, tb, i, url)
		switch p := done.out.(type) {
		case *pageOut:
			p.RenderReason = reason
		case *crawlPageOut:
			p.RenderReason = reason
		}
		return done, err
	}
}
