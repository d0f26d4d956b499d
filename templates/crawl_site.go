package templates

import (
	"encoding/json"
	"fmt"
	"net/url"
	"strconv"
	"strings"

	"github.com/browsertask/browsertask/browser"
	"github.com/browsertask/browsertask/engine"
	"github.com/browsertask/browsertask/internal/extract/sitemap"
)

// CrawlSite is the crawl_site template: breadth-first from a start URL,
// following links within limits, extracting like batch_extract_pages.
type CrawlSite struct {
	b *browser.Manager
	// sitemapLimits bound the sitemaps a run reads (zero fields: the
	// defaults, sitemap.DefaultLimits); tests lower them.
	sitemapLimits sitemap.Limits
}

var _ engine.Template = (*CrawlSite)(nil)

// NewCrawlSite returns the template, working in the run's session of b.
func NewCrawlSite(b *browser.Manager) engine.Template { return &CrawlSite{b: b} }

// crawlInputs are crawl_site's validated inputs.
type crawlInputs struct {
	crawlScope
	crawlDiscovery
	Fields       map[string]fieldSpec `json:"fields"`
	IncludeText  bool                 `json:"includeText"`
	IncludeLinks bool                 `json:"includeLinks"`
	IncludeMeta  bool                 `json:"includeMeta"`
	// Render is "browser" (default), "http" (batch_extract_http.go) or
	// "auto" (render_auto.go).
	Render string `json:"render"`
	pageFormats
	pageLoad
	resourceBlocking
	politeness
}

func crawlInputSchema() string {
	return `{
  "$schema": "https://json-schema.org/draft/2020-12/schema",
  "type": "object", "additionalProperties": false, "required": ["startUrl"],
  "properties": {
    "startUrl": {"type": "string", "minLength": 1, "maxLength": 8192, "description": "Absolute http(s) URL where the crawl starts (depth 0)."},
    ` + crawlScopeSchema("") + `,
    ` + crawlDiscoverySchema(sitemapSkip, "crawl_site finds pages by links as it always did; ask for \"include\" to add the sitemaps' pages.") + `,
    "fields": {"type": "object", "maxProperties": 100, "description": "As batch_extract_pages: name → CSS selector or {selector, attr?, all?}, capped as there (a capped field is named in the page's fieldsCapped).",
      "additionalProperties": {"oneOf": [{"type": "string", "minLength": 1, "maxLength": 1000},
        {"type": "object", "additionalProperties": false, "required": ["selector"], "properties": {
          "selector": {"type": "string", "minLength": 1, "maxLength": 1000}, "attr": {"type": "string", "minLength": 1, "maxLength": 200}, "all": {"type": "boolean"}}}]}},
    "includeText": {"type": "boolean", "default": false, "description": "Include each page's visible text in pages.json (at most 20000 characters; textTruncated: true when the page had more)."},
    "includeLinks": {"type": "boolean", "default": false, "description": "Include each page's links in pages.json (the first 1000 distinct links; a page with more says linksTruncated: true and linksCapped {found, kept, read}). Listed or not, the crawl follows every link of a page up to 100000 distinct ones (a page with more says linksCapped.read)."},
    "includeMeta": {"type": "boolean", "default": false, "description": "Include meta tags in pages.json."},
    ` + formatsSchema() + `,
    "blockResources": ` + blockResourcesSchema + `,
    "render": {"type": "string", "enum": ["browser", "http", "auto"], "default": "browser", "description": "How pages are read: \"browser\" (Chromium, the default), \"http\" (fetched and parsed without a browser, for server-rendered sites: the same fields, text, links and meta, nothing scripts add) or \"auto\" (fetched over HTTP; per section of a site (host and first path directory: /library/, / for root pages) the first pages and 1 in 20 later ones, until 4 matched, are also rendered in the browser and compared, fields, title and links; a section where the browser shows what the HTML lacks is read in the browser from then on, an app shell page (noscript) goes to the browser alone; each page says renderedBy and renderReason). Prefer \"auto\" to crawl a site you do not know: several times faster than \"browser\" where the HTML has the content, the same pages and fields where it does not. In a named session the browser is used."},
    "concurrency": ` + concurrencySchema() + `,
    "perPageTimeoutMs": ` + perPageTimeoutSchema() + `,
    "waitFor": ` + waitForSchema + `,
    ` + politenessSchema() + `
  }
}`
}

const crawlResultSchema = `{
  "$schema": "https://json-schema.org/draft/2020-12/schema",
  "type": "object", "required": ["summary", "pages", "artifactId"],
  "properties": {
    "summary": {"type": "object", "required": ["total", "succeeded", "failed"]},
    "pages": {"type": "array", "items": {"type": "object", "required": ["url", "depth", "httpStatus", "error"],
      "properties": {"url": {"type": "string"}, "finalUrl": {"type": "string"}, "httpStatus": {"type": "integer"},
        "title": {"type": "string"}, "depth": {"type": "integer"}, "fields": {"type": "object"},
        "fieldsOmitted": {"type": "boolean", "description": "true when the result had no room left for this page's fields (8 MiB for all pages); pages.json has them."},
        "fieldsCapped": {"type": "object", "description": "The fields whose value was capped, name → {matches, kept, cut}; absent when none was."},
        "linksCapped": {"type": "object", "description": "When a cap left links out: {found: distinct links on the page, kept: links in pages.json (1000 at most, 0 without includeLinks), read: links the crawl followed from (100000 at most)}; absent otherwise."},
        "renderedBy": {"type": "string", "enum": ["browser", "http"], "description": "How the page was read (inputs.render)."},
        "renderReason": {"type": "string", "description": "With render \"auto\": why the browser read this page (\"sample\", \"group /docs/ needs JavaScript: /docs/a.html: links differ\": the section, the page that proved it, what differed; \"app shell: …\")."},
        "source": {"type": "string", "enum": ["start", "sitemap", "link"], "description": "How the page was found: the startUrl, a sitemap (inputs.sitemap) or a link."},
        "lastmod": {"type": "string", "description": "The page's lastmod in its sitemap, as written there; absent when none."},
        ` + pageContentSchema + `
        "attempts": {"type": "integer", "description": "How many times the page was requested (inputs.retries)."},
        "failedAttempts": {"type": "array", "description": "The transient failures before the last attempt: {attempt, httpStatus, error, waitedMs, retryAfterMs}."},
        "error": ` + errorObjectSchema + `}}},
    ` + markdownArtifactSchema + `
    "artifactId": {"type": "string", "description": "pages.json: every page with text, links and meta when requested."},
    ` + discoveryResultSchema + `
  }
}`

// Info describes the template.
func (t *CrawlSite) Info() engine.TemplateInfo {
	return engine.TemplateInfo{
		TemplateID: "crawl_site", Version: 1, Versions: []int{1},
		Title: "Crawl a website",
		Description: "Starts at startUrl and follows links breadth first: the start page is depth 0, its links depth 1, " +
			"and so on up to maxDepth (default " + strconv.Itoa(defaultCrawlDepth) + "), visiting at most maxPages pages (default " + strconv.Itoa(defaultCrawlPages) + ", at most the server's maxUrls): " +
			"the first maxPages in breadth-first order (depth, then the order of the page that found a link, then the link's place on it), " +
			"the same pages whatever render and concurrency, " +
			"by default only on the start page's origin (sameOrigin), optionally filtered by include/exclude URL globs " +
			"(* = any characters). Each page gets the same output as batch_extract_pages (final URL, HTTP status, " +
			"title, fields, optional text, links, meta) plus its depth; pages.json holds everything. Use it to " +
			"discover pages; when you already know the URLs use batch_extract_pages. Progress total grows as links " +
			"are found. Failed pages are recorded (partial_success); all failing gives STEP_EXECUTION_FAILED. " +
			"Resumable: pages already done are not fetched again, after a restart and when the same inputs are " +
			"submitted again after a run that failed or was canceled (its pages are continued from)." +
			formatsDescription,
		InputSchema: json.RawMessage(crawlInputSchema()), ResultSchema: json.RawMessage(crawlResultSchema),
		TrustLevel: "any", Resumable: true, NeedsBrowser: true, ContinuesEarlierRuns: true,
		EstimatedStepsHint: "one step per page visited, at most maxPages",
		Examples:           []json.RawMessage{json.RawMessage(`{"startUrl":"https://example.com/docs/","maxPages":50,"maxDepth":3,"exclude":["*/archive/*"],"fields":{"heading":"h1"}}`)},
	}
}

func parseCrawlInputs(raw json.RawMessage) (*crawlInputs, error) {
	in := &crawlInputs{}
	if err := decodeInputs(raw, in); err != nil {
		return nil, err
	}
	in.crawlScope.applyDefaults()
	in.crawlDiscovery.applyDefaults(sitemapSkip)
	if in.Render == "" {
		in.Render = renderBrowser
	}
	in.IncludeText, in.IncludeLinks = in.pageFormats.includes(in.IncludeText, in.IncludeText, in.IncludeLinks)
	in.pageLoad.applyDefaults()
	return in, nil
}

// Check applies the URL policy and the profile's limits. Errors:
// INVALID_PARAMETER, TRUST_LEVEL_NOT_ALLOWED.
func (t *CrawlSite) Check(inputs json.RawMessage, p engine.Profile) error {
	in, err := parseCrawlInputs(inputs)
	if err != nil {
		return err
	}
	if p.MaxURLs > 0 && in.MaxPages > p.MaxURLs {
		return engine.Errorf(engine.InvalidParameter, "inputs.maxPages: %d exceeds this server's maxUrls %d; ask for at most %d pages (or raise maxUrls in the server's config)", in.MaxPages, p.MaxURLs, p.MaxURLs).
			WithDetails(map[string]any{"field": "inputs.maxPages", "maxUrls": p.MaxURLs})
	}
	if err := checkConcurrency(in.Concurrency, p); err != nil {
		return err
	}
	if err := checkFields(in.Fields); err != nil {
		return err
	}
	if err := in.resourceBlocking.check(); err != nil {
		return err
	}
	if err := in.pageFormats.check(in.Render); err != nil {
		return err
	}
	if in.Render == renderHTTP {
		if err := checkHTTPFields(in.Fields); err != nil {
			return err
		}
	}
	if err := in.politeness.check(urlPolicy(t.b, p), in.Render); err != nil {
		return err
	}
	return checkURL(in.StartURL, "inputs.startUrl", urlPolicy(t.b, p))
}

// SecretValues keeps the proxy's credentials and the secret header values
// out of everything stored and shown (engine.SecretInputs).
func (t *CrawlSite) SecretValues(inputs json.RawMessage) []string {
	in, err := parseCrawlInputs(inputs)
	if err != nil {
		return nil
	}
	return in.politeness.secretValues()
}

// globMatch reports whether url matches a URL glob as a whole: * matches
// any run of characters (slashes too), ? exactly one, everything else
// itself. Iterative with one backtrack point, so it is linear-ish and never
// fails to compile.
func globMatch(glob, url string) bool {
	g, u := []rune(glob), []rune(url)
	gi, ui := 0, 0
	star, mark := -1, 0
	for ui < len(u) {
		switch {
		case gi < len(g) && (g[gi] == '?' || (g[gi] != '*' && g[gi] == u[ui])):
			gi++
			ui++
		case gi < len(g) && g[gi] == '*':
			star, mark = gi, ui
			gi++
		case star >= 0:
			gi = star + 1
			mark++
			ui = mark
		default:
			return false
		}
	}
	for gi < len(g) && g[gi] == '*' {
		gi++
	}
	return gi == len(g)
}

// normalizeLink returns an absolute http(s) URL without its fragment,
// with a lower-case host and no default port, or "" for anything else
// (mailto:, javascript:, unparsable). The crawl's frontier deduplicates by
// it.
func normalizeLink(raw string) string {
	u, err := url.Parse(strings.TrimSpace(raw))
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return ""
	}
	u.Fragment, u.RawFragment = "", ""
	u.Host = strings.ToLower(u.Host)
	if p := u.Port(); (u.Scheme == "http" && p == "80") || (u.Scheme == "https" && p == "443") {
		u.Host = strings.TrimSuffix(u.Host, ":"+p)
	}
	if u.Path == "" {
		u.Path = "/"
	}
	return u.String()
}

// originOf returns scheme://host[:port] of an absolute URL.
func originOf(raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		return ""
	}
	return strings.ToLower(u.Scheme) + "://" + strings.ToLower(u.Host)
}

// crawlFilter decides which discovered links are followed.
type crawlFilter struct {
	origin   string
	include  []string
	exclude  []string
	policy   engine.URLPolicy
	sameOrig bool
}

func newCrawlFilter(in *crawlScope, start string, pol engine.URLPolicy) *crawlFilter {
	f := &crawlFilter{origin: originOf(start), policy: pol, sameOrig: *in.SameOrigin}
	f.include = append(f.include, in.Include...)
	f.exclude = append(f.exclude, in.Exclude...)
	return f
}

// follow reports whether the crawl may visit link.
func (f *crawlFilter) follow(link string) bool {
	if f.sameOrig && originOf(link) != f.origin {
		return false
	}
	for _, g := range f.exclude {
		if globMatch(g, link) {
			return false
		}
	}
	if len(f.include) > 0 {
		ok := false
		for _, g := range f.include {
			ok = ok || globMatch(g, link)
		}
		if !ok {
			return false
		}
	}
	return engine.CheckURL(link, f.policy) == nil
}

// crawlPageOut is one page of the crawl: batch_extract_pages' output plus
// its depth.
type crawlPageOut struct {
	pageOut
	Depth int `json:"depth"`
	// Source says how the page was found: "start", "sitemap" or "link";
	// Lastmod is its sitemap's lastmod, when it had one.
	Source  string `json:"source,omitempty"`
	Lastmod string `json:"lastmod,omitempty"`
}

// String names a page in logs.
func (c *crawlPageOut) String() string { return fmt.Sprintf("%s (depth %d)", c.URL, c.Depth) }
