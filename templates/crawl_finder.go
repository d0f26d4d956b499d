package templates

import (
	"context"
	"sort"

	"github.com/browsertask/browsertask/browser"
	"github.com/browsertask/browsertask/engine"
	"github.com/browsertask/browsertask/internal/extract/fetch"
	"github.com/browsertask/browsertask/internal/extract/hostgate"
	"github.com/browsertask/browsertask/internal/extract/sitemap"
)

// crawlFinder is one run's discovery (crawl_discovery.go) wired into its
// frontier and pool: robots.txt decides which URLs are admitted, its
// Crawl-delay spaces every request to a host, and the sitemaps seed the
// start page's record.
type crawlFinder struct {
	d      *crawlDiscovery
	limits sitemap.Limits
	f      *fetch.Fetcher
	gate   *robotsGate
	spacer *gateSpacer
	// pagesGated: the pool's work takes a slot of the gate for each page
	// (politeWork, crawl_site), so a page only raises its host's delay.
	pagesGated bool
}

// maxSkippedListed caps the skipped URLs a result lists (skippedTotal
// counts them all).
const maxSkippedListed = 1000

// newCrawlFinder makes the run's fetcher for robots.txt and sitemaps
// (the run's URL policy, checked dialer, its own cookie jar); limits
// bound the sitemaps (zero fields: sitemap.DefaultLimits; MaxURLs is
// the crawl's places); id is the run's identity (User-Agent, headers,
// proxy). hosts is the run's per-host gate when its page work
// already goes through it (politeWork); nil makes one that only spaces
// requests by Crawl-delay. Errors: EXECUTION_ERROR.
func newCrawlFinder(ctx context.Context, d *crawlDiscovery, pol engine.URLPolicy, limits sitemap.Limits, hosts *hostgate.Gate, id wire) (*crawlFinder, error) {
	// robots.txt and sitemaps are requests of the run like its pages: its
	// User-Agent, headers and proxy.
	f, err := fetch.New(fetch.Options{Policy: pol, UserAgent: id.userAgent, Header: id.header, Proxy: id.proxy})
	if err != nil {
		return nil, engine.Wrap(engine.ExecutionError, err, "HTTP client: %v", err)
	}
	c := &crawlFinder{d: d, limits: limits, f: f, gate: &robotsGate{ctx: ctx, f: f, on: *d.RespectRobots, agent: robotsAgentFor(id.userAgent), byOrigin: map[string]*robotsEntry{}}}
	c.pagesGated = hosts != nil
	if hosts == nil {
		hosts = hostgate.New(hostgate.Options{PerHost: hostgate.MaxPerHost})
	}
	c.spacer = &gateSpacer{gate: hosts, delay: c.gate.delay}
	return c, nil
}

// close releases the fetcher's connections.
func (c *crawlFinder) close() { c.f.Close() }

// checkStart refuses a start URL robots.txt disallows. Errors:
// STEP_EXECUTION_FAILED naming the reason and the way out.
func (c *crawlFinder) checkStart(start string) error {
	if ok, why := c.gate.allowed(start); !ok {
		return engine.Errorf(engine.StepExecutionFailed, "inputs.startUrl %s is not crawled: %s; pass respectRobots: false to crawl it anyway (your choice, recorded in the result)", start, why).
			WithDetails(map[string]any{"field": "inputs.startUrl", "reason": why})
	}
	return nil
}

// attach wires the finder into a run: the frontier asks robots.txt about
// every URL it would admit, follows no link with sitemap "only", and
// takes the sitemaps' URLs when the start page finishes; every page
// waits for its host's Crawl-delay before pool.work reads it.
func (c *crawlFinder) attach(ctx context.Context, front *crawlFrontier, pool *urlPool, start string) {
	front.robots = c.gate.allowed
	front.noLinks = c.d.Sitemap == sitemapOnly
	if c.d.Sitemap != sitemapSkip {
		front.seedsFor = func() ([]sitemap.Entry, *sitemap.Result) {
			return c.seeds(ctx, start, front.follow, max(1, front.maxPages-1))
		}
	}
	work := pool.work
	pool.work = func(ctx context.Context, tb *browser.Tab, i int, url string) (pageDone, error) {
		if c.pagesGated {
			c.spacer.raise(originOf(url))
			return work(ctx, tb, i, url)
		}
		if err := c.spacer.Wait(ctx, originOf(url)); err != nil {
			return pageDone{}, err
		}
		return work(ctx, tb, i, url)
	}
}

// seeds reads start's sitemaps: the URLs in the crawl's scope (follow),
// normalised, at most max, and what reading them found. robots.txt is
// read for its Sitemap lines even when it is not obeyed.
func (c *crawlFinder) seeds(ctx context.Context, start string, follow func(string) bool, max int) ([]sitemap.Entry, *sitemap.Result) {
	roots := sitemapRoots(start, c.gate.rules(start))
	keep := func(u string) bool {
		n := normalizeLink(u)
		return n != "" && follow(n)
	}
	lim := c.limits
	lim.MaxURLs = max
	res, _ := sitemap.Discover(ctx, &sitemapSource{f: c.f, spacer: c.spacer}, roots, lim, keep)
	out := make([]sitemap.Entry, 0, len(res.Entries))
	for _, e := range res.Entries {
		out = append(out, sitemap.Entry{URL: normalizeLink(e.URL), Lastmod: e.Lastmod})
	}
	res.Entries = nil
	return out, res
}

// robotsReport is the result's robots: whether robots.txt was obeyed,
// for which agent, and what each site's said.
type robotsReport struct {
	Respected bool         `json:"respected"`
	UserAgent string       `json:"userAgent"`
	Sites     []robotsSite `json:"sites"`
}

// robotsSite is one origin's robots.txt as the run read it.
type robotsSite struct {
	Origin       string `json:"origin"`
	Status       int    `json:"status"`
	CrawlDelayMs int64  `json:"crawlDelayMs,omitempty"`
	Note         string `json:"note,omitempty"`
}

// discoveryResult is what crawl_site and map_site add to their result:
// the robots report, the skipped URLs and the sitemaps read.
type discoveryResult struct {
	Robots       robotsReport    `json:"robots"`
	Skipped      []crawlSkip     `json:"skipped"`
	SkippedTotal int             `json:"skippedTotal"`
	Sitemaps     *sitemapsReport `json:"sitemaps,omitempty"`
}

// sitemapsReport is the result's sitemaps: the mode and what reading them
// found (absent with sitemap "skip").
type sitemapsReport struct {
	Mode string `json:"mode"`
	*sitemap.Result
}

// report builds the result's discovery part from the frontier.
func (c *crawlFinder) report(front *crawlFrontier) discoveryResult {
	skipped, sm := front.skips()
	out := discoveryResult{Robots: robotsReport{Respected: *c.d.RespectRobots, UserAgent: c.gate.agent, Sites: []robotsSite{}},
		SkippedTotal: len(skipped), Skipped: skipped}
	if len(out.Skipped) > maxSkippedListed {
		out.Skipped = out.Skipped[:maxSkippedListed]
	}
	if out.Skipped == nil {
		out.Skipped = []crawlSkip{}
	}
	if c.d.Sitemap != sitemapSkip {
		if sm == nil {
			sm = &sitemap.Result{}
		}
		out.Sitemaps = &sitemapsReport{Mode: c.d.Sitemap, Result: sm}
	}
	c.gate.mu.Lock()
	for origin, e := range c.gate.byOrigin {
		if r := e.rules; r != nil {
			out.Robots.Sites = append(out.Robots.Sites, robotsSite{Origin: origin, Status: r.Status, CrawlDelayMs: r.CrawlDelay.Milliseconds(), Note: r.Note})
		}
	}
	c.gate.mu.Unlock()
	sort.Slice(out.Robots.Sites, func(a, b int) bool { return out.Robots.Sites[a].Origin < out.Robots.Sites[b].Origin })
	return out
}
