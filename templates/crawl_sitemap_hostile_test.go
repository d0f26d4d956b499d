package templates

import (
	"bytes"
	"compress/gzip"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/browsertask/browsertask/internal/extract/sitemap"
)

// TestCrawlSiteHostileSitemaps (issue 30, acceptance 1): over the real
// HTTP path, a sitemap that never ends (a billion URLs, streamed: read
// only until the crawl's places are filled) and a gzip bomb sent as
// Content-Encoding (a few MB inflating to 4 GiB) end the sitemap step
// cleanly: the crawl gets the URLs read before the bound and the
// result's sitemaps.warnings names the bound. The byte cap is lowered to
// 4 MiB here (50 MiB in a run; inflating 50 MiB under the race detector
// takes half a minute on a loaded machine); sitemap's TestParseZipBomb
// holds Parse to it.
func TestCrawlSiteHostileSitemaps(t *testing.T) {
	// The bomb: a url set whose one URL is followed by a comment that
	// goes on for 1024 gzip members of 4 MiB each.
	var bomb bytes.Buffer
	member := gzipOf(t, strings.Repeat(" ", 4<<20))
	for range 1024 {
		bomb.Write(member)
	}
	for _, c := range []struct {
		name    string
		serve   func(w http.ResponseWriter, base string)
		pages   int
		warning string
	}{
		{"endless", func(w http.ResponseWriter, base string) {
			w.Header().Set("Content-Type", "application/xml")
			fmt.Fprint(w, "<urlset>")
			for n := 0; n < 1e9; n++ {
				if _, err := fmt.Fprintf(w, "<url><loc>%s/p/%d</loc></url>", base, n); err != nil {
					return // the client stopped reading
				}
			}
		}, 5, "4 URLs kept, the limit"},
		{"gzip bomb", func(w http.ResponseWriter, base string) {
			w.Header().Set("Content-Type", "application/xml")
			w.Header().Set("Content-Encoding", "gzip")
			_, _ = w.Write(gzipOf(t, `<urlset><url><loc>`+base+`/p/bomb</loc></url><!--`))
			_, _ = w.Write(bomb.Bytes())
		}, 2, "larger than 4194304 bytes"},
	} {
		t.Run(c.name, func(t *testing.T) {
			var srv *httptest.Server
			srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				switch {
				case r.URL.Path == "/sitemap.xml":
					c.serve(w, srv.URL)
				case strings.HasPrefix(r.URL.Path, "/p/") || r.URL.Path == "/":
					fmt.Fprintf(w, "<title>%s</title>", r.URL.Path)
				default:
					http.NotFound(w, r)
				}
			}))
			defer srv.Close()
			env := newEnv(t, mustJSON(t, map[string]any{"startUrl": srv.URL + "/", "sitemap": "only", "render": "http", "maxPages": 5}))
			out, err := runTemplate(t, &CrawlSite{sitemapLimits: sitemap.Limits{MaxBytes: 4 << 20}}, env)
			if err != nil {
				t.Fatal(err)
			}
			res := resultOf(t, out)
			if n := len(res["pages"].([]any)); n != c.pages {
				t.Fatalf("%d pages, want %d", n, c.pages)
			}
			if w := fmt.Sprint(res["sitemaps"].(map[string]any)["warnings"]); !strings.Contains(w, c.warning) {
				t.Fatalf("warnings %s lack %q", w, c.warning)
			}
		})
	}
}

func gzipOf(t *testing.T, s string) []byte {
	t.Helper()
	var b bytes.Buffer
	z, _ := gzip.NewWriterLevel(&b, gzip.BestCompression)
	if _, err := z.Write([]byte(s)); err != nil {
		t.Fatal(err)
	}
	if err := z.Close(); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}
