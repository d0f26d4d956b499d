package templates

import (
	"context"
	"sort"
	"time"

	"github.com/browsertask/browsertask/engine"
	"github.com/browsertask/browsertask/internal/extract/fetch"
	"github.com/browsertask/browsertask/internal/extract/page"
)

// render "http": batch_extract_pages without a browser. Each URL is
// fetched with Go's HTTP client under the URL policy (package fetch: the
// dialer checks every address it connects to, redirects included; the
// daemon's own address is never reached; the body is bounded and decoded
// by Chromium's charset rules) and extracted by package page with the same
// selector, attr and all semantics and the same text, links and meta as
// the browser script. Nothing the page's scripts would add is seen: for
// pages built by JavaScript use render "browser" (the default). A run in
// a named browser session (sessionId) always uses the browser, whose
// cookies are the session's. A response that is not HTML fails its page.

// Render modes.
const (
	renderBrowser = "browser"
	renderHTTP    = "http"
)

// checkHTTPFields refuses the selectors package page cannot use (browser
// extensions a parser does not have). Errors: INVALID_PARAMETER naming
// the field.
func checkHTTPFields(fields map[string]fieldSpec) error {
	bad := page.NewExtractor(page.Options{Fields: pageFields(fields)}).FieldErrors()
	if len(bad) == 0 {
		return nil
	}
	names := make([]string, 0, len(bad))
	for n := range bad {
		names = append(names, n)
	}
	sort.Strings(names)
	return engine.Errorf(engine.InvalidParameter, "inputs.fields.%s: %s cannot be used with render \"http\" (%s); use render \"browser\" or a CSS selector without it",
		names[0], fields[names[0]].Selector, bad[names[0]]).WithDetails(map[string]any{"field": "inputs.fields." + names[0]})
}

// httpExtractor fetches and extracts pages for one run.
type httpExtractor struct {
	f  *fetch.Fetcher
	ex *page.Extractor
	// formats, when set, adds the content formats to each HTML page
	// from its fetched body (formats_content.go).
	formats *pageFormats
}

// newHTTPExtractor prepares the fetcher and the extractor. Errors:
// EXECUTION_ERROR.
// id is the run's identity on the wire (polite_browser.go: wire).
func newHTTPExtractor(pol engine.URLPolicy, opts page.Options, perPage time.Duration, id wire) (*httpExtractor, error) {
	f, err := fetch.New(fetch.Options{Policy: pol, Timeout: perPage, UserAgent: id.userAgent, Header: id.header, Proxy: id.proxy})
	if err != nil {
		return nil, engine.Wrap(engine.ExecutionError, err, "HTTP client: %v", err)
	}
	return &httpExtractor{f: f, ex: page.NewExtractor(opts)}, nil
}

// close releases the fetcher's connections.
func (h *httpExtractor) close() { h.f.Close() }

// page fetches and extracts one URL. Page-level problems are in the
// page's Error, as in the browser path.
func (h *httpExtractor) page(ctx context.Context, url string) *pageOut {
	out, _, _ := h.read(ctx, url)
	return out
}

// read is page, also returning what render "auto" looks at: the fetched
// page (nil when the fetch failed) and its parsed document (nil unless
// the page is HTML and was extracted).
func (h *httpExtractor) read(ctx context.Context, url string) (*pageOut, *fetch.Page, *page.Document) {
	out := &pageOut{URL: url, Fields: map[string]any{}, RenderedBy: renderHTTP}
	pg, err := h.f.Fetch(ctx, url)
	if err != nil {
		if ctx.Err() == nil {
			out.Error = engine.AsError(err)
		}
		return out, nil, nil
	}
	out.HTTPStatus, out.FinalURL = pg.Status, pg.URL
	if engine.TransientStatus(pg.Status) {
		out.retryAfter, out.retryAfterSet = engine.RetryAfter(pg.Header.Get("Retry-After"), time.Now())
	}
	if !pg.IsHTML() && pg.Status >= 400 {
		// The status is the page's failure, whatever the body's type.
		out.Error = httpStatusError(url, pg.Status, pg.StatusText)
		return out, pg, nil
	}
	if !pg.IsHTML() {
		out.Error = engine.Errorf(engine.StepExecutionFailed, "%s answered %s, not an HTML page; read it with render \"browser\"", url, pg.ContentType).
			WithDetails(map[string]any{"url": url, "contentType": pg.ContentType})
		return out, pg, nil
	}
	doc, err := h.f.Document(ctx, pg) // with its same-origin style sheets
	if err != nil {
		out.Error = parseFailure(url, err, adviceBrowser)
		return out, pg, nil
	}
	if err := mergeResult(h.ex.Extract(doc), out); err != nil {
		out.Error = engine.AsError(err)
		return out, pg, nil
	}
	if h.formats != nil {
		addContent(&out.pageContent, h.formats, []byte(pg.Body), pg.URL)
	}
	if pg.Status >= 400 {
		out.Error = httpStatusError(url, pg.Status, pg.StatusText)
	}
	if pg.Truncated {
		out.Error = tooLargeError(url, pg.Bytes)
	}
	return out, pg, doc
}
