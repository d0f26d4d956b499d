package templates

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/browsertask/browsertask/browser"
	"github.com/browsertask/browsertask/internal/extract/page"
	"github.com/browsertask/browsertask/internal/fixture"
)

// manyLinksSite serves a page "/" with 1500 distinct links: the first 1100
// to /skip/k, the last 400 to /p/k, each a small page.
func manyLinksSite(t *testing.T) *httptest.Server {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		if r.URL.Path != "/" {
			fmt.Fprintf(w, "<!doctype html><title>%s</title><h1>%s</h1>", r.URL.Path, r.URL.Path)
			return
		}
		var b strings.Builder
		b.WriteString("<!doctype html><title>Index</title><h1>Index</h1><ul>")
		for k := range 1500 {
			dir := "p"
			if k < 1100 {
				dir = "skip"
			}
			fmt.Fprintf(&b, `<li><a href="/%s/%d">entry %d</a>`, dir, k, k)
		}
		b.WriteString("</ul>")
		_, _ = w.Write([]byte(b.String()))
	}))
	t.Cleanup(srv.Close)
	return srv
}

// TestCrawlFrontierReadsPastTheLinksCap: the start page has 1500 links
// and only those past the 1000th lead anywhere (the others are excluded):
// the crawl follows them, and the page says what pages.json left out,
// linksCapped {found 1500, kept 1000, read 1500}, on both paths; without
// includeLinks nothing the frontier needed was cut, and no linksCapped.
// batch_extract_pages says {found 1500, kept 1000}.
func TestCrawlFrontierReadsPastTheLinksCap(t *testing.T) {
	srv := manyLinksSite(t)
	for _, render := range []string{"http", "browser"} {
		t.Run(render, func(t *testing.T) {
			var m *browser.Manager
			if render == "browser" {
				m = testManager(t)
			}
			for _, include := range []bool{true, false} {
				env := newEnv(t, mustJSON(t, map[string]any{"startUrl": srv.URL + "/", "maxPages": 50, "exclude": []string{"*/skip/*"},
					"includeLinks": include, "concurrency": 3, "render": render, "fields": map[string]string{"h": "h1"}}))
				out, err := runTemplate(t, NewCrawlSite(m), env)
				if err != nil {
					t.Fatal(err)
				}
				pages := env.pagesJSON(t)
				var got []string
				for _, p := range pages {
					got = append(got, strings.TrimPrefix(p.URL, srv.URL))
				}
				want := []string{"/"}
				for k := 1100; k < 1149; k++ {
					want = append(want, fmt.Sprintf("/p/%d", k))
				}
				if !reflect.DeepEqual(got, want) {
					t.Fatalf("includeLinks %v: crawled %v, want %v", include, got, want)
				}
				root := pages[0]
				res := resultOf(t, out)["pages"].([]any)[0].(map[string]any)
				if !include {
					if root.LinksCapped != nil || root.LinksTruncated || len(root.Links) != 0 || res["linksCapped"] != nil {
						t.Fatalf("without includeLinks: linksCapped %+v, linksTruncated %v, %d links, result %v",
							root.LinksCapped, root.LinksTruncated, len(root.Links), res["linksCapped"])
					}
					continue
				}
				if c := root.LinksCapped; c == nil || *c != (linksCap{Found: 1500, Kept: 1000, Read: 1500}) || !root.LinksTruncated || len(root.Links) != 1000 {
					t.Fatalf("start page: linksCapped %+v, linksTruncated %v, %d links", c, root.LinksTruncated, len(root.Links))
				}
				if c, _ := res["linksCapped"].(map[string]any); c["found"] != 1500.0 || c["kept"] != 1000.0 || c["read"] != 1500.0 {
					t.Fatalf("result's start page: linksCapped %v", res["linksCapped"])
				}
				if pages[1].LinksCapped != nil {
					t.Fatalf("%s: linksCapped %+v, nothing was cut", pages[1].URL, pages[1].LinksCapped)
				}
			}

			env := newEnv(t, mustJSON(t, map[string]any{"urls": []string{srv.URL + "/"}, "includeLinks": true, "render": render}))
			out, err := runTemplate(t, NewBatchExtractPages(m), env)
			if err != nil {
				t.Fatal(err)
			}
			p := env.pagesJSON(t)[0]
			if c := p.LinksCapped; c == nil || *c != (linksCap{Found: 1500, Kept: 1000}) || !p.LinksTruncated || len(p.Links) != 1000 {
				t.Fatalf("batch_extract_pages: linksCapped %+v, linksTruncated %v, %d links", c, p.LinksTruncated, len(p.Links))
			}
			if c, _ := resultOf(t, out)["pages"].([]any)[0].(map[string]any)["linksCapped"].(map[string]any); c["found"] != 1500.0 || c["kept"] != 1000.0 || c["read"] != nil {
				t.Fatalf("batch_extract_pages result: linksCapped %v", c)
			}
		})
	}
}

// TestCapsAreInTheSchemas: every cap a page's links and text are held to
// is in the schema a client reads (the input and the result schema), with
// the field that reports it.
func TestCapsAreInTheSchemas(t *testing.T) {
	for _, c := range []struct {
		tpl  string
		info func() string
		want []string
	}{
		{"batch_extract_pages", func() string {
			i := NewBatchExtractPages(nil).Info()
			return string(i.InputSchema) + string(i.ResultSchema)
		},
			[]string{fmt.Sprint(maxLinksPerPage, " distinct links"), fmt.Sprint(maxTextChars, " characters"), "linksCapped", "linksTruncated", "textTruncated", "fieldsCapped"}},
		{"crawl_site", func() string { i := NewCrawlSite(nil).Info(); return string(i.InputSchema) + string(i.ResultSchema) },
			[]string{fmt.Sprint(maxLinksPerPage, " distinct links"), fmt.Sprint(crawlLinksRead, " distinct"), fmt.Sprint(maxTextChars, " characters"), "linksCapped", "textTruncated", "fieldsCapped"}},
		{"extract_structured", func() string { return string(NewExtractStructured(nil, nil).Info().InputSchema) },
			[]string{fmt.Sprint(crawlLinksRead, " distinct")}},
	} {
		s := c.info()
		for _, w := range c.want {
			if !strings.Contains(s, w) {
				t.Errorf("%s's schema does not say %q", c.tpl, w)
			}
		}
	}
}

// TestCrawlFollowsEveryLinkOfPostgresBookIndex: the real case of issue 28
// item 6. Debian's postgresql-doc-15 bookindex.html has 1256 distinct
// links (fragments of 800 pages; 147 of them linked only past the 1000th
// link). A crawl of depth 1 from it (render http) visits every page it
// links to, those included, and the index says linksCapped {found 1256,
// kept 1000, read 1256}.
func TestCrawlFollowsEveryLinkOfPostgresBookIndex(t *testing.T) {
	dir := fixture.CorpusDir(t, fixture.CorpusPostgres)
	base := fixture.ServeCorpus(t, dir)
	start := base + "/bookindex.html"
	env := newEnv(t, mustJSON(t, map[string]any{"startUrl": start, "maxPages": 1000, "maxDepth": 1,
		"render": "http", "includeLinks": true, "concurrency": 4}))
	if _, err := runTemplate(t, NewCrawlSite(nil), env); err != nil {
		t.Fatal(err)
	}
	raw, err := os.ReadFile(filepath.Join(dir, "bookindex.html"))
	if err != nil {
		t.Fatal(err)
	}
	d, err := page.ParseString(string(raw), start)
	if err != nil {
		t.Fatal(err)
	}
	links, found := d.CountedLinks(crawlLinksRead)
	want := map[string]bool{}
	for _, u := range append([]string{normalizeLink(start)}, linkTargets(links)...) {
		if strings.HasPrefix(u, base+"/") {
			want[u] = true
		}
	}
	pages := env.pagesJSON(t)
	got := map[string]bool{}
	for _, p := range pages {
		got[p.URL] = true
	}
	late := base + "/sql-prepare-transaction.html"
	if found != 1256 || !reflect.DeepEqual(got, want) || !got[late] {
		t.Fatalf("index with %d distinct links: crawled %d pages, want %d (%s among them: %v)", found, len(got), len(want), late, got[late])
	}
	if c := pages[0].LinksCapped; c == nil || *c != (linksCap{Found: 1256, Kept: 1000, Read: 1256}) {
		t.Fatalf("bookindex.html: linksCapped %+v", c)
	}
	t.Logf("bookindex.html: %d distinct links, %d pages crawled", found, len(got))
}
