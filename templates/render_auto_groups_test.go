package templates

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
)

// groupSite is a small loopback site in three sections, for
// TestRenderAutoGroupsOnEvidence: at the root an index, a search page
// with a <noscript> (as Sphinx writes it) and an about page; /library/
// pages whose headings carry a "¶" their stylesheet hides; /app/ pages
// whose h2 a script writes. Any other path answers 404. It counts the
// requests per path.
type groupSite struct {
	srv  *httptest.Server
	mu   sync.Mutex
	hits map[string]int
}

func newGroupSite(t *testing.T) *groupSite {
	s := &groupSite{hits: map[string]int{}}
	s.srv = httptest.NewServer(http.HandlerFunc(s.serve))
	t.Cleanup(s.srv.Close)
	return s
}

func (s *groupSite) serve(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	s.hits[r.URL.Path]++
	s.mu.Unlock()
	const text = `<p>A paragraph of server-rendered text, long enough that nobody takes this page for an empty shell.</p>`
	var body string
	switch p := r.URL.Path; {
	case p == "/index.html" || p == "/about.html":
		body = `<h1>Site</h1>` + text + `<h2>Part</h2>`
	case p == "/search.html":
		body = `<h1>Search</h1><noscript><div>Please activate JavaScript to enable the search functionality.</div></noscript>` + text
	case strings.HasPrefix(p, "/library/"):
		body = `<style>a.headerlink { visibility: hidden }</style><h1>Module<a class="headerlink" href="#m">¶</a></h1>` + text +
			`<h2>Functions<a class="headerlink" href="#f">¶</a></h2>`
	case strings.HasPrefix(p, "/app/"):
		body = `<h1>App</h1>` + text + `<div id="out"></div><script>document.getElementById('out').innerHTML = '<h2>Filled by a script</h2>';</script>`
	default:
		http.NotFound(w, r)
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	fmt.Fprintf(w, "<!doctype html><html><head><title>%s</title></head><body>%s</body></html>", r.URL.Path, body)
}

func (s *groupSite) hitsOf(path string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.hits[path]
}

// TestRenderAutoGroupsOnEvidence: render "auto" decides per group (host
// and first path directory) on evidence, one page at a time in URL order:
// the search page's <noscript> sends that page alone to the browser (the
// root group stays over HTTP); a 404 is served over HTTP with its error
// and does not vote; /library/, the host's second group, needs one first
// sample, whose hidden "¶" is at most a text rule (it switches nothing);
// /app/'s first page shows an h2 only a script writes, so /app/ switches
// with a reason naming the group, the page and the field, and its next
// page goes to the browser without an HTTP fetch.
func TestRenderAutoGroupsOnEvidence(t *testing.T) {
	site := newGroupSite(t)
	paths := []string{"/index.html", "/search.html", "/about.html", "/missing.html",
		"/library/1.html", "/library/2.html", "/library/3.html", "/app/1.html", "/app/2.html"}
	urls := make([]string, len(paths))
	for i, p := range paths {
		urls[i] = site.srv.URL + p
	}
	env := newEnv(t, mustJSON(t, map[string]any{"urls": urls, "render": "auto", "concurrency": 1,
		"fields": map[string]any{"h1": "h1", "h2s": map[string]any{"selector": "h2", "all": true}}}))
	out, err := runBatch(t, env)
	if err != nil {
		t.Fatal(err)
	}
	appReason := reasonGroup + "/app/" + reasonNeedsJS + "/app/1.html: fields differ (h2s)"
	want := []struct {
		by, reason string
		hits       int // requests: 2 for a page read both ways
	}{
		{"browser", reasonSample, 2},
		{"browser", reasonShell + "noscript asks for JavaScript", 2},
		{"http", "", 1},
		{"http", "", 1},
		{"browser", "sample*", 2},
		{"http", "", 1},
		{"http", "", 1},
		{"browser", appReason, 2},
		{"browser", appReason, 1},
	}
	pages := out.Result.(batchResult).Pages
	if len(pages) != len(want) {
		t.Fatalf("%d pages, want %d", len(pages), len(want))
	}
	for i, w := range want {
		p := pages[i]
		reasonOK := p.RenderReason == w.reason
		if w.reason == "sample*" {
			// The hidden "¶": equal once the HTTP path reads the page's
			// stylesheet, a text rule until then; never a switch.
			reasonOK = p.RenderReason == reasonSample || p.RenderReason == reasonTextRule+"h1, h2s)"
		}
		if p.RenderedBy != w.by || !reasonOK || site.hitsOf(paths[i]) != w.hits {
			t.Errorf("%s: renderedBy %q, renderReason %q, %d requests; want %q, %q, %d",
				paths[i], p.RenderedBy, p.RenderReason, site.hitsOf(paths[i]), w.by, w.reason, w.hits)
		}
	}
	if e := pages[3].Error; e == nil || fmt.Sprint(e.Details["httpStatus"]) != "404" || pages[3].HTTPStatus != 404 {
		t.Errorf("/missing.html: error %v, want its 404", e)
	}
	if got := pages[7].Fields["h2s"]; fmt.Sprint(got) != "[Filled by a script]" {
		t.Errorf("/app/1.html reports h2s %v, want the browser's", got)
	}
}
