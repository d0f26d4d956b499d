package structured

import (
	"net/url"
	"strings"

	"golang.org/x/net/html"
	"golang.org/x/net/html/atom"

	"github.com/browsertask/browsertask/internal/extract/page"
)

// Page is one parsed page with the structured data it carries. Parse it
// once and hand it to Schema.Extract (and Text for a model).
type Page struct {
	// base resolves relative URLs: the final URL, or <base href> on it.
	base *url.URL
	doc  *html.Node
	// text reads an element's text by the one rule (page.ElementText).
	text *page.Document

	jsonld    []map[string]any // every typed JSON-LD node, document order
	jsonldIDs map[string]map[string]any
	microdata []map[string]any // every microdata item, document order
	rdfa      []map[string]any // every RDFa Lite entity, document order
	meta      map[string][]string

	// notes say what could not be read (a JSON-LD block that is not JSON).
	notes []string
}

// ParsePage parses a page's HTML. finalURL (the URL after redirects) is
// the base for relative links and the last resort for a "url" property;
// it may be empty. Broken markup parses as browsers do, and unreadable
// JSON-LD blocks are skipped (see Notes); the one failure is markup
// nested deeper than the parser reads (an *page.DepthError, with
// a nil Page): an empty page in its place would read as a page without
// data.
func ParsePage(src, finalURL string) (*Page, error) {
	d, err := page.ParseString(src, finalURL)
	if err != nil {
		return nil, err
	}
	return FromDocument(d, finalURL), nil
}

// FromDocument reads the structured data of a page package page parsed
// (over HTTP with its style sheets loaded, or from a browser with its
// texts taken): an x-selector's text is that document's ElementText, the
// one text rule of every template and both paths. finalURL is as for
// ParsePage.
func FromDocument(d *page.Document, finalURL string) *Page {
	doc := d.Root()
	p := &Page{doc: doc, text: d, meta: map[string][]string{}, jsonldIDs: map[string]map[string]any{}}
	if u, err := url.Parse(strings.TrimSpace(finalURL)); err == nil && u.IsAbs() {
		p.base = u
	}
	if b := findFirst(doc, atom.Base); b != nil {
		if h := attr(b, "href"); h != "" {
			if u := p.resolve(h); u != "" {
				p.base, _ = url.Parse(u)
			}
		}
	}
	if p.base != nil {
		p.addMeta("page:url", p.base.String())
	}
	p.readMeta()
	p.readJSONLD()
	p.readMicrodata()
	p.readRDFa()
	return p
}

// Notes lists what could not be read from the page, such as a JSON-LD
// block that is not valid JSON.
func (p *Page) Notes() []string { return p.notes }

// URL is the page's base URL ("" when none was given).
func (p *Page) URL() string {
	if p.base == nil {
		return ""
	}
	return p.base.String()
}

// resolve makes ref absolute against the page's base; "" when ref is not
// a URL. Without a base, ref is returned as is.
func (p *Page) resolve(ref string) string {
	ref = strings.TrimSpace(ref)
	if ref == "" {
		return ""
	}
	u, err := url.Parse(ref)
	if err != nil {
		return ""
	}
	if p.base == nil || u.IsAbs() {
		return u.String()
	}
	return p.base.ResolveReference(u).String()
}

// addMeta records one meta value under a lowercase key.
func (p *Page) addMeta(key, value string) {
	key = strings.ToLower(strings.TrimSpace(key))
	value = cleanText(value)
	if key == "" || value == "" {
		return
	}
	p.meta[key] = append(p.meta[key], value)
}

// readMeta collects <meta name|property content>, <title>,
// <link rel=canonical> and <html lang>.
func (p *Page) readMeta() {
	walk(p.doc, func(n *html.Node) bool {
		switch n.DataAtom {
		case atom.Meta:
			content, ok := attrOK(n, "content")
			if !ok {
				return true
			}
			for _, k := range []string{"property", "name", "http-equiv"} {
				if key := attr(n, k); key != "" && !hasAttr(n, "itemprop") {
					p.addMeta(key, content)
					break
				}
			}
		case atom.Title:
			if _, seen := p.meta["html:title"]; !seen && !insideSVG(n) {
				p.addMeta("html:title", textOf(n))
			}
		case atom.Link:
			for _, rel := range strings.Fields(strings.ToLower(attr(n, "rel"))) {
				if rel == "canonical" {
					p.addMeta("link:canonical", p.resolve(attr(n, "href")))
				}
			}
		case atom.Html:
			p.addMeta("html:lang", attr(n, "lang"))
		}
		return true
	})
}

// walk visits n and its descendants depth-first in document order; visit
// returns false to skip a node's children.
func walk(n *html.Node, visit func(*html.Node) bool) {
	if n.Type == html.ElementNode || n.Type == html.DocumentNode {
		if n.Type == html.ElementNode && !visit(n) {
			return
		}
	}
	for c := n.FirstChild; c != nil; c = c.NextSibling {
		walk(c, visit)
	}
}

// findFirst returns the first element of kind a, or nil.
func findFirst(n *html.Node, a atom.Atom) *html.Node {
	var found *html.Node
	walk(n, func(e *html.Node) bool {
		if found == nil && e.DataAtom == a {
			found = e
		}
		return found == nil
	})
	return found
}

// attr returns an attribute's value ("" when absent).
func attr(n *html.Node, name string) string {
	v, _ := attrOK(n, name)
	return v
}

// attrOK returns an attribute's value and whether it is present.
func attrOK(n *html.Node, name string) (string, bool) {
	for _, a := range n.Attr {
		if a.Namespace == "" && strings.EqualFold(a.Key, name) {
			return a.Val, true
		}
	}
	return "", false
}

// hasAttr reports whether n carries the attribute.
func hasAttr(n *html.Node, name string) bool {
	_, ok := attrOK(n, name)
	return ok
}

// insideSVG reports whether n sits in an <svg> (whose <title> is not the
// page's).
func insideSVG(n *html.Node) bool {
	for p := n.Parent; p != nil; p = p.Parent {
		if p.DataAtom == atom.Svg {
			return true
		}
	}
	return false
}

// textOf is n's text content with whitespace collapsed, without scripts
// and styles.
func textOf(n *html.Node) string {
	var b strings.Builder
	var rec func(*html.Node)
	rec = func(c *html.Node) {
		switch c.Type {
		case html.TextNode:
			b.WriteString(c.Data)
			return
		case html.ElementNode:
			switch c.DataAtom {
			case atom.Script, atom.Style, atom.Noscript, atom.Template:
				return
			case atom.Br:
				b.WriteByte(' ')
			}
		}
		for k := c.FirstChild; k != nil; k = k.NextSibling {
			rec(k)
		}
	}
	rec(n)
	return cleanText(b.String())
}

// innerHTML renders n's children as HTML.
func innerHTML(n *html.Node) string {
	var b strings.Builder
	for c := n.FirstChild; c != nil; c = c.NextSibling {
		_ = html.Render(&b, c)
	}
	return strings.TrimSpace(b.String())
}

// cleanText trims s and collapses every run of white space to one space.
func cleanText(s string) string {
	return strings.Join(strings.Fields(s), " ")
}
