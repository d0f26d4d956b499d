package templates

import (
	"bytes"
	"compress/gzip"
	"fmt"
	"net/http"
	"net/http/httptest"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/browsertask/browsertask/engine"
)

// mapSite is a fixture site for sitemaps and robots.txt: a home page
// linking /linked/1, /linked/2 and /secret/y; ten /orphan/ pages no page
// links to, listed by a sitemap index (from robots.txt's Sitemap line)
// naming an XML url set (/orphan/1-5 and /secret/x) and a gzip one
// (/orphan/6-10, served as application/gzip); robots.txt disallows
// /secret/ for every agent. It counts every request by path and keeps
// each request's arrival time, server side.
type mapSite struct {
	*httptest.Server
	// robots is robots.txt's body ("" answers 404); robotsStatus, when
	// set, its status.
	robots       string
	robotsStatus int

	mu    sync.Mutex
	hits  map[string]int
	times []hitTime
}

// hitTime is one request's path and arrival.
type hitTime struct {
	path string
	at   time.Time
}

func newMapSite(t *testing.T) *mapSite {
	t.Helper()
	s := &mapSite{hits: map[string]int{}}
	page := func(w http.ResponseWriter, title, body string) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		fmt.Fprintf(w, "<!doctype html><title>%s</title><h1>%s</h1>%s", title, title, body)
	}
	urlset := func(paths ...string) string {
		var b strings.Builder
		b.WriteString(`<?xml version="1.0" encoding="UTF-8"?><urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">`)
		for i, p := range paths {
			fmt.Fprintf(&b, "<url><loc>%s%s</loc><lastmod>2025-03-%02d</lastmod></url>", s.URL, p, i+1)
		}
		return b.String() + "</urlset>"
	}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /robots.txt", func(w http.ResponseWriter, r *http.Request) {
		switch {
		case s.robotsStatus != 0:
			w.WriteHeader(s.robotsStatus)
		case s.robots == "":
			http.NotFound(w, r)
		default:
			fmt.Fprint(w, strings.ReplaceAll(s.robots, "{base}", s.URL))
		}
	})
	mux.HandleFunc("GET /sitemap_index.xml", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/xml")
		fmt.Fprintf(w, `<sitemapindex><sitemap><loc>%[1]s/sm/a.xml</loc></sitemap><sitemap><loc>%[1]s/sm/b.xml.gz</loc></sitemap><sitemap><loc>%[1]s/sitemap_index.xml</loc></sitemap></sitemapindex>`, s.URL)
	})
	mux.HandleFunc("GET /sm/a.xml", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/xml")
		fmt.Fprint(w, urlset("/orphan/1", "/orphan/2", "/orphan/3", "/orphan/4", "/orphan/5", "/secret/x"))
	})
	mux.HandleFunc("GET /sm/b.xml.gz", func(w http.ResponseWriter, r *http.Request) {
		var b bytes.Buffer
		z := gzip.NewWriter(&b)
		fmt.Fprint(z, urlset("/orphan/6", "/orphan/7", "/orphan/8", "/orphan/9", "/orphan/10"))
		_ = z.Close()
		w.Header().Set("Content-Type", "application/gzip")
		_, _ = w.Write(b.Bytes())
	})
	mux.HandleFunc("GET /{$}", func(w http.ResponseWriter, r *http.Request) {
		page(w, "Home", `<a href="/linked/1">1</a> <a href="/linked/2">2</a> <a href="/secret/y">s</a>`)
	})
	mux.HandleFunc("GET /linked/{n}", func(w http.ResponseWriter, r *http.Request) {
		page(w, "Linked "+r.PathValue("n"), `<a href="/">home</a>`)
	})
	mux.HandleFunc("GET /orphan/{n}", func(w http.ResponseWriter, r *http.Request) { page(w, "Orphan "+r.PathValue("n"), "") })
	mux.HandleFunc("GET /secret/{n}", func(w http.ResponseWriter, r *http.Request) { page(w, "Secret", "") })
	s.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.mu.Lock()
		s.hits[r.URL.Path]++
		s.times = append(s.times, hitTime{r.URL.Path, time.Now()})
		s.mu.Unlock()
		mux.ServeHTTP(w, r)
	}))
	t.Cleanup(s.Close)
	s.robots = "User-agent: *\nDisallow: /secret/\nSitemap: {base}/sitemap_index.xml\n"
	return s
}

// hitsUnder returns the requests to paths under prefix.
func (s *mapSite) hitsUnder(prefix string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	n := 0
	for p, h := range s.hits {
		if strings.HasPrefix(p, prefix) {
			n += h
		}
	}
	return n
}

// crawlResultPages returns the result's pages as path → source/lastmod.
func crawlResultPages(t *testing.T, base string, res map[string]any) map[string]string {
	t.Helper()
	out := map[string]string{}
	for _, p := range res["pages"].([]any) {
		m := p.(map[string]any)
		if m["error"] != nil {
			t.Fatalf("page %v failed: %v", m["url"], m["error"])
		}
		lm, _ := m["lastmod"].(string)
		out[strings.TrimPrefix(m["url"].(string), base)] = fmt.Sprintf("%v %s", m["source"], lm)
	}
	return out
}

// skippedOf returns the result's skipped URLs (paths) → reason.
func skippedOf(base string, res map[string]any) map[string]string {
	out := map[string]string{}
	for _, s := range res["skipped"].([]any) {
		m := s.(map[string]any)
		out[strings.TrimPrefix(m["url"].(string), base)] = m["reason"].(string)
	}
	return out
}

func sortedKeys(m map[string]string) string {
	k := make([]string, 0, len(m))
	for p := range m {
		k = append(k, p)
	}
	sort.Strings(k)
	return strings.Join(k, " ")
}

// TestCrawlSiteSitemapModes (issue 30, acceptance 1 and 3): pages reached
// only from the sitemap index (one child gzip) are found with "only" and,
// with the linked pages, with "include"; "skip" crawls links alone;
// robots.txt's disallowed /secret/ pages, from a sitemap or a link, are
// never requested and are listed as skipped with the reason; with
// respectRobots false they are visited and the result says so.
func TestCrawlSiteSitemapModes(t *testing.T) {
	site := newMapSite(t)
	orphans := "/orphan/1 /orphan/10 /orphan/2 /orphan/3 /orphan/4 /orphan/5 /orphan/6 /orphan/7 /orphan/8 /orphan/9"
	for _, c := range []struct {
		mode, want, skipped string
		robots              bool
		exclude             []string
	}{
		{"only", "/ " + orphans, "/secret/x", true, nil},
		{"include", "/ /linked/1 /linked/2 " + orphans, "/secret/x /secret/y", true, nil},
		{"skip", "/ /linked/1 /linked/2", "/secret/y", true, nil},
		{"include", "/ /linked/1 /linked/2 " + orphans + " /secret/x /secret/y", "", false, nil},
		// Sitemap URLs outside the scope are dropped as links are.
		{"only", "/ /orphan/2 /orphan/3 /orphan/4 /orphan/5 /orphan/6 /orphan/7 /orphan/8 /orphan/9", "/secret/x", true, []string{"*/orphan/1*"}},
	} {
		t.Run(fmt.Sprintf("%s robots %v exclude %v", c.mode, c.robots, c.exclude), func(t *testing.T) {
			secretBefore := site.hitsUnder("/secret/")
			in := map[string]any{"startUrl": site.URL + "/", "sitemap": c.mode, "respectRobots": c.robots,
				"render": "http", "concurrency": 4, "maxPages": 100}
			if c.exclude != nil {
				in["exclude"] = c.exclude
			}
			env := newEnv(t, mustJSON(t, in))
			out, err := runTemplate(t, NewCrawlSite(nil), env)
			if err != nil {
				t.Fatal(err)
			}
			res := resultOf(t, out)
			pages := crawlResultPages(t, site.URL, res)
			if got := sortedKeys(pages); got != c.want {
				t.Fatalf("pages\n got %s\nwant %s", got, c.want)
			}
			if pages["/"] != "start " || (c.mode != "skip" && (pages["/orphan/7"] != "sitemap 2025-03-02" || pages["/orphan/2"] != "sitemap 2025-03-02")) ||
				(c.mode != "only" && pages["/linked/2"] != "link ") {
				t.Fatalf("sources: %v", pages)
			}
			skipped := skippedOf(site.URL, res)
			if got := sortedKeys(skipped); got != c.skipped || int(res["skippedTotal"].(float64)) != len(skipped) {
				t.Fatalf("skipped %v (total %v), want %s", skipped, res["skippedTotal"], c.skipped)
			}
			for p, why := range skipped {
				if why != "robots.txt disallows it for user-agent browsertask" {
					t.Fatalf("%s skipped because %q", p, why)
				}
			}
			secret := site.hitsUnder("/secret/") - secretBefore
			if (c.robots && secret != 0) || (!c.robots && secret != 2) {
				t.Fatalf("%d requests for /secret/ pages (robots %v)", secret, c.robots)
			}
			rob := res["robots"].(map[string]any)
			if rob["respected"] != c.robots || rob["userAgent"] != "browsertask" {
				t.Fatalf("robots %v", rob)
			}
			sm, _ := res["sitemaps"].(map[string]any)
			if c.mode == "skip" {
				if sm != nil {
					t.Fatalf("sitemaps %v with sitemap skip", sm)
				}
				return
			}
			// The index, a.xml, b.xml.gz; the index naming itself is read
			// once and said.
			if sm["mode"] != c.mode || sm["files"] != 3.0 || sm["listed"] != 11.0 || !strings.Contains(fmt.Sprint(sm["warnings"]), "names "+site.URL+"/sitemap_index.xml again") {
				t.Fatalf("sitemaps %v", sm)
			}
		})
	}
}

// TestCrawlSiteRobotsUnavailable: a robots.txt answering 503 means the
// site is not crawled (Google's rule): the run fails naming why and the
// way out, and no page is requested; a 404 means no rules.
func TestCrawlSiteRobotsUnavailable(t *testing.T) {
	site := newMapSite(t)
	site.robotsStatus = http.StatusServiceUnavailable
	env := newEnv(t, mustJSON(t, map[string]any{"startUrl": site.URL + "/", "render": "http"}))
	_, err := runTemplate(t, NewCrawlSite(nil), env)
	e := engine.AsError(err)
	if e == nil || e.Code != engine.StepExecutionFailed || !strings.Contains(e.Message, "robots.txt answered 503") || !strings.Contains(e.Message, "respectRobots: false") {
		t.Fatalf("err %v", err)
	}
	if n := site.hitsUnder("/") - site.hitsUnder("/robots.txt"); n != 0 {
		t.Fatalf("%d page requests with robots.txt unavailable", n)
	}
	site.robotsStatus = http.StatusNotFound
	out, err := runTemplate(t, NewCrawlSite(nil), env)
	if err != nil {
		t.Fatal(err)
	}
	if got := sortedKeys(crawlResultPages(t, site.URL, resultOf(t, out))); got != "/ /linked/1 /linked/2 /secret/y" {
		t.Fatalf("pages with robots.txt 404: %s", got)
	}
}

// TestCrawlSiteCrawlDelay (issue 30, acceptance 3): robots.txt's
// Crawl-delay spaces every request to the host the crawl makes after
// reading it, sitemaps included, whatever the run's concurrency: the
// server sees their arrivals at least the delay apart (less a margin for
// the loopback's own jitter between two sends).
func TestCrawlSiteCrawlDelay(t *testing.T) {
	site := newMapSite(t)
	site.robots = "User-agent: *\nCrawl-delay: 0.4\nDisallow: /secret/\n"
	env := newEnv(t, mustJSON(t, map[string]any{"startUrl": site.URL + "/", "render": "http", "concurrency": 8, "sitemap": "include"}))
	out, err := runTemplate(t, NewCrawlSite(nil), env)
	if err != nil {
		t.Fatal(err)
	}
	res := resultOf(t, out)
	if got := sortedKeys(crawlResultPages(t, site.URL, res)); got != "/ /linked/1 /linked/2" {
		t.Fatalf("pages %s", got)
	}
	site.mu.Lock()
	defer site.mu.Unlock()
	var after []hitTime
	for _, h := range site.times {
		if h.path != "/robots.txt" {
			after = append(after, h)
		}
	}
	// The start page, /sitemap.xml (read when the start page is done:
	// robots.txt names none; 404), the two linked pages.
	if len(after) != 4 || after[0].path != "/" || after[1].path != "/sitemap.xml" {
		t.Fatalf("requests %v", after)
	}
	const margin = 30 * time.Millisecond
	for k := 1; k < len(after); k++ {
		if gap := after[k].at.Sub(after[k-1].at); gap < 400*time.Millisecond-margin {
			t.Fatalf("%s came %s after %s; Crawl-delay is 400ms", after[k].path, gap, after[k-1].path)
		}
	}
	sites := res["robots"].(map[string]any)["sites"].([]any)
	if len(sites) != 1 || sites[0].(map[string]any)["crawlDelayMs"] != 400.0 {
		t.Fatalf("robots sites %v", sites)
	}
}
