package templates

import (
	"encoding/json"
	"strconv"
	"strings"

	"github.com/browsertask/browsertask/browser"
	"github.com/browsertask/browsertask/engine"
)

// MapSite is the map_site template: a site's URLs, fast, without a
// browser — its sitemaps plus the links found by fetching its pages over
// HTTP, within a crawl's scope, optionally ranked by a search term. It
// runs on crawl_site's frontier (crawl_frontier.go) and discovery
// (crawl_finder.go), so its scope, order, robots.txt rules and resume are
// crawl_site's.
type MapSite struct {
	// b gives the URL policy (the daemon's own address, the resolver);
	// no page is opened in it. nil in tests: the profile's policy alone.
	b *browser.Manager
}

var _ engine.Template = (*MapSite)(nil)

// NewMapSite returns the template; b supplies the URL policy only.
func NewMapSite(b *browser.Manager) engine.Template { return &MapSite{b: b} }

// mapInputs are map_site's validated inputs.
type mapInputs struct {
	crawlScope
	crawlDiscovery
	// Search, when set, keeps the URLs matching one of its words and
	// ranks them (mapScore).
	Search           string `json:"search"`
	Concurrency      int    `json:"concurrency"`
	PerPageTimeoutMs int    `json:"perPageTimeoutMs"`
}

// map_site's own defaults: a map lists more than a crawl reads.
const (
	defaultMapPages       = 1000
	defaultMapConcurrency = 8
	maxMapInline          = 1000
)

func mapInputSchema() string {
	return `{
  "$schema": "https://json-schema.org/draft/2020-12/schema",
  "type": "object", "additionalProperties": false, "required": ["startUrl"],
  "properties": {
    "startUrl": {"type": "string", "minLength": 1, "maxLength": 8192, "description": "Absolute http(s) URL of the site to map (depth 0)."},
    ` + strings.Replace(crawlScopeSchema(""), `"default": `+strconv.Itoa(defaultCrawlPages), `"default": `+strconv.Itoa(defaultMapPages), 1) + `,
    ` + crawlDiscoverySchema(sitemapInclude, "a map lists what the site says it has and what its links reach; with \"only\" no page is fetched at all.") + `,
    "search": {"type": "string", "maxLength": 200, "description": "Keep only the URLs whose path or title contains one of these words (case-insensitive), ranked: each word found in the title counts 2, in the URL's path 1; ties keep crawl order. Titles are known only for pages fetched (not with sitemap \"only\")."},
    "concurrency": {"type": "integer", "minimum": 1, "maximum": 64, "default": ` + strconv.Itoa(defaultMapConcurrency) + `, "description": "Pages fetched at once over HTTP (at most the server's maxTabsPerSession)."},
    "perPageTimeoutMs": ` + pageTimeoutSchema("Deadline for fetching one page; past it the URL is listed with its error (NAVIGATION_TIMEOUT).") + `
  }
}`
}

const mapResultSchema = `{
  "$schema": "https://json-schema.org/draft/2020-12/schema",
  "type": "object", "required": ["summary", "urls", "artifactId"],
  "properties": {
    "summary": {"type": "object", "required": ["total", "succeeded", "failed"], "description": "URLs listed; failed counts those whose fetch failed or answered an error status (listed all the same)."},
    "urls": {"type": "array", "description": "The first 1000 URLs (urls.json has all): breadth-first order, or ranked with search.", "items": {"type": "object", "required": ["url", "depth", "source"],
      "properties": {"url": {"type": "string"}, "title": {"type": "string", "description": "The page's title, when it was fetched."},
        "lastmod": {"type": "string", "description": "lastmod in the sitemap that listed it."}, "depth": {"type": "integer"},
        "source": {"type": "string", "enum": ["start", "sitemap", "link"]}, "httpStatus": {"type": "integer", "description": "When the page was fetched."},
        "score": {"type": "integer", "description": "With search: the URL's rank score."}, "error": {"type": "string", "description": "Why its fetch failed."}}}},
    "urlsTruncated": {"type": "boolean", "description": "true when urls lists only the first 1000."},
    "artifactId": {"type": "string", "description": "urls.json: every URL listed, as in urls."},
    ` + discoveryResultSchema + `
  }
}`

// Info describes the template.
func (t *MapSite) Info() engine.TemplateInfo {
	return engine.TemplateInfo{
		TemplateID: "map_site", Version: 1, Versions: []int{1},
		Title: "List a website's URLs",
		Description: "Lists a site's URLs fast, without a browser: the URLs of its sitemaps (robots.txt's Sitemap lines or /sitemap.xml; indexes, gzip, text) and the links found by fetching its pages over HTTP, " +
			"breadth first from startUrl within crawl_site's scope (sameOrigin, include/exclude globs, maxDepth, maxPages, default " + strconv.Itoa(defaultMapPages) + "), obeying robots.txt unless respectRobots is false. " +
			"Each URL says its title when fetched, its sitemap lastmod, depth and source (start, sitemap, link); search keeps and ranks the URLs matching its words. " +
			"Use it to see what a site has before crawl_site or batch_extract_pages. Resumable: URLs already fetched are not fetched again.",
		InputSchema: json.RawMessage(mapInputSchema()), ResultSchema: json.RawMessage(mapResultSchema),
		TrustLevel: "any", Resumable: true, NeedsBrowser: false, ContinuesEarlierRuns: true,
		EstimatedStepsHint: "one step per URL listed, at most maxPages",
		Examples:           []json.RawMessage{json.RawMessage(`{"startUrl":"https://example.com/","maxPages":500,"search":"pricing"}`)},
	}
}

func parseMapInputs(raw json.RawMessage) (*mapInputs, error) {
	in := &mapInputs{}
	if err := decodeInputs(raw, in); err != nil {
		return nil, err
	}
	if in.MaxPages <= 0 {
		in.MaxPages = defaultMapPages
	}
	in.crawlScope.applyDefaults()
	in.crawlDiscovery.applyDefaults(sitemapInclude)
	if in.Concurrency <= 0 {
		in.Concurrency = defaultMapConcurrency
	}
	if in.PerPageTimeoutMs <= 0 {
		in.PerPageTimeoutMs = defaultPerPageTimeoutMs
	}
	return in, nil
}

// Check applies the URL policy and the profile's limits. Errors:
// INVALID_PARAMETER, TRUST_LEVEL_NOT_ALLOWED.
func (t *MapSite) Check(inputs json.RawMessage, p engine.Profile) error {
	in, err := parseMapInputs(inputs)
	if err != nil {
		return err
	}
	if p.MaxURLs > 0 && in.MaxPages > p.MaxURLs {
		return engine.Errorf(engine.InvalidParameter, "inputs.maxPages: %d exceeds this server's maxUrls %d; ask for at most %d URLs (or raise maxUrls in the server's config)", in.MaxPages, p.MaxURLs, p.MaxURLs).
			WithDetails(map[string]any{"field": "inputs.maxPages", "maxUrls": p.MaxURLs})
	}
	if err := checkConcurrency(in.Concurrency, p); err != nil {
		return err
	}
	return checkURL(in.StartURL, "inputs.startUrl", urlPolicy(t.b, p))
}

var _ engine.InputsSummarizer = (*MapSite)(nil)

// InputsSummary is the site mapped and its URL bound when given ("map of
// https://docs.example/, up to 5000 URLs").
func (t *MapSite) InputsSummary(inputs json.RawMessage) string {
	var in crawlScope
	if json.Unmarshal(inputs, &in) != nil || in.StartURL == "" {
		return ""
	}
	s := "map of " + shownURL(in.StartURL)
	if in.MaxPages > 0 {
		s += ", up to " + strconv.Itoa(in.MaxPages) + " URLs"
	}
	return s
}
