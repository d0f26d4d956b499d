package templates

import (
	"context"
	"errors"
	"io"
	"net/url"
	"strconv"
	"sync"
	"time"

	"github.com/browsertask/browsertask/engine"
	"github.com/browsertask/browsertask/internal/extract/fetch"
	"github.com/browsertask/browsertask/internal/extract/hostgate"
	"github.com/browsertask/browsertask/internal/extract/robots"
	"github.com/browsertask/browsertask/internal/extract/sitemap"
)

// crawlDiscovery is how crawl_site and map_site find pages besides
// following links, and what they may fetch: the site's sitemaps and its
// robots.txt.
type crawlDiscovery struct {
	// Sitemap is "include" (sitemap URLs and links), "only" (sitemap URLs,
	// no link followed) or "skip" (links only).
	Sitemap string `json:"sitemap"`
	// RespectRobots is true unless the inputs say false.
	RespectRobots *bool `json:"respectRobots"`
}

// The sitemap modes.
const (
	sitemapInclude = "include"
	sitemapOnly    = "only"
	sitemapSkip    = "skip"
)

// applyDefaults fills what the inputs left out: the template's default
// sitemap mode and respectRobots true.
func (d *crawlDiscovery) applyDefaults(defaultSitemap string) {
	if d.Sitemap == "" {
		d.Sitemap = defaultSitemap
	}
	if d.RespectRobots == nil {
		t := true
		d.RespectRobots = &t
	}
}

// crawlDiscoverySchema is the schema text of sitemap and respectRobots
// (properties without braces), with the template's default sitemap mode
// and why it is the default.
func crawlDiscoverySchema(defaultSitemap, why string) string {
	return `"sitemap": {"type": "string", "enum": ["include", "only", "skip"], "default": "` + defaultSitemap + `", "description": ` + strconv.Quote(
		"Whether the site's sitemaps seed the pages: \"include\" (the URLs of the sitemaps named by robots.txt's Sitemap: lines, or /sitemap.xml when it names none — indexes, gzip and text sitemaps included — are visited at depth 0 like the start page, and links are followed from every page), "+
			"\"only\" (the start page and the sitemaps' URLs, no link followed) or \"skip\" (links only). Sitemap URLs outside the crawl's scope (sameOrigin, include, exclude) are dropped. "+
			"Bounds: 50 MiB per sitemap file after inflating, 50000 URLs per file, 100 files, indexes nested 4 deep; a sitemap past a bound is read up to it and named in the result's sitemaps.warnings. "+
			"Default \""+defaultSitemap+"\": "+why) + `},
    "respectRobots": {"type": "boolean", "default": true, "description": "Obey the site's robots.txt for the user agent token \"browsertask\": a disallowed URL is never requested and is listed in the result's skipped with its reason, and Crawl-delay (at most 30 s) spaces the requests to the host. A robots.txt answering 4xx means no rules; 5xx or a timeout means the site is not crawled (every URL skipped, as Google does); a host that cannot be reached over HTTP at all (DNS, refused connection, the URL policy) means no rules, and its pages fail on their own. false ignores robots.txt, by your explicit choice, recorded in the result (robots.respected)."}`
}

// discoveryResultSchema is the result schema text of the discovery part
// of crawl_site's and map_site's result (discoveryResult), properties
// without braces.
const discoveryResultSchema = `"robots": {"type": "object", "required": ["respected", "userAgent", "sites"], "description": "Whether robots.txt was obeyed (inputs.respectRobots), for which user agent token, and what each site's robots.txt said (status, crawlDelayMs, note when it was not a plain 200 file).",
      "properties": {"respected": {"type": "boolean"}, "userAgent": {"type": "string"}, "sites": {"type": "array"}}},
    "skipped": {"type": "array", "description": "URLs found and not visited because robots.txt disallows them, with the reason (the first 1000).", "items": {"type": "object", "required": ["url", "reason"], "properties": {"url": {"type": "string"}, "reason": {"type": "string"}}}},
    "skippedTotal": {"type": "integer", "description": "How many URLs robots.txt kept the run from."},
    "sitemaps": {"type": "object", "description": "With inputs.sitemap other than \"skip\": the mode, the sitemap files read, the URLs they listed, and warnings naming each file that failed or passed a bound."}`

// robotsAgentFor is the product token robots.txt groups are matched
// against: that of the User-Agent the run's HTTP requests send (its
// inputs.userAgent, the server's --user-agent, else browsertask's own).
// The browser path sends Chromium's own User-Agent unless one is set; the
// run is the same crawler, so the same token.
func robotsAgentFor(ua string) string {
	if ua == "" {
		ua = fetch.DefaultUserAgent
	}
	return robots.AgentToken(ua)
}

// crawlSkip is a URL the crawl found and did not visit, with why.
type crawlSkip struct {
	URL    string `json:"url"`
	Reason string `json:"reason"`
}

// robotsGate holds each origin's robots.txt for one run, fetched once
// when a URL of the origin is first asked about.
type robotsGate struct {
	ctx context.Context
	f   *fetch.Fetcher
	// on is false when the inputs said respectRobots: false: every URL
	// is allowed and no robots.txt is fetched (except for its sitemaps).
	on bool
	// agent is the run's robots.txt product token (robotsAgentFor).
	agent string

	mu       sync.Mutex
	byOrigin map[string]*robotsEntry
}

// robotsEntry is one origin's rules, fetched under its once.
type robotsEntry struct {
	once  sync.Once
	rules *robots.Rules
}

// rules returns the rules of rawURL's origin, fetching its robots.txt the
// first time.
func (g *robotsGate) rules(rawURL string) *robots.Rules {
	origin := originOf(rawURL)
	g.mu.Lock()
	e := g.byOrigin[origin]
	if e == nil {
		e = &robotsEntry{}
		g.byOrigin[origin] = e
	}
	g.mu.Unlock()
	e.once.Do(func() { e.rules = g.fetchRules(origin) })
	return e.rules
}

// fetchRules reads origin's robots.txt under the run's URL policy. A
// timeout is a 5xx (disallow all); a host that does not answer at all
// over HTTP (DNS, refused connection, the URL policy) has no rules: its
// pages fail on their own, with their real error.
func (g *robotsGate) fetchRules(origin string) *robots.Rules {
	status, body, _, err := g.f.FetchRaw(g.ctx, origin+"/robots.txt", "text/plain,*/*;q=0.5", robots.MaxBytes)
	if err != nil && status == 0 {
		if engine.CodeOf(err) == engine.NavigationTimeout {
			return robots.Unreachable(g.agent, err)
		}
		r := robots.Parse(404, nil, g.agent)
		r.Status, r.Note = 0, "robots.txt could not be fetched ("+shortErr(err)+"): no rules"
		return r
	}
	if err != nil && status < 400 {
		// The body broke off: what arrived is not the whole file.
		return robots.Unreachable(g.agent, err)
	}
	return robots.Parse(status, body, g.agent)
}

// allowed reports whether the run may visit rawURL, and if not why.
func (g *robotsGate) allowed(rawURL string) (bool, string) {
	if !g.on {
		return true, ""
	}
	r := g.rules(rawURL)
	if r.Allowed(rawURL) {
		return true, ""
	}
	if r.Note != "" {
		return false, r.Note
	}
	return false, "robots.txt disallows it for user-agent " + g.agent
}

// delay is the Crawl-delay of host's robots.txt (0 without one or with
// robots ignored). host is scheme://host[:port].
func (g *robotsGate) delay(origin string) time.Duration {
	if !g.on {
		return 0
	}
	return g.rules(origin + "/").CrawlDelay
}

// shortErr is an error's message without its error code prefix.
func shortErr(err error) string {
	if e := engine.AsError(err); e != nil && e.Message != "" {
		return e.Message
	}
	return err.Error()
}

// hostSpacer spaces the starts of requests to one host.
type hostSpacer interface {
	// Wait returns when a request to origin (scheme://host[:port]) may
	// start, or ctx's cause.
	Wait(ctx context.Context, origin string) error
}

// gateSpacer spaces requests through the run's per-host gate
// (hostgate.Gate, the one place a host's requests are limited and
// spaced): robots.txt's Crawl-delay becomes the host's minimum delay on
// the gate (the largest delay set wins), beside the run's minDelayMs and
// the gate's backoff.
type gateSpacer struct {
	gate  *hostgate.Gate
	delay func(origin string) time.Duration
}

// raise gives the gate origin's Crawl-delay and returns the gate's name
// for the host ("" when origin is not http(s)).
func (s *gateSpacer) raise(origin string) string {
	host := gateHost(origin)
	if d := s.delay(origin); d > 0 && host != "" {
		s.gate.SetMinDelay(host, d)
	}
	return host
}

// Wait implements hostSpacer for a request that does not hold a slot of
// the gate itself (a sitemap, a map_site page): it takes a slot and gives
// it back at once, so the request starts spaced like any other to the
// host.
func (s *gateSpacer) Wait(ctx context.Context, origin string) error {
	host := s.raise(origin)
	if host == "" {
		return nil
	}
	release, err := s.gate.Acquire(ctx, host)
	if err != nil {
		return err
	}
	release()
	return nil
}

// sitemapSource fetches sitemap files through the run's fetcher, spaced
// like pages.
type sitemapSource struct {
	f      *fetch.Fetcher
	spacer hostSpacer
}

// Sitemap implements sitemap.Source.
func (s *sitemapSource) Sitemap(ctx context.Context, u string, maxBytes int64, read func(int, io.Reader) error) error {
	if err := s.spacer.Wait(ctx, originOf(u)); err != nil {
		return err
	}
	err := s.f.FetchStream(ctx, u, "application/xml,text/xml;q=0.9,text/plain;q=0.8,*/*;q=0.5", maxBytes, read)
	var e *engine.Error
	if errors.As(err, &e) {
		// The fetch's own failure, said without its code.
		return errors.New(shortErr(e))
	}
	return err
}

// sitemapRoots are the sitemaps to read for start: those robots.txt names
// (resolved against it), or the origin's /sitemap.xml when it names none.
func sitemapRoots(start string, r *robots.Rules) []sitemap.Root {
	origin := originOf(start)
	var roots []sitemap.Root
	for _, s := range r.Sitemaps {
		if u, err := url.Parse(origin + "/robots.txt"); err == nil {
			if ref, err := u.Parse(s); err == nil && (ref.Scheme == "http" || ref.Scheme == "https") {
				roots = append(roots, sitemap.Root{URL: ref.String()})
			}
		}
	}
	if len(roots) == 0 {
		roots = append(roots, sitemap.Root{URL: origin + "/sitemap.xml", Guessed: true})
	}
	return roots
}
