package templates

import (
	"encoding/json"
	"fmt"
	"reflect"
	"sort"
	"strings"
	"testing"

	"github.com/browsertask/browsertask/engine"
	"github.com/browsertask/browsertask/internal/extract/fetch"
	"github.com/browsertask/browsertask/internal/extract/page"
	"github.com/browsertask/browsertask/internal/fixture"
)

// equalityFields are the fields asked of every page in the equality test:
// text, attributes (resolved href/src, raw attributes, missing ones),
// innerHTML, all-lists with holes, elements that are not rendered
// (hidden, template, noscript, head), form controls and missing elements.
var equalityFields = map[string]any{
	"name":        "#name",
	"desc":        ".desc",
	"blocks":      "#blocks",
	"items":       map[string]any{"selector": ".item", "all": true},
	"itemIds":     map[string]any{"selector": ".item", "attr": "data-id", "all": true},
	"relHref":     map[string]any{"selector": "#rel", "attr": "href"},
	"absHref":     map[string]any{"selector": "#abs", "attr": "href"},
	"emptyHref":   map[string]any{"selector": "#empty", "attr": "href"},
	"noHref":      map[string]any{"selector": "#nohref", "attr": "href"},
	"imgSrc":      map[string]any{"selector": "#img", "attr": "src"},
	"noSrc":       map[string]any{"selector": "#nosrc", "attr": "src"},
	"alt":         map[string]any{"selector": "#img", "attr": "alt"},
	"upperAttr":   map[string]any{"selector": "#img", "attr": "ALT"},
	"custom":      map[string]any{"selector": "#custom", "attr": "href"},
	"dataEmpty":   map[string]any{"selector": "#custom", "attr": "data-x"},
	"html":        map[string]any{"selector": "#html", "attr": "html"},
	"inputSrc":    map[string]any{"selector": "#field", "attr": "src"},
	"inputText":   "#field",
	"inputValue":  map[string]any{"selector": "#field", "attr": "value"},
	"textarea":    "#ta",
	"select":      "#sel",
	"options":     map[string]any{"selector": "#sel option", "all": true},
	"hiddenAttr":  "#hidden-attr",
	"hiddenStyle": "#hidden-style",
	"vis":         "#vis",
	"tpl":         ".in-template",
	"tplAll":      map[string]any{"selector": "template p", "all": true},
	"noscriptP":   ".in-noscript",
	"noscript":    "#ns",
	"titleEl":     "title",
	"missing":     "#nope",
	"missingAll":  map[string]any{"selector": ".nope", "all": true},
	"metaDesc":    map[string]any{"selector": "meta[name=description]", "attr": "content"},
	"button":      "#btn",
	"formAction":  map[string]any{"selector": "#form", "attr": "action"},
	"table":       "#tbl",
	"tableHTML":   map[string]any{"selector": "#tbl", "attr": "html"},
	"pre":         "#pre",
	"paras":       map[string]any{"selector": "p", "all": true},
	"linksAll":    map[string]any{"selector": "a", "attr": "href", "all": true},
	"heading":     "h1",
	"price":       ".price",
	"text":        ".text",
	"tags":        map[string]any{"selector": ".tag", "all": true},
	"photo":       map[string]any{"selector": "#photo", "attr": "src"},
	"next":        map[string]any{"selector": "#next", "attr": "href"},
	"baseLinks":   map[string]any{"selector": "#b1, #b2, #b3, #b4", "attr": "href", "all": true},
	"baseImg":     map[string]any{"selector": "#bimg", "attr": "src"},
	"inline":      map[string]any{"selector": "#d1, #d2, #d3, #p1, #d4", "all": true},
	"inlineHTML":  map[string]any{"selector": "#d4", "attr": "html"},
	"svgHTML":     map[string]any{"selector": "#svg", "attr": "html"},
	"svgText":     "#svg",
	"svgImage":    map[string]any{"selector": "image", "attr": "href"},
	"svgXlink":    map[string]any{"selector": "image", "attr": "xlink:href"},
	"svgViewBox":  map[string]any{"selector": "svg", "attr": "viewBox"},
	"math":        "math",
	"ruby":        "ruby",
	"video":       "video",
	"object":      "object",
	"dialogs":     map[string]any{"selector": "dialog", "all": true},
	"buttons":     map[string]any{"selector": "button", "all": true},
}

// equalityURLs are the fixture pages compared: the ordinary fixture pages
// and every /x/markup and /x/charset variant.
func equalityURLs(srv *fixture.Server) []string {
	urls := []string{
		srv.URL("/static/fields.html"),
		srv.URL("/static/about.html"),
		srv.URL("/page/1"),
		srv.URL("/crawl/4"),
		srv.URL("/status/404"),
		srv.URL("/redirect?to=/page/2%3Fmax%3D2"),
	}
	for _, name := range fixture.MarkupPages() {
		urls = append(urls, srv.URL("/x/markup/"+name))
	}
	for _, name := range fixture.CharsetPages() {
		urls = append(urls, srv.URL("/x/charset/"+name))
	}
	for _, name := range fixture.CSSPages() {
		urls = append(urls, srv.URL("/x/css/"+name))
	}
	return urls
}

// TestHTTPExtractionEqualsBrowser extracts the fixture pages twice, in
// Chromium with batch_extract_pages and over HTTP with internal/extract/fetch
// and internal/extract/page, and requires the same final URL, status, title, fields,
// text, links and meta on every page.
func TestHTTPExtractionEqualsBrowser(t *testing.T) {
	srv := fixture.New(t)
	urls := equalityURLs(srv)
	env := newEnv(t, mustJSON(t, map[string]any{
		"urls": urls, "fields": equalityFields,
		"includeText": true, "includeLinks": true, "includeMeta": true, "concurrency": 4,
	}))
	if _, err := runBatch(t, env); err != nil && !strings.Contains(err.Error(), "404") {
		t.Logf("batch: %v", err)
	}
	browserPages := env.pagesJSON(t)
	if len(browserPages) != len(urls) {
		t.Fatalf("browser extracted %d pages, want %d", len(browserPages), len(urls))
	}

	fields := map[string]page.Field{}
	raw, _ := json.Marshal(equalityFields)
	var specs map[string]fieldSpec
	if err := json.Unmarshal(raw, &specs); err != nil {
		t.Fatal(err)
	}
	for name, f := range specs {
		fields[name] = page.Field(f)
	}
	opts := page.Options{Fields: fields, Text: true, Links: true, Meta: true,
		MaxText: maxTextChars, MaxLinks: maxLinksPerPage}
	f, err := fetch.New(fetch.Options{Policy: engine.URLPolicy{TrustLevel: "local"}})
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()

	mismatches := 0
	for _, bp := range browserPages {
		ctx, cancel := fixture.Context(t)
		pg, err := f.Fetch(ctx, bp.URL)
		if err != nil {
			cancel()
			t.Errorf("%s: fetch: %v", bp.URL, err)
			continue
		}
		doc, err := f.Document(ctx, pg) // the page's same-origin style sheets too
		cancel()
		if err != nil {
			t.Errorf("%s: extract: %v", bp.URL, err)
			continue
		}
		res := doc.Extract(opts)
		checkKnown(t, bp)
		for _, d := range comparePage(bp, pg, res) {
			mismatches++
			t.Errorf("%s: %s", bp.URL, d)
		}
	}
	t.Logf("%d pages compared, %d mismatches", len(browserPages), mismatches)
}

// checkKnown asserts a few known values of the browser's pages, so the
// comparison cannot pass on pages that both paths failed to read.
func checkKnown(t *testing.T, bp pageOut) {
	t.Helper()
	path := bp.URL[strings.Index(bp.URL[len("http://"):], "/")+len("http://"):]
	text := ""
	if bp.Text != nil {
		text = *bp.Text
	}
	var bad bool
	switch path {
	case "/x/markup/long":
		bad = !bp.TextTruncated || len(text) != 19999 || len(bp.Links) != maxLinksPerPage
	case "/x/markup/fields":
		bad = !reflect.DeepEqual(bp.Fields["items"], []any{"One bold", "Two", "Three"}) || bp.Meta["lang"] != "fr-CA"
	case "/x/charset/sjis-header":
		bad = bp.Title != "日本語のページ「見出し」"
	case "/x/markup/table":
		bad = !strings.HasPrefix(text, "Cap\nH1\tH2\na\tb\n")
	case "/page/1":
		bad = bp.Fields["name"] != "Item 1" || bp.Meta["description"] != "Description of page 1"
	}
	if bad {
		t.Errorf("%s: the browser's page is not the expected one (truncated %v, %d text bytes, %d links): %s", bp.URL, bp.TextTruncated, len(text), len(bp.Links), show(bp))
	}
}

// comparePage lists the differences between the browser's page and the
// HTTP path's.
func comparePage(bp pageOut, pg *fetch.Page, res *page.Result) []string {
	var diffs []string
	add := func(what string, b, h any) {
		diffs = append(diffs, fmt.Sprintf("%s differs:\n  browser: %s\n  http:    %s", what, show(b), show(h)))
	}
	if bp.FinalURL != res.URL || pg.URL != res.URL {
		add("finalUrl", bp.FinalURL, res.URL+" (fetched "+pg.URL+")")
	}
	if bp.HTTPStatus != pg.Status {
		add("httpStatus", bp.HTTPStatus, pg.Status)
	}
	if bp.Title != res.Title {
		add("title", bp.Title, res.Title)
	}
	if len(res.FieldErrors) > 0 {
		add("fieldErrors", nil, res.FieldErrors)
	}
	var hf map[string]any
	raw, _ := json.Marshal(res.Fields)
	_ = json.Unmarshal(raw, &hf)
	names := make([]string, 0, len(bp.Fields))
	for n := range bp.Fields {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		if !reflect.DeepEqual(bp.Fields[n], hf[n]) {
			add("fields."+n, bp.Fields[n], hf[n])
		}
	}
	if len(hf) != len(bp.Fields) {
		add("field count", len(bp.Fields), len(hf))
	}
	bt, ht := "", ""
	if bp.Text != nil {
		bt = *bp.Text
	}
	if res.Text != nil {
		ht = *res.Text
	}
	if bt != ht {
		add("text", bt, ht)
	}
	if bp.TextTruncated != res.TextTruncated {
		add("textTruncated", bp.TextTruncated, res.TextTruncated)
	}
	bl, hl := bp.Links, res.Links
	if len(bl) != len(hl) {
		add("link count", len(bl), len(hl))
	}
	for i := 0; i < len(bl) || i < len(hl); i++ {
		var b, h page.Link
		if i < len(bl) {
			b = bl[i]
		}
		if i < len(hl) {
			h = hl[i]
		}
		if b != h {
			add(fmt.Sprintf("links[%d]", i), b, h)
		}
	}
	if !reflect.DeepEqual(bp.Meta, res.Meta) && (len(bp.Meta) > 0 || len(res.Meta) > 0) {
		add("meta", bp.Meta, res.Meta)
	}
	return diffs
}

// show renders a value for a difference message.
func show(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprint(v)
	}
	return string(b)
}
