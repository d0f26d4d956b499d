package sitemap

import (
	"bytes"
	"compress/gzip"
	"context"
	"fmt"
	"io"
	"strings"
	"sync"
	"testing"
)

// memSource serves sitemap files from a map and counts the fetches.
type memSource struct {
	mu      sync.Mutex
	files   map[string]string
	fetched []string
}

func (m *memSource) Sitemap(_ context.Context, url string, maxBytes int64, read func(int, io.Reader) error) error {
	m.mu.Lock()
	m.fetched = append(m.fetched, url)
	body, ok := m.files[url]
	m.mu.Unlock()
	if !ok {
		return read(404, strings.NewReader("not found"))
	}
	return read(200, io.LimitReader(strings.NewReader(body), maxBytes+1))
}

func urlset(urls ...string) string {
	var b strings.Builder
	b.WriteString(`<?xml version="1.0" encoding="UTF-8"?>` + "\n" + `<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">`)
	for i, u := range urls {
		fmt.Fprintf(&b, "<url><loc> %s </loc><lastmod>2024-01-%02d</lastmod></url>\n", u, i%28+1)
	}
	return b.String() + "</urlset>"
}

func index(children ...string) string {
	var b strings.Builder
	b.WriteString(`<sitemapindex xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">`)
	for _, c := range children {
		fmt.Fprintf(&b, "<sitemap><loc>%s</loc></sitemap>", c)
	}
	return b.String() + "</sitemapindex>"
}

func gz(t testing.TB, s string) string {
	t.Helper()
	var b bytes.Buffer
	w := gzip.NewWriter(&b)
	if _, err := w.Write([]byte(s)); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return b.String()
}

func urls(res *Result) []string {
	out := make([]string, len(res.Entries))
	for i, e := range res.Entries {
		out[i] = e.URL
	}
	return out
}

// TestDiscoverIndexGzipTextAndLastmod: an index naming an XML url set, a
// gzip one (by its bytes, whatever its name) and a text sitemap gives
// every URL once, in order, with the url set's lastmod; keep filters.
func TestDiscoverIndexGzipTextAndLastmod(t *testing.T) {
	const h = "http://s.test"
	src := &memSource{files: map[string]string{
		h + "/robots-named.xml": index(h+"/a.xml", h+"/b.xml.gz", "/relative-ignored.xml", h+"/c.txt"),
		h + "/a.xml":            urlset(h+"/p1", h+"/p2", "ftp://x/skip", "http://other.test/out"),
		h + "/b.xml.gz":         gz(t, urlset(h+"/p3", h+"/p1")),
		h + "/c.txt":            "\ufeff" + h + "/p4\n\n  " + h + "/p5  \r\nmailto:x@y\n",
	}}
	res, err := Discover(context.Background(), src, []Root{{URL: h + "/robots-named.xml"}, {URL: h + "/sitemap.xml", Guessed: true}}, Limits{},
		func(u string) bool { return strings.HasPrefix(u, h+"/") })
	if err != nil {
		t.Fatal(err)
	}
	got := strings.Join(urls(res), " ")
	want := strings.Join([]string{h + "/p1", h + "/p2", h + "/p3", h + "/p4", h + "/p5"}, " ")
	if got != want {
		t.Fatalf("urls\n got %s\nwant %s", got, want)
	}
	if res.Entries[0].Lastmod != "2024-01-01" || res.Entries[1].Lastmod != "2024-01-02" || res.Entries[3].Lastmod != "" {
		t.Fatalf("lastmods: %+v", res.Entries)
	}
	// robots-named, sitemap.xml (404, guessed: no warning), a, b, c.
	if res.Files != 5 || len(res.Warnings) != 0 || res.Listed != 7 {
		t.Fatalf("files %d listed %d warnings %q", res.Files, res.Listed, res.Warnings)
	}
}

// TestDiscoverHostile: each hostile sitemap ends with its warning and
// what was read before it.
func TestDiscoverHostile(t *testing.T) {
	const h = "http://s.test"
	many := make([]string, 60000)
	for i := range many {
		many[i] = fmt.Sprintf("%s/m%d", h, i)
	}
	cases := []struct {
		name   string
		files  map[string]string
		lim    Limits
		want   int    // URLs kept
		warn   string // in a warning
		nFiles int    // files fetched
	}{
		{"more URLs than a file may list", map[string]string{h + "/s.xml": urlset(many...)}, Limits{}, 50000, "lists more than 50000 URLs", 1},
		{"more URLs than the run keeps", map[string]string{h + "/s.xml": urlset(many[:300]...)}, Limits{MaxURLs: 100}, 100, "100 URLs kept, the limit", 1},
		{"a loop of indexes", map[string]string{h + "/s.xml": index(h+"/i1.xml", h+"/u.xml"), h + "/i1.xml": index(h+"/s.xml", h+"/i1.xml"), h + "/u.xml": urlset(h + "/u")},
			Limits{}, 1, "names " + h + "/s.xml again (a loop", 3},
		{"indexes nested too deep", map[string]string{h + "/s.xml": index(h + "/d2"), h + "/d2": index(h + "/d3"), h + "/d3": index(h + "/d4"), h + "/d4": urlset(h + "/deep")},
			Limits{MaxDepth: 3}, 0, "nested deeper than 3", 3},
		{"too many files", map[string]string{h + "/s.xml": index(h+"/1", h+"/2", h+"/3"), h + "/1": urlset(h + "/x1"), h + "/2": urlset(h + "/x2"), h + "/3": urlset(h + "/x3")},
			Limits{MaxFiles: 3}, 2, "3 sitemap files read, the limit", 3},
		{"malformed XML keeps what came before", map[string]string{h + "/s.xml": strings.TrimSuffix(urlset(h+"/ok1", h+"/ok2"), "</urlset>") + "<url><loc>" + h + "/bad</lo"}, Limits{}, 2, "XML", 1},
		{"not a sitemap", map[string]string{h + "/s.xml": "<html><body>hi</body></html>"}, Limits{}, 0, "no <urlset> or <sitemapindex>", 1},
		{"a body past the byte cap", map[string]string{h + "/s.xml": urlset(many[:2000]...)}, Limits{MaxBytes: 10000}, 0, "larger than 10000 bytes", 1},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			src := &memSource{files: c.files}
			res, err := Discover(context.Background(), src, []Root{{URL: h + "/s.xml"}}, c.lim, nil)
			if err != nil {
				t.Fatal(err)
			}
			if len(res.Entries) < c.want || (c.want > 0 && len(res.Entries) != c.want) || res.Files != c.nFiles {
				t.Fatalf("%d URLs, %d files; want %d, %d (warnings %q)", len(res.Entries), res.Files, c.want, c.nFiles, res.Warnings)
			}
			if !strings.Contains(strings.Join(res.Warnings, "\n"), c.warn) {
				t.Fatalf("warnings %q lack %q", res.Warnings, c.warn)
			}
		})
	}
}

// TestParseZipBomb: a 4 GiB gzip bomb (about 4 MB of repeated gzip
// members) is inflated only up to the byte cap, then ErrTooLarge.
func TestParseZipBomb(t *testing.T) {
	body := bombBody(t)
	counted := &countReader{r: bytes.NewReader(body)}
	const cap = 2 << 20
	n := 0
	_, err := Parse(counted, cap, 50000, func(Kind, Entry) error { n++; return nil })
	if err != ErrTooLarge {
		t.Fatalf("err %v, want ErrTooLarge", err)
	}
	if n != 1 {
		t.Fatalf("%d entries before the filler, want 1", n)
	}
	// The compressed bytes read are those holding about the cap, far
	// from the whole file.
	if counted.n > int64(len(body))/4 {
		t.Fatalf("read %d of %d compressed bytes", counted.n, len(body))
	}
}

// bombBody is a gzip stream of 1024 members of 4 MiB each when inflated:
// a url set with one URL, then empty elements.
func bombBody(t testing.TB) []byte {
	filler := bytes.Repeat([]byte("<x/>"), 1<<20)
	head := gz(t, `<urlset><url><loc>http://s.test/one</loc></url>`)
	member := gz(t, string(filler))
	var b bytes.Buffer
	b.WriteString(head)
	for range 1024 {
		b.WriteString(member)
	}
	return b.Bytes()
}

type countReader struct {
	r interface{ Read([]byte) (int, error) }
	n int64
}

func (c *countReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n += int64(n)
	return n, err
}
