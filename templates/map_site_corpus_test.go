//go:build corpora

package templates

import (
	"net/url"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"golang.org/x/net/html"

	"github.com/browsertask/browsertask/internal/fixture"
)

// TestCorpusMapSite (issue 30, acceptance 2): map_site on python3-doc
// served on loopback lists exactly the URLs reachable by links from
// index.html, computed here by a breadth-first walk over the files on
// disk (every <a href>, resolved against the page, fragment dropped, same
// origin; an HTML file's links followed, other targets listed only). It
// logs URLs/s.
func TestCorpusMapSite(t *testing.T) {
	dir := fixture.CorpusDir(t, fixture.CorpusPython)
	root, err := filepath.EvalSymlinks(dir)
	if err != nil {
		t.Fatal(err)
	}
	base := fixture.ServeCorpus(t, dir)
	want := reachableFiles(t, root, base, base+"/index.html")

	env := newEnv(t, mustJSON(t, map[string]any{"startUrl": base + "/index.html", "maxPages": 5000, "maxDepth": 100}))
	env.profile.MaxURLs = 5000
	began := time.Now()
	out, err := runTemplate(t, NewMapSite(nil), env)
	if err != nil {
		t.Fatal(err)
	}
	took := time.Since(began)
	_, all := decodeMap(t, out, env)
	got := map[string]bool{}
	for _, u := range all {
		got[u.URL] = true
	}
	var diff []string
	for u := range want {
		if !got[u] {
			diff = append(diff, "not listed: "+u)
		}
	}
	for u := range got {
		if !want[u] {
			diff = append(diff, "not reachable: "+u)
		}
	}
	sort.Strings(diff)
	if len(diff) > 0 {
		t.Fatalf("%d URLs listed, %d reachable; %d differ (first 10): %q", len(got), len(want), len(diff), diff[:min(10, len(diff))])
	}
	t.Logf("map_site on python3-doc: %d URLs in %s (%.0f URLs/s)", len(all), took.Round(time.Millisecond), float64(len(all))/took.Seconds())
}

// reachableFiles walks the corpus's files breadth first from start as a
// link-following crawler would and returns every URL it reaches.
func reachableFiles(t *testing.T, root, base, start string) map[string]bool {
	t.Helper()
	seen := map[string]bool{start: true}
	queue := []string{start}
	for len(queue) > 0 {
		u := queue[0]
		queue = queue[1:]
		file := filepath.Join(root, filepath.FromSlash(path.Clean("/"+strings.TrimPrefix(mustURL(t, u).Path, "/"))))
		if strings.HasSuffix(u, "/") {
			file = filepath.Join(file, "index.html")
		}
		if !strings.HasSuffix(file, ".html") {
			continue
		}
		f, err := os.Open(file)
		if err != nil {
			continue // a broken link: listed, its fetch fails
		}
		doc, err := html.Parse(f)
		f.Close()
		if err != nil {
			t.Fatal(err)
		}
		var walk func(n *html.Node)
		walk = func(n *html.Node) {
			if n.Type == html.ElementNode && n.Data == "a" {
				for _, a := range n.Attr {
					if a.Key != "href" {
						continue
					}
					ref, err := mustURL(t, u).Parse(strings.TrimSpace(a.Val))
					if err != nil || (ref.Scheme != "http" && ref.Scheme != "https") {
						continue
					}
					ref.Fragment, ref.RawFragment = "", ""
					s := ref.String()
					if strings.HasPrefix(s, base+"/") && !seen[s] {
						seen[s] = true
						queue = append(queue, s)
					}
				}
			}
			for c := n.FirstChild; c != nil; c = c.NextSibling {
				walk(c)
			}
		}
		walk(doc)
	}
	return seen
}

func mustURL(t *testing.T, s string) *url.URL {
	t.Helper()
	u, err := url.Parse(s)
	if err != nil {
		t.Fatal(err)
	}
	return u
}
