package templates

import (
	"context"
	"sort"
	"strings"

	"github.com/browsertask/browsertask/browser"
	"github.com/browsertask/browsertask/engine"
	"github.com/browsertask/browsertask/internal/extract/fetch"
	"github.com/browsertask/browsertask/internal/extract/page"
	"github.com/browsertask/browsertask/internal/extract/sitemap"
)

// mapURL is one URL of map_site's result and of urls.json.
type mapURL struct {
	URL        string `json:"url"`
	Title      string `json:"title,omitempty"`
	Lastmod    string `json:"lastmod,omitempty"`
	Depth      int    `json:"depth"`
	Source     string `json:"source"`
	HTTPStatus int    `json:"httpStatus,omitempty"`
	Score      int    `json:"score,omitempty"`
	Error      string `json:"error,omitempty"`
}

// Run maps the site: crawl_site's frontier and discovery with every page
// fetched over HTTP for its title and links (none fetched but the start
// with sitemap "only"), one checkpoint per URL. Errors:
// STEP_EXECUTION_FAILED (every fetch failed), EXECUTION_ERROR, ctx's
// cause.
func (t *MapSite) Run(ctx context.Context, env engine.Env) (*engine.Outcome, error) {
	in, err := parseMapInputs(env.Inputs())
	if err != nil {
		return nil, err
	}
	start := normalizeLink(in.StartURL)
	if start == "" {
		start = in.StartURL
	}
	pol := urlPolicy(t.b, env.Profile())
	filter := newCrawlFilter(&in.crawlScope, start, pol)
	f, err := fetch.New(fetch.Options{Policy: pol, Timeout: timeoutDur(in.PerPageTimeoutMs), UserAgent: env.Profile().UserAgent})
	if err != nil {
		return nil, engine.Wrap(engine.ExecutionError, err, "HTTP client: %v", err)
	}
	defer f.Close()

	r := &crawlRun{in: &crawlInputs{crawlScope: in.crawlScope, crawlDiscovery: in.crawlDiscovery}}
	r.pool = &urlPool{env: env, indexByDone: true, slim: true, growing: true, noTab: true, finished: r.finished}
	r.front = newCrawlFrontier(r.pool, in.MaxPages, *in.MaxDepth, filter.follow)
	r.pool.feed = r.front.next
	only := in.Sitemap == sitemapOnly
	r.pool.work = func(ctx context.Context, _ *browser.Tab, i int, url string) (pageDone, error) {
		if only && i > 0 {
			// Listed from the sitemap: nothing to read on the page.
			return pageDone{out: &pageOut{URL: url, Fields: map[string]any{}}}, nil
		}
		out := mapRead(ctx, f, url)
		return pageDone{out: out, failure: out.Error}, nil
	}
	if r.find, err = newCrawlFinder(ctx, &in.crawlDiscovery, pol, sitemap.Limits{}, nil, wire{userAgent: env.Profile().UserAgent}); err != nil {
		return nil, err
	}
	defer r.find.close()
	if err := r.find.checkStart(start); err != nil {
		return nil, err
	}
	r.find.attach(ctx, r.front, r.pool, start)

	r.front.rebuild(start, env.FinishedItems())
	env.SetProgress(r.pool.progress())
	if r.front.queued() > 0 {
		if err := r.pool.run(ctx, in.Concurrency); err != nil {
			return nil, err
		}
	}
	if ctx.Err() != nil {
		return nil, context.Cause(ctx)
	}
	r.pool.mu.Lock()
	r.pool.growing = false
	r.pool.mu.Unlock()
	env.SetProgress(r.pool.progress())
	return mapFinish(ctx, env, r, in.Search)
}

// mapRead fetches one URL for the map: its status, final URL, and for
// HTML its title and links, parsed without style sheets or extraction
// (a map needs no visible text). A URL that is not HTML is listed like
// any other; a network failure or an error status is the URL's error.
func mapRead(ctx context.Context, f *fetch.Fetcher, url string) *pageOut {
	out := &pageOut{URL: url, Fields: map[string]any{}, RenderedBy: renderHTTP}
	pg, err := f.Fetch(ctx, url)
	if err != nil {
		if ctx.Err() == nil {
			out.Error = engine.AsError(err)
		}
		return out
	}
	out.HTTPStatus, out.FinalURL = pg.Status, pg.URL
	if pg.Status >= 400 {
		out.Error = engine.Errorf(engine.StepExecutionFailed, "%s answered HTTP %d %s", url, pg.Status, pg.StatusText).
			WithDetails(map[string]any{"url": url, "httpStatus": pg.Status})
	}
	if !pg.IsHTML() {
		return out
	}
	doc, err := page.ParseString(pg.Body, pg.URL)
	if err != nil {
		if out.Error == nil {
			out.Error = parseFailure(url, err, adviceBrowser)
		}
		return out
	}
	out.Title = doc.Title()
	out.Links, out.linksFound = doc.CountedLinks(crawlLinksRead)
	return out
}

// mapFinish writes urls.json and the result from the pages in memory
// (their slim outputs), in breadth-first order or ranked by search.
func mapFinish(ctx context.Context, env engine.Env, r *crawlRun, search string) (*engine.Outcome, error) {
	var tally pageTally
	var list []mapURL
	words := strings.Fields(strings.ToLower(search))
	for _, i := range r.front.order() {
		p := r.page(i)
		tally.count(p.Error, map[string]any{"url": p.URL})
		u := mapURL{URL: p.URL, Title: p.Title, Lastmod: p.Lastmod, Depth: p.Depth, Source: p.Source, HTTPStatus: p.HTTPStatus}
		if p.Error != nil {
			u.Error = string(p.Error.Code) + ": " + p.Error.Message
		}
		if len(words) > 0 {
			if u.Score = mapScore(words, u.URL, u.Title); u.Score == 0 {
				continue
			}
		}
		list = append(list, u)
	}
	if len(words) > 0 {
		sort.SliceStable(list, func(a, b int) bool { return list[a].Score > list[b].Score })
	}
	res := struct {
		Summary       batchSummary `json:"summary"`
		URLs          []mapURL     `json:"urls"`
		URLsTruncated bool         `json:"urlsTruncated,omitempty"`
		ArtifactID    string       `json:"artifactId"`
		discoveryResult
	}{Summary: tally.batchSummary, URLs: list, discoveryResult: r.find.report(r.front)}
	if res.URLs == nil {
		res.URLs = []mapURL{}
	}
	if len(res.URLs) > maxMapInline {
		res.URLs, res.URLsTruncated = res.URLs[:maxMapInline], true
	}
	id, err := streamPages(ctx, env, "urls.json", func(add func(any) error) error {
		for k := range list {
			if err := add(&list[k]); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	res.ArtifactID = id
	return tally.outcome(res, map[string]any{"artifactId": id})
}

// mapScore ranks a URL for search words (lower case): 2 for each word in
// its title, 1 for each word in its path (and query), case-insensitive; 0
// = no match.
func mapScore(words []string, rawURL, title string) int {
	path := strings.ToLower(rawURL)
	if i := strings.Index(path, "://"); i >= 0 {
		if j := strings.IndexByte(path[i+3:], '/'); j >= 0 {
			path = path[i+3+j:]
		} else {
			path = ""
		}
	}
	title = strings.ToLower(title)
	score := 0
	for _, w := range words {
		if strings.Contains(title, w) {
			score += 2
		}
		if strings.Contains(path, w) {
			score++
		}
	}
	return score
}
