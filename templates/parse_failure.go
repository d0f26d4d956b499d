package templates

import (
	"errors"

	"github.com/browsertask/browsertask/engine"
	"github.com/browsertask/browsertask/internal/extract/page"
)

// Pages whose HTML our parser (golang.org/x/net/html, through package page
// and structured) refuses: markup nested deeper than page.MaxDepth.
// Chromium has no such limit, so what happens to such a page depends on
// who reads it (issue 26 item 1; the README's "Pages our HTML parser
// refuses"):
//
//   - batch_extract_pages and crawl_site with render "browser": the
//     extraction runs in the page (Chromium's DOM), the page is read as
//     any other.
//   - render "auto": the page goes to the browser ("HTML nested deeper
//     than 512 levels"); its host is not switched.
//   - render "http": the page fails with STEP_EXECUTION_FAILED saying so,
//     and advising render "browser" or "auto".
//   - extract_structured reads every page's data with our parser, the
//     browser's HTML too: with render "browser" that HTML comes flattened
//     below outerHTMLExpr's depth (outer_html.go), so the page is read
//     (text, links, JSON-LD; not microdata nested that deep); "auto" sends
//     it to the browser; "http" fails it as above.
//
// In every case the run goes on with its other pages.

// reasonTooDeep is the details reason of a page our parser refused, and
// render "auto"'s renderReason when it sends that page to the browser.
const reasonTooDeep = "HTML nested deeper than 512 levels"

// adviceBrowser ends the page error of parseFailure over HTTP: the
// renders that read the page.
const adviceBrowser = `; read it with render "browser" (or "auto"), which reads the browser's own DOM`

// parseFailure is the page's error for HTML our parser refused (err from
// page.ParseString or structured.ParsePage): STEP_EXECUTION_FAILED
// naming the page and the cause, then advice.
func parseFailure(url string, err error, advice string) *engine.Error {
	reason := "HTML parse failed"
	var de *page.DepthError
	if errors.As(err, &de) {
		reason = reasonTooDeep
	}
	return engine.Errorf(engine.StepExecutionFailed, "%s: %v%s", url, err, advice).
		WithDetails(map[string]any{"url": url, "stage": "parse", "reason": reason, "maxDepth": page.MaxDepth})
}

// tooDeep reports whether a page's error is parseFailure's for markup
// nested too deep.
func tooDeep(e *engine.Error) bool {
	return e != nil && e.Details["reason"] == reasonTooDeep
}
