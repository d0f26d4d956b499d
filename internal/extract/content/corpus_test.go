//go:build corpora

package content

import (
	"bytes"
	"context"
	"net/url"
	"os"
	"path/filepath"
	"runtime"
	"sort"
	"strings"
	"sync"
	"testing"
	"unicode"

	"golang.org/x/net/html"
	"golang.org/x/sync/errgroup"

	"github.com/browsertask/browsertask/engine"
	"github.com/browsertask/browsertask/internal/extract/fetch"
	"github.com/browsertask/browsertask/internal/fixture"
)

// TestCorpusMarkdownSizeAndNoScripts is acceptance 3 over the 945 pages of
// go-trafilatura's comparison set, each fetched on loopback through the
// HTTP path (fetch decodes it to UTF-8) and extracted: the median of
// Markdown bytes / raw HTML bytes is at most 1/10, and no page's Markdown
// holds a line of one of its <script> or <style> bodies (the page's own
// code text is searched for, not only the tags). JSON-LD and other data
// scripts are not code: go-trafilatura may take an article's text from
// JSON-LD's articleBody, and that text is content.
func TestCorpusMarkdownSizeAndNoScripts(t *testing.T) {
	dir := fixture.CorpusDir(t, fixture.CorpusTrafilatura)
	pages, err := fixture.CorpusPages(dir)
	if err != nil {
		t.Fatal(err)
	}
	base := fixture.ServeCorpus(t, dir)
	f, err := fetch.New(fetch.Options{Policy: engine.URLPolicy{TrustLevel: "local"}})
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	// Pages are read GOMAXPROCS at a time: each is independent, and
	// serially the 945 took 246 s on a loaded 2-core machine.
	var mu sync.Mutex
	ratios := make([]float64, 0, len(pages))
	failed := 0
	var g errgroup.Group
	g.SetLimit(runtime.GOMAXPROCS(0))
	for _, p := range pages {
		g.Go(func() error {
			ratio, ok := checkCorpusPage(t, f, dir, base, p)
			mu.Lock()
			defer mu.Unlock()
			ratios = append(ratios, ratio)
			if !ok {
				failed++
			}
			return nil
		})
	}
	_ = g.Wait()
	sort.Float64s(ratios)
	med := ratios[len(ratios)/2]
	p90 := ratios[len(ratios)*9/10]
	t.Logf("%d pages (%d without main content): Markdown/raw HTML bytes median %.3f, p90 %.3f", len(pages), failed, med, p90)
	if len(pages) != 945 {
		t.Errorf("%d pages, want the comparison set's 945", len(pages))
	}
	if med > 0.1 {
		t.Errorf("median Markdown/raw HTML = %.3f, want ≤ 0.1", med)
	}
}

// checkCorpusPage fetches page p of dir from base, extracts it and checks
// its Markdown holds no script or style; it returns Markdown bytes / raw
// HTML bytes (0 for a page without main content, ok false).
func checkCorpusPage(t *testing.T, f *fetch.Fetcher, dir, base, p string) (ratio float64, ok bool) {
	raw, err := os.ReadFile(filepath.Join(dir, filepath.FromSlash(p)))
	if err != nil {
		t.Error(err)
		return 0, false
	}
	pg, err := f.Fetch(context.Background(), base+"/"+(&url.URL{Path: p}).EscapedPath())
	if err != nil {
		t.Errorf("%s: %v", p, err)
		return 0, false
	}
	res, err := Extract([]byte(pg.Body), Options{PageURL: pg.URL})
	if err != nil {
		return 0, false // no Markdown at all
	}
	for _, line := range codeLines(pg.Body) {
		if strings.Contains(res.Markdown, line) {
			t.Errorf("%s: the Markdown holds a script or style line: %q", p, line)
		}
	}
	low := strings.ToLower(res.Markdown)
	if strings.Contains(low, "<script") || strings.Contains(low, "<style") {
		t.Errorf("%s: the Markdown holds a script or style tag", p)
	}
	return float64(len(res.Markdown)) / float64(len(raw)), true
}

// codeLines are the lines of at least 40 characters (trimmed) of the
// page's <style> bodies and of its scripts that run (no type, or a
// JavaScript type), leaving out lines without a letter or digit: a
// comment's rule of dashes is also a Markdown table's separator row
// (derpapierplanet.de.juni.html), and says nothing about code leaking.
func codeLines(body string) []string {
	doc, err := html.Parse(bytes.NewReader([]byte(body)))
	if err != nil {
		return nil // a page the parser refuses gives no Markdown either
	}
	var out []string
	var walk func(*html.Node)
	walk = func(n *html.Node) {
		if n.Type == html.ElementNode && n.FirstChild != nil && (n.Data == "style" || n.Data == "script" && runs(n)) {
			for _, l := range strings.Split(textOf(n.FirstChild), "\n") {
				if l = strings.TrimSpace(l); len(l) >= 40 && strings.IndexFunc(l, isWordRune) >= 0 {
					out = append(out, l)
				}
			}
		}
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			walk(c)
		}
	}
	walk(doc)
	return out
}

// isWordRune reports whether r is a letter or a digit.
func isWordRune(r rune) bool { return unicode.IsLetter(r) || unicode.IsDigit(r) }

// runs reports whether a <script> holds JavaScript.
func runs(n *html.Node) bool {
	typ, _ := attr(n, "type")
	typ = strings.ToLower(strings.TrimSpace(typ))
	return typ == "" || strings.Contains(typ, "javascript") || typ == "module"
}
