package page

import (
	"golang.org/x/net/html"
)

// One text rule for every template and both paths: an element's text is
// its innerText with JavaScript white space collapsed and trimmed. In a
// browser that is the extraction scripts' elementText (templates'
// textJS, shared by batch_extract_pages, crawl_site and
// extract_structured); without one it is ElementText below, the same
// rule computed from the markup and the page's style sheets (text.go).
// extract_structured reads the browser's document through this package,
// so the browser marks the elements its x-selectors match with the text
// elementText gives them (BrowserTextAttr), and ElementText returns that
// text: the same string batch_extract_pages gets for the same element.

// BrowserTextAttr is the attribute the browser side writes on a copy of
// the document (never the live page) to carry an element's elementText
// to TakeBrowserTexts.
const BrowserTextAttr = "data-browsertask-text"

// Root returns the parsed tree's document node, for packages that read
// more of the page than fields (package structured).
func (d *Document) Root() *html.Node { return d.root }

// ElementText is the text of el by the one rule above: the browser's,
// when the document came from one with texts (TakeBrowserTexts), else
// innerText computed here (textContent for an element outside HTML, as
// a browser's script falls back to it), white space collapsed.
func (d *Document) ElementText(el *html.Node) string {
	if t, ok := d.browserTexts[el]; ok {
		return t
	}
	if el.Namespace != "" {
		return clean(textContent(el))
	}
	return clean(d.innerText(el))
}

// TakeBrowserTexts removes every BrowserTextAttr attribute from the
// document and keeps its value as its element's text (ElementText). Call
// it only on HTML that the browser side produced (templates' outer HTML
// script, which removes any such attribute the page had before writing
// its own); a page fetched over HTTP could carry the attribute itself.
func (d *Document) TakeBrowserTexts() {
	walk(d.root, func(n *html.Node) bool {
		if n.Type != html.ElementNode {
			return true
		}
		for i, a := range n.Attr {
			if a.Namespace == "" && a.Key == BrowserTextAttr {
				if d.browserTexts == nil {
					d.browserTexts = map[*html.Node]string{}
				}
				d.browserTexts[n] = a.Val
				n.Attr = append(n.Attr[:i:i], n.Attr[i+1:]...)
				break
			}
		}
		return true
	})
	d.attrOrder = nil
}
