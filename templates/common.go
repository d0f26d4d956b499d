package templates

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/browsertask/browsertask/browser"
	"github.com/browsertask/browsertask/engine"
)

// Inputs shared by the page templates: the schema text of the page-loading
// inputs each page-visiting template's input schema includes.
const (
	waitForSchema = `{"type": "string", "minLength": 1, "maxLength": 1000, "default": "` + browser.WaitLoad + `", "description": "When a page is ready: \"load\" (the load event), \"networkidle\" (load plus 500 ms without requests) or a CSS selector that must match."}`
	urlListSchema = `{"type": "array", "minItems": 1, "maxItems": 100, "description": "Absolute http(s) URLs; duplicates are removed, order is kept.", "items": {"type": "string", "minLength": 1, "maxLength": 8192}}`
	// errorObjectSchema is a page's error: the error object, or null when
	// the page succeeded. Nullability is an anyOf of single-type branches,
	// not a type array, which single-type schema dialects reject.
	errorObjectSchema = `{"anyOf": [{"type": "object", "properties": {"errorCode": {"type": "string"}, "message": {"type": "string"}, "recovery": {"type": "string"}, "details": {"type": "object"}}}, {"type": "null"}]}`
)

// viewport is the common viewport input.
type viewport struct {
	Width  int `json:"width"`
	Height int `json:"height"`
}

// The viewport of screenshots and scripted flows when the inputs give none.
const (
	defaultViewportWidth  = 1280
	defaultViewportHeight = 800
)

// Page-load defaults and bounds of every page-visiting template. These
// constants are their only home: pageLoad.applyDefaults (and run_steps,
// login) apply them, and the input schemas state them through
// concurrencySchema(), perPageTimeoutSchema(), pageTimeoutSchema and
// viewportSchema(), which write the numbers from here, so what a client
// reads in list_task_templates is what a run does.
const (
	defaultConcurrency      = 4
	maxConcurrency          = 20
	defaultPerPageTimeoutMs = 30000
	minPerPageTimeoutMs     = 1000
	maxPerPageTimeoutMs     = 120000
)

// concurrencySchema() is the schema of the common input concurrency.
func concurrencySchema() string {
	return `{"type": "integer", "minimum": 1, "maximum": ` + strconv.Itoa(maxConcurrency) + `, "default": ` + strconv.Itoa(defaultConcurrency) +
		`, "description": "Tabs working in parallel (at most the server's maxTabsPerSession)."}`
}

// perPageTimeoutSchema() is the schema of the common input perPageTimeoutMs.
func perPageTimeoutSchema() string {
	return pageTimeoutSchema("Deadline for loading one page; past it the page fails with NAVIGATION_TIMEOUT.")
}

// pageTimeoutSchema is the schema of a page-load deadline in ms (bounds
// and default of perPageTimeoutMs) with its own description.
func pageTimeoutSchema(description string) string {
	return `{"type": "integer", "minimum": ` + strconv.Itoa(minPerPageTimeoutMs) + `, "maximum": ` + strconv.Itoa(maxPerPageTimeoutMs) +
		`, "default": ` + strconv.Itoa(defaultPerPageTimeoutMs) + `, "description": ` + strconv.Quote(description) + `}`
}

// viewportSchema() is the schema of the common input viewport.
func viewportSchema() string {
	return `{"type": "object", "additionalProperties": false, "required": ["width", "height"],
      "description": "Viewport size in CSS pixels (default ` + strconv.Itoa(defaultViewportWidth) + "x" + strconv.Itoa(defaultViewportHeight) + `).",
      "properties": {"width": {"type": "integer", "minimum": 200, "maximum": 4000},
                     "height": {"type": "integer", "minimum": 200, "maximum": 4000}}}`
}

// urlPolicy is the URL policy for a profile: its trust level and file:
// setting plus the browser manager's deny list (the daemon's listener).
func urlPolicy(b *browser.Manager, p engine.Profile) engine.URLPolicy {
	pol := engine.URLPolicy{AllowFileURLs: p.AllowFileURLs, TrustLevel: p.TrustLevel}
	if b != nil {
		bp := b.Policy()
		pol.DenyHosts, pol.Resolve, pol.LocalAddrs = bp.DenyHosts, bp.Resolve, bp.LocalAddrs
	}
	return pol
}

// checkURL applies the URL policy to one input URL. Errors:
// INVALID_PARAMETER or TRUST_LEVEL_NOT_ALLOWED naming field.
func checkURL(u, field string, pol engine.URLPolicy) error {
	if e := engine.AsError(engine.CheckURL(u, pol)); e != nil {
		e.Message = field + ": " + e.Message
		return e.WithDetails(map[string]any{"field": field})
	}
	return nil
}

// checkURLs applies the URL policy to the inputs.urls list. Errors:
// INVALID_PARAMETER or TRUST_LEVEL_NOT_ALLOWED naming the entry.
func checkURLs(urls []string, pol engine.URLPolicy) error {
	for i, u := range urls {
		if err := checkURL(u, fmt.Sprintf("inputs.urls[%d]", i), pol); err != nil {
			return err
		}
	}
	return nil
}

// checkConcurrency refuses more tabs than a session may open. Errors:
// INVALID_PARAMETER.
func checkConcurrency(n int, p engine.Profile) error {
	if p.MaxTabsPerSession > 0 && n > p.MaxTabsPerSession {
		return engine.Errorf(engine.InvalidParameter, "inputs.concurrency: %d exceeds this server's maxTabsPerSession %d", n, p.MaxTabsPerSession).
			WithDetails(map[string]any{"field": "inputs.concurrency", "maxTabsPerSession": p.MaxTabsPerSession})
	}
	return nil
}

// decodeInputs unmarshals validated inputs into v. Errors: INVALID_PARAMETER.
func decodeInputs(raw json.RawMessage, v any) error {
	if len(bytes.TrimSpace(raw)) == 0 {
		raw = json.RawMessage("{}")
	}
	if err := json.Unmarshal(raw, v); err != nil {
		return engine.Errorf(engine.InvalidParameter, "inputs: %v", err)
	}
	return nil
}

// openSession returns the run's browser session. Errors: SESSION_NOT_FOUND,
// EXECUTION_ERROR, or ctx's cause.
func openSession(ctx context.Context, b *browser.Manager, env engine.Env, template string) (*browser.Session, error) {
	if b == nil {
		return nil, engine.Errorf(engine.ExecutionError, "%s has no browser", template)
	}
	var (
		s   *browser.Session
		err error
	)
	if name := env.BrowserProfile(); name != "" {
		s, err = b.ProfileSession(ctx, env.SessionID(), name)
	} else {
		s, err = b.Session(ctx, env.SessionID())
	}
	if err != nil {
		if ctx.Err() != nil {
			return nil, context.Cause(ctx)
		}
		return nil, err
	}
	return s, nil
}

// openTab opens the run's session and takes one of its tabs, for the
// templates that work in a single tab. Errors: as openSession.
func openTab(ctx context.Context, b *browser.Manager, env engine.Env, template string) (*browser.Tab, error) {
	s, err := openSession(ctx, b, env, template)
	if err != nil {
		return nil, err
	}
	tb, err := s.AcquireTab(ctx)
	if err != nil {
		return nil, stopErr(ctx, err)
	}
	return tb, nil
}

// timeoutDur converts a millisecond input to a duration.
func timeoutDur(ms int) time.Duration { return time.Duration(ms) * time.Millisecond }

// maxArtifactBase bounds an artifact's name before its extension.
const maxArtifactBase = 80

// artifactNames names the artifacts of a list of pages after what they
// show: the page's host and path as a slug, then ext
// ("example.com-index.png", "shop.example-products-blue-mug.png"; a query
// is part of the slug, a fragment is not). Names hold only A–Z a–z 0–9 . _
// and -, are at most maxArtifactBase characters before the extension, and
// are unique within the list compared without case: pages whose slugs
// collide (same path on two ports, a slug cut short) get their 1-based
// position in the list as a suffix ("example.com-search-3.png"). The
// names depend on the list alone, so every attempt of a run names a page
// alike.
func artifactNames(urls []string, ext string) []string {
	slugs := make([]string, len(urls))
	seen := map[string]int{}
	for i, u := range urls {
		slugs[i] = pageSlug(u)
		seen[strings.ToLower(slugs[i])]++
	}
	used := map[string]bool{}
	out := make([]string, len(urls))
	for i, s := range slugs {
		name := s
		if seen[strings.ToLower(s)] > 1 {
			name = slugSuffix(s, strconv.Itoa(i+1))
		}
		// A suffixed name may be another page's own slug: count on.
		for k := 2; used[strings.ToLower(name)]; k++ {
			name = slugSuffix(s, strconv.Itoa(i+1)+"-"+strconv.Itoa(k))
		}
		used[strings.ToLower(name)] = true
		out[i] = name + "." + ext
	}
	return out
}

// pageSlug is a page URL as a file name stem: host (no port, no user
// info), path and query joined by "-", "index" for the root, "page" when
// nothing is left.
func pageSlug(raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		return orPage(slugText(raw))
	}
	parts := []string{strings.ToLower(u.Hostname())}
	if p := strings.Trim(u.Path, "/"); p != "" {
		parts = append(parts, p)
	} else if u.Opaque == "" {
		parts = append(parts, "index")
	}
	if u.Opaque != "" {
		parts = append(parts, u.Opaque)
	}
	if u.RawQuery != "" {
		if q, err := url.QueryUnescape(u.RawQuery); err == nil {
			parts = append(parts, q)
		} else {
			parts = append(parts, u.RawQuery)
		}
	}
	return orPage(slugText(strings.Join(parts, "-")))
}

// slugText keeps A–Z a–z 0–9 . and _ of s, turns every other run of
// characters into one "-", trims "-" and "." at both ends (no hidden
// files) and cuts it to maxArtifactBase.
func slugText(s string) string {
	var b strings.Builder
	dash := false
	for _, r := range s {
		switch {
		case r < 0x80 && (r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '.' || r == '_'):
			b.WriteRune(r)
			dash = false
		case !dash:
			b.WriteByte('-')
			dash = true
		}
	}
	return trimSlug(b.String(), maxArtifactBase)
}

// trimSlug cuts s to n bytes (s is ASCII) and trims "-" and "." at both
// ends.
func trimSlug(s string, n int) string {
	if len(s) > n {
		s = s[:n]
	}
	return strings.Trim(s, "-.")
}

// slugSuffix appends "-"+suffix to slug, cutting slug so the whole stays
// within maxArtifactBase.
func slugSuffix(slug, suffix string) string {
	return orPage(trimSlug(slug, maxArtifactBase-len(suffix)-1)) + "-" + suffix
}

// orPage is s, or "page" when s is empty.
func orPage(s string) string {
	if s == "" {
		return "page"
	}
	return s
}

// pageLoad holds the page-loading inputs every page-visiting template
// shares (concurrency, perPageTimeoutMs, waitFor). It is embedded in each
// template's inputs, so JSON decoding fills it directly and one method
// applies the defaults.
type pageLoad struct {
	Concurrency      int    `json:"concurrency"`
	PerPageTimeoutMs int    `json:"perPageTimeoutMs"`
	WaitFor          string `json:"waitFor"`
}

// applyDefaults fills what the caller left out: concurrency
// defaultConcurrency, perPageTimeoutMs defaultPerPageTimeoutMs, waitFor
// "load".
func (p *pageLoad) applyDefaults() {
	if p.Concurrency <= 0 {
		p.Concurrency = defaultConcurrency
	}
	if p.PerPageTimeoutMs <= 0 {
		p.PerPageTimeoutMs = defaultPerPageTimeoutMs
	}
	if p.WaitFor == "" {
		p.WaitFor = browser.WaitLoad
	}
}

// captureFailure turns the end of a capture's own deadline (cctx, not the
// run's ctx) into the page's failure, STEP_EXECUTION_FAILED: Chromium's
// Page.captureScreenshot never answers when it is taken while the page
// navigates itself (a meta refresh or a script redirect right after the
// load event), and printing a huge document to PDF can take minutes, so
// captures are bounded by the page deadline (the input named field).
// url may be empty (the tab's current page). Other errors pass through.
func captureFailure(ctx, cctx context.Context, err error, what, url, field string, timeoutMs int) error {
	var de *engine.Error
	if err == nil || ctx.Err() != nil || cctx.Err() == nil || errors.As(err, &de) {
		return err
	}
	page, details := "the page", map[string]any{"stage": what, "timeoutMs": timeoutMs}
	if url != "" {
		page, details["url"] = url, url
	}
	return engine.Wrap(engine.StepExecutionFailed, err,
		"the %s of %s did not finish within %d ms; the page may have navigated away while it was taken, or be too large (raise %s)", what, page, timeoutMs, field).
		WithDetails(details)
}

// captureWithin runs take (a screenshot or PDF of a loaded page) bounded
// by timeoutMs, the page deadline named by field, and sorts its error as
// captureFailure does.
func captureWithin(ctx context.Context, take func(context.Context) ([]byte, error), what, url, field string, timeoutMs int) ([]byte, error) {
	cctx, cancel := context.WithTimeout(ctx, timeoutDur(timeoutMs))
	defer cancel()
	data, err := take(cctx)
	return data, captureFailure(ctx, cctx, err, what, url, field, timeoutMs)
}

// extractFailure turns an error of a loaded page's extraction script that
// is not a domain error into the page's own failure: NAVIGATION_TIMEOUT
// when the extraction's deadline (xctx, perPageTimeoutMs) passed (a
// renderer stuck in a loop or behind a dialog, a huge document),
// STEP_EXECUTION_FAILED otherwise (the document was replaced while it was
// read: a meta refresh or script redirect right after the load event).
// Such bare errors used to become EXECUTION_ERROR, which the page
// templates take for "browser gone": one hostile page failed the whole
// run. Domain errors and the end of the run's ctx pass through.
func extractFailure(ctx, xctx context.Context, err error, url string, timeoutMs int) error {
	var de *engine.Error
	if err == nil || ctx.Err() != nil || errors.As(err, &de) {
		return err
	}
	if xctx.Err() != nil {
		return engine.Wrap(engine.NavigationTimeout, err, "%s loaded, but reading it did not finish within %d ms (perPageTimeoutMs)", url, timeoutMs).
			WithDetails(map[string]any{"url": url, "stage": "extract", "timeoutMs": timeoutMs})
	}
	return engine.Wrap(engine.StepExecutionFailed, err, "reading %s failed: %v (the page may have navigated away while it was read)", url, err).
		WithDetails(map[string]any{"url": url, "stage": "extract"})
}

// inBrowserState reports whether the run's pages must be loaded in the
// browser because its cookies and storage live there: a named session
// (sessionId) or a persistent profile.
func inBrowserState(b *browser.Manager, env engine.Env) bool {
	return env.BrowserProfile() != "" || (b != nil && b.Named(env.SessionID()))
}
