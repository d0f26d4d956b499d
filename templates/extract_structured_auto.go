package templates

import (
	"context"
	"sort"
	"strings"

	"github.com/browsertask/browsertask/internal/extract/fetch"
	"github.com/browsertask/browsertask/internal/extract/page"
)

// render "auto" for extract_structured: the rules of render_auto.go, with
// the schema's properties where batch_extract_pages has its fields. Every
// page is fetched over HTTP and filled from that HTML; the browser is used
// per group (a host's first path directory, render_auto_group.go) only
// where the HTML is not the page a browser shows:
//
//   - A group's first pages that HTTP reads cleanly (2xx HTML), and
//     every autoSampleEvery-th later one until autoEnoughSamples matched,
//     are also rendered in the browser and what the two documents give is
//     compared (before any model is asked): the properties filled and
//     their values, the final URL and, in a crawl, the links. A difference
//     (the browser's HTML fills a property the HTTP HTML did not, or gives
//     another value) sends the group to the browser for the rest of the
//     run, naming the page. Pages of a group whose first samples are
//     still being rendered wait for them.
//   - HTML that is an application shell (a <noscript> asking for
//     JavaScript, or a body with next to no text and a script) is that
//     page's property: it is rendered and compared like a sample; HTML
//     from which no property is filled is rendered too. Either moves the
//     group only when the browser's document differs.
//   - Not HTML, a body over the size limit or a network failure of the
//     HTTP client: that page is read in the browser, the group is not
//     switched. A page answering HTTP >= 400 fails as with render "http".
//   - A page read both ways is filled from the browser's document; when
//     the browser failed on it, from the HTTP one.
//
// The model, when one is configured, is asked once per page, for what the
// chosen document left missing. items.json says renderedBy and, for the
// browser, renderReason ("sample", "group /shop/ needs JavaScript:
// /shop/1: properties only the browser filled (price)", "app shell: …").
// A resumed attempt rebuilds the group decisions from the checkpoints
// (autoRender.restore).

// structuredAuto reads extract_structured's pages with render "auto".
type structuredAuto struct {
	r    *structuredRun
	f    *fetch.Fetcher
	tabs *lazyTabs
	// hosts keeps the per-group decisions; only its group bookkeeping
	// (group, plan, resolve, switchedReason, restore) is used.
	hosts *autoRender
}

// newStructuredAuto prepares render "auto" for run r: f fetches over
// HTTP, tabs hands out the browser's tabs.
func newStructuredAuto(r *structuredRun, f *fetch.Fetcher, tabs *lazyTabs) *structuredAuto {
	return &structuredAuto{r: r, f: f, tabs: tabs, hosts: newAutoBook()}
}

// page reads and fills one URL the way render "auto" decides. The page's
// problems are in its Error; a non-nil error is fatal for the run.
func (a *structuredAuto) page(ctx context.Context, url string) (*structuredItem, error) {
	k := groupKey(url)
	if k == "" {
		return a.viaBrowser(ctx, url, "not an http(s) URL")
	}
	h := a.hosts.group(k)
	if reason := a.hosts.switchedReason(h); reason != "" {
		return a.viaBrowser(ctx, url, reason)
	}
	out, pg := a.r.fetch(ctx, a.f, url)
	if ctx.Err() != nil {
		return out, nil
	}
	if reason, done := a.hosts.fetched(h, pg, out.Error); reason != "" {
		return a.viaBrowser(ctx, url, reason)
	} else if done {
		return out, nil
	}
	doc, err := a.f.Document(ctx, pg)
	if err != nil {
		// Only our parser has the limit; the browser's HTML comes
		// flattened (parse_failure.go, outer_html.go).
		return a.viaBrowser(ctx, url, reasonTooDeep)
	}
	// An app shell is the page's own property: it is rendered and
	// compared like a sample (render_auto.go).
	shell := shellReason(doc)
	pp := a.r.parseDoc(out, doc)
	if pp == nil {
		return out, nil
	}
	check := shell == "" && len(pp.found.Sources) == 0
	sample, reason := a.hosts.plan(ctx, h, shell != "" || check)
	switch {
	case ctx.Err() != nil:
		return out, nil
	case reason != "":
		return a.viaBrowser(ctx, url, reason)
	case !sample:
		return a.r.complete(ctx, out, pp), nil
	}
	bout, bpp, err := a.browse(ctx, url, reasonSample)
	if err != nil || ctx.Err() != nil || bpp == nil {
		// Fatal, cut off, or the browser failed where HTTP did not: no
		// verdict; the HTTP page stands.
		a.hosts.resolve(h, false, "")
		if err != nil || ctx.Err() != nil {
			return bout, err
		}
		return a.r.complete(ctx, out, pp), nil
	}
	diff := a.differences(out, pp, bout, bpp)
	switch {
	case diff != "":
		bout.RenderReason = a.hosts.resolve(h, false, groupReason(h, url, diff))
	case shell != "":
		a.hosts.resolve(h, true, "")
		bout.RenderReason = shell
	case check:
		a.hosts.resolve(h, true, "")
		bout.RenderReason = reasonChecked
	default:
		a.hosts.resolve(h, true, "")
	}
	return a.r.complete(ctx, bout, bpp), nil
}

// differences tells how what the HTTP HTML gave (h, hp) differs from what
// the browser's document gave (b, bp): properties only one of them
// filled, values that differ, the final URL and, in a crawl, the links;
// "" when they agree.
func (a *structuredAuto) differences(h *structuredItem, hp *parsedPage, b *structuredItem, bp *parsedPage) string {
	var onlyBrowser, onlyHTTP []string
	for p := range bp.found.Sources {
		if _, ok := hp.found.Sources[p]; !ok {
			onlyBrowser = append(onlyBrowser, p)
		}
	}
	for p := range hp.found.Sources {
		if _, ok := bp.found.Sources[p]; !ok {
			onlyHTTP = append(onlyHTTP, p)
		}
	}
	var parts []string
	list := func(what string, names []string) {
		if len(names) == 0 {
			return
		}
		sort.Strings(names)
		if len(names) > 5 {
			names = append(names[:5], "…")
		}
		parts = append(parts, what+" ("+strings.Join(names, ", ")+")")
	}
	list("properties only the browser filled", onlyBrowser)
	list("properties only the HTML filled", onlyHTTP)
	if len(onlyBrowser) == 0 && len(onlyHTTP) == 0 {
		list("values differ", page.DifferentFields(hp.found.Object, bp.found.Object))
	}
	if h.FinalURL != b.FinalURL {
		parts = append(parts, "final URL differs")
	}
	if a.r.links && !sameLinkTargets(hp.links, bp.links) {
		parts = append(parts, "links differ")
	}
	if a.r.in.has(formatMarkdown) && !hiddenOnly(h.Markdown, b.Markdown) {
		// render_auto_evidence.go's rule: all the browser's Markdown in
		// the HTML's, in order, whitespace and case aside, agrees.
		parts = append(parts, "markdown differs")
	}
	return strings.Join(parts, "; ")
}

// browse reads url in the browser with one of the run's tabs (no model
// yet) and marks the item with reason; pp is nil when the page failed.
func (a *structuredAuto) browse(ctx context.Context, url, reason string) (*structuredItem, *parsedPage, error) {
	tb, err := a.tabs.take(ctx)
	if err != nil {
		if ctx.Err() != nil {
			return a.r.newItem(url, renderBrowser), nil, nil
		}
		return nil, nil, err
	}
	out, pp, err := a.r.browse(ctx, tb, url)
	a.tabs.put(tb, err != nil || out.Error != nil)
	if err != nil {
		return nil, nil, err
	}
	out.RenderReason = reason
	return out, pp, nil
}

// viaBrowser reads and fills url in the browser, marked with reason.
func (a *structuredAuto) viaBrowser(ctx context.Context, url, reason string) (*structuredItem, error) {
	out, pp, err := a.browse(ctx, url, reason)
	if err != nil || pp == nil {
		return out, err
	}
	return a.r.complete(ctx, out, pp), nil
}
