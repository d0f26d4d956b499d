package content

import (
	"strings"

	"golang.org/x/net/html"
	"golang.org/x/net/html/atom"
)

// keptElements are the elements the cleaned HTML may hold: the ones
// Markdown has a form for, and neutral containers. Any other element the
// extractor leaves (its working names such as "done", a fallback's
// <font>) is unwrapped: its children stay, the tag goes.
var keptElements = map[string]bool{
	"p": true, "h1": true, "h2": true, "h3": true, "h4": true, "h5": true, "h6": true,
	"ul": true, "ol": true, "li": true, "dl": true, "dt": true, "dd": true,
	"table": true, "thead": true, "tbody": true, "tfoot": true, "tr": true, "th": true, "td": true, "caption": true,
	"pre": true, "code": true, "blockquote": true, "a": true, "img": true, "br": true, "hr": true,
	"em": true, "i": true, "strong": true, "b": true, "u": true, "s": true, "del": true, "strike": true,
	"sub": true, "sup": true, "mark": true, "q": true, "cite": true, "abbr": true, "kbd": true,
	"samp": true, "var": true, "small": true, "time": true, "figure": true, "figcaption": true,
	"div": true, "span": true, "section": true, "article": true,
}

// droppedElements go with everything inside them: code and styles that are
// never content (acceptance: no <script> or <style> body in the Markdown),
// and controls and embeds Markdown cannot show.
var droppedElements = map[string]bool{
	"script": true, "style": true, "noscript": true, "template": true, "iframe": true,
	"object": true, "embed": true, "svg": true, "math": true, "canvas": true,
	"form": true, "button": true, "input": true, "select": true, "textarea": true,
	"head": true, "title": true, "meta": true, "link": true, "nav": true,
}

// keptAttributes are the attributes kept per element; all others go.
var keptAttributes = map[string][]string{
	"a": {"href", "title"}, "img": {"src", "alt", "title"},
	"td": {"colspan", "rowspan"}, "th": {"colspan", "rowspan"}, "ol": {"start"},
}

// blockParents are the elements in which a <code> is a code block rather
// than code inside a sentence: go-trafilatura renames <pre> to <code> and
// drops its class, so a <code> standing alone in a container was a <pre>.
var blockParents = map[string]bool{
	"body": true, "div": true, "li": true, "blockquote": true, "td": true, "th": true,
	"section": true, "article": true, "figure": true, "dd": true,
}

// restore turns the extractor's tree (root included) into the cleaned
// HTML the Markdown is converted from: a <div> holding the content, with
// only keptElements and keptAttributes, code blocks as
// <pre><code class="language-X">, tables with a header row.
func restore(root *html.Node, codeLangs map[string]string) *html.Node {
	out := &html.Node{Type: html.ElementNode, Data: "div", DataAtom: atom.Div}
	for c := root.FirstChild; c != nil; {
		next := c.NextSibling
		root.RemoveChild(c)
		out.AppendChild(c)
		c = next
	}
	clean(out, codeLangs)
	return out
}

// clean applies restore's rules to n's children, depth first.
func clean(n *html.Node, codeLangs map[string]string) {
	for c := n.FirstChild; c != nil; {
		next := c.NextSibling
		switch c.Type {
		case html.TextNode:
		case html.ElementNode:
			next = cleanElement(n, c, next, codeLangs)
		default: // comments, doctypes
			n.RemoveChild(c)
		}
		c = next
	}
}

// cleanElement cleans the element c, a child of n, and returns the node
// to visit after it (an unwrapped element's first child).
func cleanElement(n, c, next *html.Node, codeLangs map[string]string) *html.Node {
	name := c.Data
	if c.Namespace != "" || droppedElements[name] {
		n.RemoveChild(c)
		return next
	}
	if !keptElements[name] {
		return unwrap(n, c, next)
	}
	switch {
	case name == "pre" || name == "code" && (blockParents[n.Data] || strings.Contains(textOf(c), "\n") && n.Data != "p"):
		toCodeBlock(n, c, codeLangs)
		return next
	case name == "img":
		if !keepImage(c) {
			n.RemoveChild(c)
			return next
		}
	case name == "a":
		if href, _ := attr(c, "href"); !linkable(href) {
			return unwrap(n, c, next)
		}
	case name == "table":
		headerRow(c)
	}
	c.Attr = keepAttrs(c)
	clean(c, codeLangs)
	joinSplitLinks(c)
	return next
}

// joinSplitLinks makes one link again of a link the text-only selection
// cut into pieces (see marking.unmark: a link whose text spans elements
// comes back as one <a> per text piece), so Sphinx's footnote reference
// <a href="#note"><span>[</span>1<span>]</span></a> reads [[1]](…#note) in
// the Markdown instead of three links. A run of n's children that are
// each a link to the same address, or a <span> holding only such a link
// (a span has no Markdown form), becomes one <a> holding their text.
func joinSplitLinks(n *html.Node) {
	for c := n.FirstChild; c != nil; c = c.NextSibling {
		href, ok := soleLink(c)
		if !ok {
			continue
		}
		for next := c.NextSibling; next != nil; next = c.NextSibling {
			h, ok := soleLink(next)
			if !ok || h != href {
				break
			}
			if c.Data != "a" {
				c = unwrapSpan(n, c)
			}
			n.RemoveChild(next)
			if next.Data != "a" {
				next = next.FirstChild // the span's link
			}
			for g := next.FirstChild; g != nil; {
				gn := g.NextSibling
				next.RemoveChild(g)
				c.AppendChild(g)
				g = gn
			}
		}
	}
}

// soleLink returns the address of c when c is an <a href> or a <span>
// whose only child is one.
func soleLink(c *html.Node) (string, bool) {
	if c.Type != html.ElementNode {
		return "", false
	}
	if c.Data == "span" {
		if c.FirstChild == nil || c.FirstChild != c.LastChild {
			return "", false
		}
		c = c.FirstChild
	}
	if c.Type != html.ElementNode || c.Data != "a" {
		return "", false
	}
	return attr(c, "href")
}

// unwrapSpan replaces the <span> c (a child of n holding only a link) by
// that link, and returns it.
func unwrapSpan(n, c *html.Node) *html.Node {
	a := c.FirstChild
	c.RemoveChild(a)
	n.InsertBefore(a, c)
	n.RemoveChild(c)
	return a
}

// unwrap replaces c (a child of n) by its children and returns the node
// to visit next: its first child, or next when it had none.
func unwrap(n, c, next *html.Node) *html.Node {
	first := c.FirstChild
	for g := c.FirstChild; g != nil; {
		gn := g.NextSibling
		c.RemoveChild(g)
		n.InsertBefore(g, c)
		g = gn
	}
	n.RemoveChild(c)
	if first != nil {
		return first
	}
	return next
}

// toCodeBlock replaces c with <pre><code class="language-X">text</code></pre>,
// the language found by the block's text among the page's code blocks.
func toCodeBlock(parent, c *html.Node, codeLangs map[string]string) {
	text := strings.Trim(textOf(c), "\n")
	code := &html.Node{Type: html.ElementNode, Data: "code", DataAtom: atom.Code}
	if lang := codeLangs[collapse(text)]; lang != "" {
		code.Attr = []html.Attribute{{Key: "class", Val: "language-" + lang}}
	}
	code.AppendChild(&html.Node{Type: html.TextNode, Data: text + "\n"})
	pre := &html.Node{Type: html.ElementNode, Data: "pre", DataAtom: atom.Pre}
	pre.AppendChild(code)
	parent.InsertBefore(pre, c)
	parent.RemoveChild(c)
}

// keepImage keeps an image with an http(s) source (taking a lazy loader's
// data-src when src is empty); a data: image would put kilobytes of base64
// into the Markdown for nothing a model can read.
func keepImage(img *html.Node) bool {
	src, _ := attr(img, "src")
	if strings.TrimSpace(src) == "" {
		src, _ = attr(img, "data-src")
	}
	if !linkable(src) {
		return false
	}
	img.Attr = append(img.Attr[:0:0], img.Attr...)
	setAttr(img, "src", src)
	return true
}

// linkable reports whether u is an absolute http(s) URL, the only links
// the Markdown keeps as links (javascript:, data: and unresolved ones
// keep their text only).
func linkable(u string) bool {
	l := strings.ToLower(strings.TrimSpace(u))
	return strings.HasPrefix(l, "http://") || strings.HasPrefix(l, "https://")
}

// headerRow gives a table without <thead> one when its first row is all
// <th>, so the Markdown table has that row as its header.
func headerRow(table *html.Node) {
	var first *html.Node
	var walk func(*html.Node) bool
	walk = func(n *html.Node) bool {
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			if c.Type != html.ElementNode {
				continue
			}
			switch c.Data {
			case "thead":
				return true
			case "tbody", "tfoot":
				if walk(c) {
					return true
				}
			case "tr":
				if first == nil {
					first = c
				}
			}
		}
		return false
	}
	if walk(table) || first == nil {
		return
	}
	cells := 0
	for c := first.FirstChild; c != nil; c = c.NextSibling {
		if c.Type == html.ElementNode {
			if c.Data != "th" {
				return
			}
			cells++
		}
	}
	if cells == 0 {
		return
	}
	thead := &html.Node{Type: html.ElementNode, Data: "thead", DataAtom: atom.Thead}
	first.Parent.InsertBefore(thead, first)
	first.Parent.RemoveChild(first)
	thead.AppendChild(first)
}

// keepAttrs is c's attributes filtered by keptAttributes (a code
// element's language class included).
func keepAttrs(c *html.Node) []html.Attribute {
	var out []html.Attribute
	for _, a := range c.Attr {
		if a.Namespace != "" {
			continue
		}
		for _, k := range keptAttributes[c.Data] {
			if a.Key == k {
				out = append(out, a)
			}
		}
		if c.Data == "code" && a.Key == "class" && strings.HasPrefix(a.Val, "language-") {
			out = append(out, a)
		}
	}
	return out
}

// setAttr sets n's attribute key to val, adding it when missing.
func setAttr(n *html.Node, key, val string) {
	for i, a := range n.Attr {
		if a.Namespace == "" && a.Key == key {
			n.Attr[i].Val = val
			return
		}
	}
	n.Attr = append(n.Attr, html.Attribute{Key: key, Val: val})
}
