// Package fuzzseed gathers the seed corpus of the fuzz targets: the pages
// the fixture server serves (as bytes on the wire, with their Content-Type,
// so legacy encodings stay encoded), the pages under testdata/ and, when
// the machine has them, a few real HTML pages of Debian's documentation
// under /usr/share/doc. A fuzzer mutating real markup reaches far more of
// a parser than one starting from nothing, and the targets also run these
// seeds as plain tests in every `go test`.
//
// Only tests import this package (it starts a fixture server on
// 127.0.0.1 through internal/fixture).
package fuzzseed

import (
	"io"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/browsertask/browsertask/internal/fixture"
)

// Page is one seed page.
type Page struct {
	// Name says where the page comes from (a fixture path or a file).
	Name string
	// URL is the address the page was served at, or a plausible one for
	// a file, so that relative links resolve.
	URL string
	// ContentType is the Content-Type it was served with ("" for files).
	ContentType string
	// Body is the page as served: not decoded.
	Body []byte
}

// maxSeedBytes caps one seed page: the fuzzer mutates seeds in memory and
// a big seed slows every execution.
const maxSeedBytes = 96 << 10

// maxDocPages is how many /usr/share/doc pages are taken at most.
const maxDocPages = 12

// fixturePaths are the fixture server's pages worth seeding with, beside
// every charset and markup variant. Pages that hang or stream slowly are
// left out.
var fixturePaths = []string{
	"/page/1", "/page/2", "/crawl/1", "/crawl/7", "/big/1", "/big/25",
	"/products/", "/login", "/login-bare", "/login-nopass", "/form",
	"/login-otp/a", "/login-otp/c", "/mixed/1", "/mixed/2", "/assets/page/1",
	"/frame", "/jsredirect", "/image", "/shop/cart", "/human-check",
	"/h/index", "/h/broken", "/h/empty", "/h/sandbox", "/h/srcdoc",
	"/h/blank-link", "/h/dialogs", "/h/meta-refresh", "/h/huge-dom",
	"/h/escape", "/h/login-frame", "/h/nest/0",
	"/h/charset/sjis-header", "/h/charset/sjis-meta",
	"/h/charset/cp1252-header", "/h/charset/cp1252-meta",
}

// Pages returns the seed pages. Pages that cannot be had (a fixture route
// that answers an error, a missing /usr/share/doc) are left out, but a
// repository directory with none fails tb; the result is in a fixed order
// for a given machine.
func Pages(tb testing.TB) []Page {
	tb.Helper()
	var out []Page
	out = append(out, fixturePages(tb)...)
	// The repository's own page directories must be there: a package moved
	// without this list following it would otherwise drop its seeds silently.
	for _, dir := range []string{fixture.SiteDir(), filepath.Join(fixture.SiteDir(), "..", "..", "internal", "extract", "structured", "testdata")} {
		pages := filePages(dir, "http://127.0.0.1/", 0)
		if len(pages) == 0 {
			tb.Fatalf("fuzzseed: no HTML seed pages in %s; point Pages at the directory's new place", dir)
		}
		out = append(out, pages...)
	}
	out = append(out, docPages()...)
	return out
}

// fixturePages fetches the fixture server's seed pages.
func fixturePages(tb testing.TB) []Page {
	srv := fixture.New(tb)
	paths := append([]string(nil), fixturePaths...)
	for _, n := range fixture.CharsetPages() {
		paths = append(paths, "/x/charset/"+n)
	}
	for _, n := range fixture.MarkupPages() {
		paths = append(paths, "/x/markup/"+n)
	}
	client := &http.Client{Timeout: 10 * time.Second}
	var out []Page
	for _, p := range paths {
		resp, err := client.Get(srv.URL(p))
		if err != nil {
			continue
		}
		body, err := io.ReadAll(io.LimitReader(resp.Body, maxSeedBytes))
		resp.Body.Close()
		if err != nil || resp.StatusCode != http.StatusOK {
			continue
		}
		// The URL under a fixed port, so seeds do not change between runs.
		u := "http://127.0.0.1:8080" + p
		out = append(out, Page{Name: "fixture" + p, URL: u, ContentType: resp.Header.Get("Content-Type"), Body: body})
	}
	return out
}

// filePages reads the *.html and *.htm files of dir (not recursive), at
// most limit of them when limit > 0, each under maxSeedBytes.
func filePages(dir, base string, limit int) []Page {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil
	}
	var out []Page
	for _, e := range entries {
		name := e.Name()
		if e.IsDir() || !(strings.HasSuffix(name, ".html") || strings.HasSuffix(name, ".htm")) {
			continue
		}
		b, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil || len(b) > maxSeedBytes {
			continue
		}
		out = append(out, Page{Name: filepath.Join(filepath.Base(dir), name), URL: base + name, Body: b})
		if limit > 0 && len(out) >= limit {
			break
		}
	}
	return out
}

// docPages takes real pages from /usr/share/doc: the first small page of
// each directory that has one, up to maxDocPages, so the seeds span
// several generators (texinfo, gtk-doc, Sphinx, hand-written).
func docPages() []Page {
	var dirs []string
	_ = filepath.WalkDir("/usr/share/doc", func(path string, d os.DirEntry, err error) error {
		if err == nil && d.IsDir() {
			dirs = append(dirs, path)
		}
		return nil
	})
	sort.Strings(dirs)
	var out []Page
	for _, dir := range dirs {
		if len(out) >= maxDocPages {
			break
		}
		out = append(out, filePages(dir, "https://docs.example/"+filepath.Base(dir)+"/", 1)...)
	}
	return out
}

// hrefRE finds the values of href and src attributes in markup, for URL
// seeds; a regular expression is enough for seeds.
var hrefRE = regexp.MustCompile(`(?i)(?:href|src|action)\s*=\s*["']([^"']{1,300})["']`)

// URLs returns URL seeds: every href, src and action value of the seed
// pages, and a list of hand-picked hard cases of the URL Standard.
func URLs(pages []Page) []string {
	seen := map[string]bool{}
	var out []string
	add := func(s string) {
		if !seen[s] {
			seen[s] = true
			out = append(out, s)
		}
	}
	for _, s := range hardURLs {
		add(s)
	}
	for _, p := range pages {
		for _, m := range hrefRE.FindAllSubmatch(p.Body, -1) {
			add(string(m[1]))
		}
	}
	return out
}

// hardURLs are corners of URL parsing: IPv4 and IPv6 forms, percent
// escapes, IDNA, backslashes, dot segments, opaque paths, credentials,
// ports and whitespace.
var hardURLs = []string{
	"http://example.com/", "https://EXAMPLE.com:443/a/../b/./c?q=1#f",
	"http://0x7f.1/", "http://2130706433/", "http://127.1/", "http://0177.0.0.1/",
	"http://[::ffff:127.0.0.1]/", "http://[::1]:80/", "http://[64:ff9b::7f00:1]/",
	"http://%31%32%37.0.0.1/", "http://ex%41mple.com/", "http://xn--nxasmq6b.com/",
	"http://bücher.example/straße?ä=ö#ü", "http:\\\\example.com\\a\\b", "http:example.com/a",
	"//example.com/x", "/abs/path?x#y", "rel/path", "../../up", "?only=query", "#frag",
	"javascript:alert(1)", "mailto:a@b.c", "data:text/html,<p>x</p>", "file:///C:/x/../y",
	"http://user:pa%20ss@example.com:8080/p;x?a=b&c=d", "http://a.b/%2e%2E/c", "http://a.b/%zz",
	"  http://a.b/\t\n x  ", "http://a.b:65536/", "http://a.b:0/", "http://[1:2:3:4:5:6:7:8:9]/",
	"web+demo:/.//not-a-host/", "non-spec:/..//p", "sc://ñ.test/", "http://a.b/?\u0000\u001f",
	"HTTP://EXAMPLE.COM:80", "http://example.com:080/", "https://x.test/a#b#c",
}
