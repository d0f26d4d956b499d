// Package page extracts a page's title, fields, visible text, links and
// meta tags from its HTML without a browser, with the same output shape
// and semantics as the browser path's extraction script
// (templates/page_extract.go), so that `render: "http"` pages read like
// browser-rendered ones wherever the page does not depend on JavaScript or
// style sheets.
//
// The HTML is parsed by golang.org/x/net/html (the HTML Standard's parsing
// algorithm, with scripting on, as in a browser: <noscript> content is
// text) and selectors run on github.com/andybalholm/cascadia. The DOM is
// made to look like a browser's: <template> contents are moved out of the
// tree (querySelector does not see them), URLs resolve against <base href>
// with the URL Standard's parser (package weburl), and values follow the
// browser's reflections (a.href absolute, img.src absolute, getAttribute
// otherwise).
//
// What a browser knows that this package cannot: the effects of scripts
// (elements added, removed or changed after parsing) and the parts of
// style sheets that css.go leaves out. The page's own style sheets
// (<style>, linked sheets the caller loads, style attributes) decide
// display, visibility, content-visibility, white-space and
// text-transform (css.go, cascade.go). The visible text is an
// approximation of innerText documented in text.go.
//
// The name reads at the call site as what it works on: page.ParseString,
// page.Extract, page.DepthError. It is not "html", which would shadow
// golang.org/x/net/html in this package and in its callers.
package page

import (
	"bytes"
	"io"
	"regexp"
	"strings"

	"golang.org/x/net/html"
	"golang.org/x/net/html/atom"

	"github.com/browsertask/browsertask/internal/extract/weburl"
)

// Document is a parsed page, ready for extraction. It is not safe for
// concurrent use.
type Document struct {
	root *html.Node
	// templates maps each <template> element to a detached node holding
	// its contents (the browser's template contents fragment).
	templates map[*html.Node]*html.Node
	// url is the document's URL (location.href); base its base URL
	// (document.baseURI). base is nil when url cannot be parsed.
	url  string
	base *weburl.URL
	// src is the markup, kept for attribute order (serialize.go);
	// attrOrder is computed from it on first need.
	src       []byte
	attrOrder map[string][]html.Attribute
	// loader reads linked style sheets (LoadStyleSheets); css is the
	// cascade computed from the sheets on first need (cascade.go).
	loader SheetLoader
	css    *docStyles
	// browserTexts holds the texts a browser computed for some elements
	// (browser_text.go); ElementText returns them.
	browserTexts map[*html.Node]string
}

// Parse parses an HTML page whose final URL (after redirects) is pageURL.
// The body must already be decoded to UTF-8 (package fetch does that). An
// error comes from reading r or from markup nested deeper than MaxDepth
// (a *DepthError): the parser refuses such a page whole, and the
// Document is then nil.
func Parse(r io.Reader, pageURL string) (*Document, error) {
	src, err := io.ReadAll(r)
	if err != nil {
		return nil, err
	}
	fixed, crMarked := markPreCR(lowerDoctypeName(src))
	root, err := html.ParseWithOptions(bytes.NewReader(fixed), html.ParseOptionEnableScripting(true))
	if err != nil {
		return nil, ParseError(err)
	}
	if crMarked {
		restorePreCR(root)
	}
	d := &Document{root: root, templates: map[*html.Node]*html.Node{}, src: src}
	d.detachTemplates(root)
	d.url = pageURL
	if u, err := weburl.Parse(pageURL); err == nil {
		d.url, d.base = u.String(), u
		if b := d.baseElement(); b != nil {
			if href, ok := attr(b, "href"); ok {
				if bu, err := weburl.ParseRef(href, u); err == nil {
					d.base = bu
				}
			}
		}
	}
	return d, nil
}

// ParseString parses an HTML page held in a string (see Parse). The
// error is Parse's: a *DepthError for markup nested deeper than MaxDepth,
// with a nil Document.
func ParseString(body, pageURL string) (*Document, error) {
	return Parse(strings.NewReader(body), pageURL)
}

// URL returns the document's URL as a browser's location.href would show
// it (normalized by the URL Standard), or the URL as given when it cannot
// be parsed.
func (d *Document) URL() string { return d.url }

// detachTemplates moves the children of every <template> element into a
// detached fragment, recursively, so that selectors, text and links see
// the tree a browser builds.
func (d *Document) detachTemplates(n *html.Node) {
	for c := n.FirstChild; c != nil; c = c.NextSibling {
		d.detachTemplates(c)
	}
	if !isHTML(n, atom.Template) {
		return
	}
	frag := &html.Node{Type: html.DocumentNode}
	for c := n.FirstChild; c != nil; {
		next := c.NextSibling
		n.RemoveChild(c)
		frag.AppendChild(c)
		c = next
	}
	d.templates[n] = frag
}

// baseElement returns the first <base> element with an href attribute.
func (d *Document) baseElement() *html.Node {
	var found *html.Node
	walk(d.root, func(n *html.Node) bool {
		if found != nil {
			return false
		}
		if isHTML(n, atom.Base) {
			if _, ok := attr(n, "href"); ok {
				found = n
				return false
			}
		}
		return true
	})
	return found
}

// resolve resolves ref against the document's base URL as the browser's
// URL reflection does: the serialized URL, or ref itself when it cannot
// be parsed.
func (d *Document) resolve(ref string) string {
	if d.base == nil {
		return ref
	}
	u, err := weburl.ParseRef(ref, d.base)
	if err != nil {
		return ref
	}
	return u.String()
}

// walk calls fn on n and its descendants in tree order; fn returns false
// to skip a node's descendants.
func walk(n *html.Node, fn func(*html.Node) bool) {
	if !fn(n) {
		return
	}
	for c := n.FirstChild; c != nil; c = c.NextSibling {
		walk(c, fn)
	}
}

// isHTML reports whether n is the HTML element a.
func isHTML(n *html.Node, a atom.Atom) bool {
	return n.Type == html.ElementNode && n.DataAtom == a && n.Namespace == ""
}

// attr returns the value of n's attribute key (no namespace) and whether
// it is present.
func attr(n *html.Node, key string) (string, bool) {
	for _, a := range n.Attr {
		if a.Namespace == "" && a.Key == key {
			return a.Val, true
		}
	}
	return "", false
}

// documentElement returns the root element (<html>).
func (d *Document) documentElement() *html.Node {
	for c := d.root.FirstChild; c != nil; c = c.NextSibling {
		if c.Type == html.ElementNode {
			return c
		}
	}
	return nil
}

// body returns document.body: the first <body> or <frameset> child of the
// root element.
func (d *Document) body() *html.Node {
	de := d.documentElement()
	if de == nil {
		return nil
	}
	for c := de.FirstChild; c != nil; c = c.NextSibling {
		if isHTML(c, atom.Body) || isHTML(c, atom.Frameset) {
			return c
		}
	}
	return nil
}

// Title returns document.title: the text children of the first HTML
// <title> element, ASCII whitespace stripped and collapsed.
func (d *Document) Title() string {
	var t *html.Node
	walk(d.root, func(n *html.Node) bool {
		if t != nil {
			return false
		}
		if isHTML(n, atom.Title) {
			t = n
			return false
		}
		return true
	})
	if t == nil {
		return ""
	}
	var b strings.Builder
	for c := t.FirstChild; c != nil; c = c.NextSibling {
		if c.Type == html.TextNode {
			b.WriteString(c.Data)
		}
	}
	return strings.Join(strings.FieldsFunc(b.String(), isASCIIWhitespace), " ")
}

// isASCIIWhitespace is the HTML Standard's ASCII whitespace.
func isASCIIWhitespace(r rune) bool {
	return r == ' ' || r == '\t' || r == '\n' || r == '\f' || r == '\r'
}

// lowerDoctypeName returns src with the name of a leading <!DOCTYPE>
// lower-cased, as the HTML tokenizer does. x/net/html compares the name
// to "html" case-sensitively, so <!DOCTYPE HTML PUBLIC "-//W3C//DTD HTML
// 4.01//EN" …> would put the parser in quirks mode (where a <table> does
// not close an open <p>) while a browser uses no-quirks mode.
func lowerDoctypeName(src []byte) []byte {
	head := src[:min(len(src), 1024)]
	i := bytes.Index(bytes.ToLower(head), []byte("<!doctype"))
	if i < 0 {
		return src
	}
	j := i + len("<!doctype")
	for j < len(head) && isASCIIWhitespace(rune(head[j])) {
		j++
	}
	k := j
	for k < len(head) && !isASCIIWhitespace(rune(head[k])) && head[k] != '>' {
		k++
	}
	name := head[j:k]
	if !bytes.ContainsFunc(name, func(r rune) bool { return r >= 'A' && r <= 'Z' }) {
		return src
	}
	out := append([]byte(nil), src...)
	copy(out[j:k], bytes.ToLower(name))
	return out
}

// preCR finds a carriage return written as a character reference right
// after a <pre> or <listing> start tag. x/net/html drops it as if it were
// the newline the parser ignores there; a browser keeps it (DocBook
// writes one at the start of every program listing).
var preCR = regexp.MustCompile(`(?i)(<(?:pre|listing)\b[^>]*>)&#(?:0*13|x0*d);`)

// crMark stands for such a carriage return while parsing (a noncharacter
// no page has a reason to contain).
const crMark = "\ufdd0"

// markPreCR replaces those carriage returns with crMark.
func markPreCR(src []byte) ([]byte, bool) {
	if !preCR.Match(src) {
		return src, false
	}
	return preCR.ReplaceAll(src, []byte("${1}"+crMark)), true
}

// restorePreCR turns crMark back into a carriage return at the start of
// <pre> and <listing> elements.
func restorePreCR(root *html.Node) {
	walk(root, func(n *html.Node) bool {
		if (isHTML(n, atom.Pre) || isHTML(n, atom.Listing)) && n.FirstChild != nil &&
			n.FirstChild.Type == html.TextNode && strings.HasPrefix(n.FirstChild.Data, crMark) {
			n.FirstChild.Data = "\r" + strings.TrimPrefix(n.FirstChild.Data, crMark)
		}
		return true
	})
}
