package templates

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/browsertask/browsertask/browser"
	"github.com/browsertask/browsertask/engine"
	"github.com/browsertask/browsertask/internal/extract/page"
)

// batchRun is one execution of batch_extract_pages: its inputs, the URL
// policy redirects are held to and the configured extraction script.
type batchRun struct {
	env  engine.Env
	in   *batchInputs
	pol  engine.URLPolicy
	urls []string
	opts page.Options
	expr string
	// wire is the run's User-Agent, headers and proxy (polite.go).
	wire wire
}

// Run extracts every URL not checkpointed by an earlier attempt with
// `concurrency` reused tabs (urlPool: one checkpoint per URL), then writes
// pages.json. Errors: STEP_EXECUTION_FAILED when every page failed
// (pages.json is still written), EXECUTION_ERROR when the browser is lost,
// ctx's cause once ctx ends (returned promptly; the engine maps it).
func (t *BatchExtractPages) Run(ctx context.Context, env engine.Env) (*engine.Outcome, error) {
	in, err := parseBatchInputs(env.Inputs())
	if err != nil {
		return nil, err
	}
	r := &batchRun{env: env, in: in, pol: t.policy(env.Profile()), urls: dedupe(in.URLs),
		opts: withCaps(page.Options{Fields: pageFields(in.Fields), Text: *in.IncludeText, Links: in.IncludeLinks,
			Meta: in.IncludeMeta})}
	if r.expr, err = extractExpr(r.opts); err != nil {
		return nil, err
	}
	if r.wire, err = in.politeness.wire(env.Profile().UserAgent); err != nil {
		return nil, err
	}
	pool := &urlPool{env: env, slim: true, setup: r.wire.tabSetup(in.resourceBlocking.setup()), cutChars: in.resultCut(),
		open: func() (*browser.Session, error) { return openRunSession(ctx, t.b, env, "batch_extract_pages", r.wire) },
		work: func(ctx context.Context, tb *browser.Tab, _ int, url string) (pageDone, error) {
			out, err := r.fetch(ctx, tb, url)
			if err != nil {
				return pageDone{}, err
			}
			return pageDone{out: out, failure: out.Error}, nil
		}}
	if in.Render == renderHTTP && !inBrowserState(t.b, env) {
		h, err := newHTTPExtractor(r.pol, r.opts, time.Duration(in.PerPageTimeoutMs)*time.Millisecond, r.wire)
		if err != nil {
			return nil, err
		}
		h.formats = &in.pageFormats
		defer h.close()
		pool.noTab = true
		pool.work = func(ctx context.Context, _ *browser.Tab, _ int, url string) (pageDone, error) {
			out := h.page(ctx, url)
			return pageDone{out: out, failure: out.Error}, nil
		}
	}
	if in.Render == renderAuto {
		release, err := r.useAuto(ctx, pool, inBrowserState(t.b, env))
		if err != nil {
			return nil, err
		}
		defer release()
	}
	pool.work = politeWork(&in.politeness, in.politeness.gate(), pool.work)
	if err := pool.runList(ctx, r.urls, in.Concurrency); err != nil {
		return nil, err
	}
	pages := make([]*pageOut, len(r.urls))
	for i, u := range r.urls {
		pages[i] = restorePage(u, pool.outputs[i], pool.errs[i])
	}
	return r.finish(ctx, pages, pool.itemIdx)
}

// restorePage decodes a page's checkpointed output (this attempt's or an
// earlier one's); pageErr is the item's error, kept when the output has none.
func restorePage(url string, raw json.RawMessage, pageErr *engine.Error) *pageOut {
	p := &pageOut{}
	if len(raw) == 0 || json.Unmarshal(raw, p) != nil || p.URL == "" {
		p = &pageOut{URL: url, Fields: map[string]any{}}
	}
	if p.Error == nil {
		p.Error = pageErr
	}
	return p
}

// fetch loads and extracts one URL. Page-level problems are recorded in the
// returned page's Error; a non-nil error is fatal for the run (browser lost).
func (r *batchRun) fetch(ctx context.Context, tb *browser.Tab, url string) (*pageOut, error) {
	out := &pageOut{URL: url, Fields: map[string]any{}, RenderedBy: renderBrowser}
	opts := r.opts
	timeout := time.Duration(r.in.PerPageTimeoutMs) * time.Millisecond
	navCtx, cancel := context.WithTimeout(ctx, timeout)
	// The extraction runs in the load wait's own evaluation: one CDP round
	// trip per page for both.
	nav, extracted, err := tb.NavigateThen(navCtx, url, r.in.WaitFor, r.expr)
	cancel()
	out.HTTPStatus, out.FinalURL = nav.Status, nav.FinalURL
	if ctx.Err() != nil {
		return out, nil
	}
	if err != nil {
		e := engine.AsError(err)
		if e.Code == engine.ExecutionError && !engine.IsInternal(e) {
			return nil, e
		}
		out.Error = e
		if nav.Status > 0 && (e.Code == engine.NavigationTimeout || e.Code == engine.ElementNotFound) {
			// The document arrived: record what is there.
			xctx, cancel := context.WithTimeout(ctx, 3*time.Second)
			_ = extract(xctx, tb, opts, out)
			cancel()
		}
		return out, nil
	}
	if nav.FinalURL != "" && nav.FinalURL != url {
		if e := engine.AsError(engine.CheckURL(nav.FinalURL, r.pol)); e != nil {
			e.Message = fmt.Sprintf("%s redirected to a URL that is not allowed: %s", url, e.Message)
			out.Error = e
			return out, nil
		}
	}
	if extracted != nil {
		err = mergeExtracted(extracted, out)
	} else {
		// The script threw in the combined evaluation: run it on its own
		// for its error.
		xctx, cancel := context.WithTimeout(ctx, max(timeout, 5*time.Second))
		err = extractFailure(ctx, xctx, extract(xctx, tb, opts, out), url, r.in.PerPageTimeoutMs)
		cancel()
	}
	if err != nil {
		if ctx.Err() != nil {
			return out, nil
		}
		e := engine.AsError(err)
		if e.Code == engine.ExecutionError && !engine.IsInternal(e) {
			return nil, e
		}
		out.Error = e
		return out, nil
	}
	addBrowserContent(ctx, r.env, tb, &r.in.pageFormats, out, r.in.PerPageTimeoutMs)
	if nav.Status >= 400 {
		out.Error = httpStatusError(url, nav.Status, nav.StatusText)
	}
	return out, nil
}

// dedupe removes repeated URLs, keeping the first occurrence's position.
func dedupe(urls []string) []string {
	seen := make(map[string]bool, len(urls))
	out := make([]string, 0, len(urls))
	for _, u := range urls {
		if !seen[u] {
			seen[u] = true
			out = append(out, u)
		}
	}
	return out
}
