package robots

import (
	"errors"
	"testing"
	"time"
)

// TestRules: groups by agent (the most specific wins), Allow over a
// shorter Disallow, query strings, Crawl-delay (capped), Sitemap lines,
// and the fetch-failure rules (4xx allow, 5xx and network disallow).
func TestRules(t *testing.T) {
	body := []byte("User-agent: *\nDisallow: /private/\nAllow: /private/open\nCrawl-delay: 0.5\nSitemap: http://s.test/sm.xml\n\n" +
		"User-agent: otherbot\nDisallow: /\nCrawl-delay: 99999\n")
	r := Parse(200, body, "browsertask")
	for url, want := range map[string]bool{
		"http://s.test/":                 true,
		"http://s.test/private/x":        false,
		"http://s.test/private/open?a=1": true,
		"http://s.test/private":          true,
	} {
		if got := r.Allowed(url); got != want {
			t.Errorf("Allowed(%s) = %v, want %v", url, got, want)
		}
	}
	if r.CrawlDelay != 500*time.Millisecond || len(r.Sitemaps) != 1 || r.Sitemaps[0] != "http://s.test/sm.xml" || r.Note != "" {
		t.Fatalf("rules %+v", r)
	}
	o := Parse(200, body, "otherbot")
	if o.Allowed("http://s.test/") || o.CrawlDelay != MaxCrawlDelay || o.Note == "" {
		t.Fatalf("otherbot: allowed %v, delay %s, note %q", o.Allowed("http://s.test/"), o.CrawlDelay, o.Note)
	}
	for _, c := range []struct {
		r    *Rules
		want bool
	}{
		{Parse(404, nil, "x"), true},
		{Parse(403, []byte("User-agent: *\nDisallow: /"), "x"), true},
		{Parse(503, nil, "x"), false},
		{Unreachable("x", errors.New("connection reset")), false},
		{Parse(200, []byte("Disallow: /a\n"), "x"), true}, // does not parse: allow all
	} {
		if got := c.r.Allowed("http://s.test/a"); got != c.want || (c.r.Note == "") {
			t.Errorf("status %d: allowed %v (want %v), note %q", c.r.Status, got, c.want, c.r.Note)
		}
	}
}

// TestAgentToken: the product token of the User-Agents the run sends.
func TestAgentToken(t *testing.T) {
	for ua, want := range map[string]string{
		"Mozilla/5.0 (compatible; browsertask)":             "browsertask",
		"Mozilla/5.0 (compatible; Googlebot/2.1; +http://)": "googlebot",
		"browsertask/1.2": "browsertask",
		"":                "*",
	} {
		if got := AgentToken(ua); got != want {
			t.Errorf("AgentToken(%q) = %q, want %q", ua, got, want)
		}
	}
}

// FuzzParse: any robots.txt parses without a panic and answers Allowed
// for any URL, with a Crawl-delay within its cap.
func FuzzParse(f *testing.F) {
	f.Add(200, []byte("User-agent: *\nDisallow: /x\nCrawl-delay: 2\nSitemap: /s.xml\n"), "/x/y?z")
	f.Add(200, []byte("User-agent: a\nUser-agent: b\nAllow: /$\nDisallow: /*.php$\n"), "/i.php")
	f.Add(503, []byte(""), "/")
	f.Fuzz(func(t *testing.T, status int, body []byte, path string) {
		r := Parse(status, body, "browsertask")
		_ = r.Allowed("http://s.test" + path)
		if r.CrawlDelay < 0 || r.CrawlDelay > MaxCrawlDelay {
			t.Fatalf("crawl delay %s", r.CrawlDelay)
		}
	})
}
