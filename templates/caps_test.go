package templates

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/browsertask/browsertask/internal/extract/page"
)

// hostileCapsServer serves issue 26's pages on loopback: /nested (300
// nested <div>s around 1 MiB of text) and /links (1500 distinct links).
func hostileCapsServer(t *testing.T) *httptest.Server {
	t.Helper()
	mux := http.NewServeMux()
	mux.HandleFunc("GET /nested", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		fmt.Fprint(w, "<!doctype html><title>nested</title><body>"+strings.Repeat("<div>", 300)+
			strings.Repeat("abcdefgh", 1<<17)+strings.Repeat("</div>", 300)+"</body>")
	})
	mux.HandleFunc("GET /links", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		var b strings.Builder
		b.WriteString("<!doctype html><title>links</title><body>")
		for i := range 1500 {
			fmt.Fprintf(&b, `<a href="/l/%d">link %d</a> `, i, i)
		}
		fmt.Fprint(w, b.String())
	})
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	return srv
}

// TestFieldAndLinkCapsBothPaths: issue 26 items 2 and 3 on both paths.
// `all` over the nested page keeps 2 values of 20000 characters and
// reports {matches 300, kept 2, cut 2} in the page and in the result;
// pages.json stays under 200 KB (it was 314 MB with 300 values of the
// text below each div); the link page gives 1000 links and
// linksTruncated. The browser script and package page agree exactly.
func TestFieldAndLinkCapsBothPaths(t *testing.T) {
	srv := hostileCapsServer(t)
	for _, render := range []string{"browser", "http"} {
		t.Run(render, func(t *testing.T) {
			env := newEnv(t, mustJSON(t, map[string]any{"urls": []string{srv.URL + "/nested", srv.URL + "/links"},
				"render": render, "includeText": false, "includeLinks": true, "concurrency": 1,
				"fields": map[string]any{"d": map[string]any{"selector": "div", "all": true}}}))
			out, err := runBatch(t, env)
			if err != nil {
				t.Fatal(err)
			}
			want := page.FieldCap{Matches: 300, Kept: 2, Cut: 2}
			res := out.Result.(batchResult)
			if got := res.Pages[0].FieldsCapped["d"]; got != want {
				t.Fatalf("result pages[0].fieldsCapped.d = %+v, want %+v", got, want)
			}
			raw, _ := env.artifact("pages.json")
			if len(raw) > 200_000 {
				t.Fatalf("pages.json is %d bytes", len(raw))
			}
			pages := env.pagesJSON(t)
			vals, _ := pages[0].Fields["d"].([]any)
			if len(vals) != 2 || len(vals[0].(string)) != page.DefaultMaxValueChars || pages[0].FieldsCapped["d"] != want {
				t.Fatalf("pages.json[0]: %d values, capped %+v", len(vals), pages[0].FieldsCapped)
			}
			if p := pages[1]; len(p.Links) != maxLinksPerPage || !p.LinksTruncated || p.Links[999].Href != srv.URL+"/l/999" {
				t.Fatalf("pages.json[1]: %d links, linksTruncated %v", len(p.Links), p.LinksTruncated)
			}
			if pages[1].FieldsCapped != nil || pages[0].LinksTruncated {
				t.Fatalf("caps reported where nothing was cut: %+v %v", pages[1].FieldsCapped, pages[0].LinksTruncated)
			}
		})
	}
}

// TestCrawlLinksCappedAndReported: issue 26 item 3 on a crawl
// (includeLinks, render http) of pages with 1500 distinct links each:
// pages.json holds 1000 links per page with linksTruncated (before, the
// cut was silent), and the run's result holds no links at all.
func TestCrawlLinksCappedAndReported(t *testing.T) {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /farm/{n}", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		var b strings.Builder
		fmt.Fprintf(&b, "<!doctype html><title>farm %s</title><body>", r.PathValue("n"))
		for i := range 1500 {
			fmt.Fprintf(&b, `<a href="/farm/%s-%d">x</a>`, r.PathValue("n"), i)
		}
		fmt.Fprint(w, b.String())
	})
	srv := httptest.NewServer(mux)
	defer srv.Close()
	env := newEnv(t, mustJSON(t, map[string]any{"startUrl": srv.URL + "/farm/0", "maxPages": 12, "render": "http",
		"includeLinks": true, "includeText": true}))
	out, err := runTemplate(t, NewCrawlSite(nil), env)
	if err != nil {
		t.Fatal(err)
	}
	pages := env.pagesJSON(t)
	if len(pages) != 12 {
		t.Fatalf("%d pages", len(pages))
	}
	for _, p := range pages {
		if len(p.Links) != maxLinksPerPage || !p.LinksTruncated || p.Text == nil {
			t.Fatalf("%s: %d links, linksTruncated %v", p.URL, len(p.Links), p.LinksTruncated)
		}
	}
	if raw, _ := json.Marshal(out.Result); strings.Contains(string(raw), `"links"`) || len(raw) > 20_000 {
		t.Fatalf("result of %d bytes holds links", len(raw))
	}
}
