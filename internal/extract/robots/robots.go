// Package robots reads a site's robots.txt (RFC 9309, with Google's
// Crawl-delay and Sitemap extensions) with github.com/temoto/robotstxt,
// for crawl_site and map_site: which paths the run's user agent may
// fetch, how long to wait between requests, which sitemaps the site
// names.
//
// When robots.txt cannot be read the rules are Google's: a 4xx status
// (404, 401, 403…) means there are no rules (allow all); a 5xx status
// means the site is unavailable and nothing is crawled (disallow all),
// since a crawler cannot tell what the site forbids. A fetch that got no
// answer is the caller's to class: Unreachable treats it as a 5xx
// (templates does so for a timeout, and reads a host that cannot be
// reached at all as having no rules, its pages failing on their own).
// A file that does not parse (a rule before any User-agent line, a
// Crawl-delay that is not a number) is read as allow all, with a Note.
package robots

import (
	"fmt"
	"net/url"
	"strings"
	"time"

	"github.com/temoto/robotstxt"
)

// MaxBytes is how much of a robots.txt is read (Google reads 500 KiB and
// ignores the rest).
const MaxBytes = 500 << 10

// MaxCrawlDelay caps a Crawl-delay: a longer one is used as this, so a
// site cannot stall a run for hours with one line (Note says so).
const MaxCrawlDelay = 30 * time.Second

// Rules are one origin's robots.txt as it applies to one user agent.
type Rules struct {
	// Agent is the product token the groups were matched against.
	Agent string
	// Status is robots.txt's HTTP status (0 when it could not be fetched).
	Status int
	// CrawlDelay is the group's Crawl-delay (0 when none), at most
	// MaxCrawlDelay.
	CrawlDelay time.Duration
	// Sitemaps are the file's Sitemap: lines, absolute URLs, in order.
	Sitemaps []string
	// Note says why the rules are what they are when robots.txt was not a
	// plain 200 file ("" otherwise).
	Note string

	disallowAll bool
	group       *robotstxt.Group
}

// Parse makes the rules of a robots.txt fetched with status and body
// (body cut at MaxBytes), for agent (a product token: AgentToken).
func Parse(status int, body []byte, agent string) *Rules {
	r := &Rules{Agent: agent, Status: status}
	if len(body) > MaxBytes {
		body = body[:MaxBytes]
	}
	switch {
	case status >= 200 && status < 300:
	case status >= 400 && status < 500:
		r.Note = fmt.Sprintf("robots.txt answered %d: no rules (allow all)", status)
		return r
	case status >= 500 && status < 600:
		r.disallowAll = true
		r.Note = fmt.Sprintf("robots.txt answered %d: the site is treated as disallowing every path, as Google does; try again later or pass respectRobots: false", status)
		return r
	default:
		r.Note = fmt.Sprintf("robots.txt answered %d: no rules (allow all)", status)
		return r
	}
	data, err := robotstxt.FromBytes(body)
	if err != nil {
		r.Note = "robots.txt does not parse (" + oneLine(err.Error()) + "): no rules (allow all)"
		return r
	}
	r.Sitemaps = append(r.Sitemaps, data.Sitemaps...)
	r.group = data.FindGroup(agent)
	r.CrawlDelay = r.group.CrawlDelay
	if r.CrawlDelay > MaxCrawlDelay {
		r.Note = fmt.Sprintf("robots.txt asks for a Crawl-delay of %s: %s used", r.CrawlDelay, MaxCrawlDelay)
		r.CrawlDelay = MaxCrawlDelay
	}
	if r.CrawlDelay < 0 {
		r.CrawlDelay = 0
	}
	return r
}

// Unreachable makes the rules of an origin whose robots.txt could not be
// fetched (network error, timeout): disallow all, as for a 5xx.
func Unreachable(agent string, err error) *Rules {
	return &Rules{Agent: agent, disallowAll: true,
		Note: "robots.txt could not be fetched (" + oneLine(err.Error()) + "): the site is treated as disallowing every path, as Google does; try again later or pass respectRobots: false"}
}

// Allowed reports whether the rules let the agent fetch rawURL (its path
// and query are matched).
func (r *Rules) Allowed(rawURL string) bool {
	if r.disallowAll {
		return false
	}
	if r.group == nil {
		return true
	}
	u, err := url.Parse(rawURL)
	if err != nil {
		return false
	}
	p := u.EscapedPath()
	if p == "" {
		p = "/"
	}
	if u.RawQuery != "" {
		p += "?" + u.RawQuery
	}
	return r.group.Test(p)
}

// AgentToken is the product token robots.txt groups are matched against
// for a User-Agent header: the name after "compatible;" when there is
// one ("Mozilla/5.0 (compatible; browsertask)" → "browsertask"), else
// the first product's name ("browsertask/1.0" → "browsertask"), lower
// case.
func AgentToken(ua string) string {
	if i := strings.Index(strings.ToLower(ua), "compatible;"); i >= 0 {
		rest := strings.TrimSpace(ua[i+len("compatible;"):])
		if f := strings.FieldsFunc(rest, func(r rune) bool { return r == '/' || r == ';' || r == ')' || r == ' ' }); len(f) > 0 {
			return strings.ToLower(f[0])
		}
	}
	if f := strings.FieldsFunc(ua, func(r rune) bool { return r == '/' || r == ' ' }); len(f) > 0 {
		return strings.ToLower(f[0])
	}
	return "*"
}

// oneLine is s on one line, at most 200 bytes.
func oneLine(s string) string {
	s = strings.Join(strings.Fields(s), " ")
	if len(s) > 200 {
		s = s[:200] + "…"
	}
	return s
}
