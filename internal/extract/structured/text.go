package structured

import (
	"strings"

	"golang.org/x/net/html"
	"golang.org/x/net/html/atom"
)

// Text is the page's readable text, compact: the title on the first line,
// then the body's text with one line per block (paragraph, heading, list
// item, table row…), white space collapsed, empty lines dropped. Scripts,
// styles, templates, SVG and hidden elements are left out; images give their
// alt text in brackets. It is what a model is shown of the page.
func (p *Page) Text() string {
	var lines []string
	if t := p.meta["html:title"]; len(t) > 0 {
		lines = append(lines, t[0])
	}
	var cur strings.Builder
	flush := func() {
		if s := cleanText(cur.String()); s != "" {
			lines = append(lines, s)
		}
		cur.Reset()
	}
	var rec func(n *html.Node)
	rec = func(n *html.Node) {
		switch n.Type {
		case html.TextNode:
			cur.WriteString(n.Data)
			cur.WriteByte(' ')
			return
		case html.ElementNode:
			switch n.DataAtom {
			case atom.Head, atom.Script, atom.Style, atom.Noscript, atom.Template, atom.Svg, atom.Iframe,
				atom.Canvas, atom.Object, atom.Select:
				return
			case atom.Img:
				if alt := cleanText(attr(n, "alt")); alt != "" {
					cur.WriteString("[" + alt + "] ")
				}
				return
			case atom.Br:
				flush()
				return
			}
			if hasAttr(n, "hidden") || strings.EqualFold(attr(n, "aria-hidden"), "true") {
				return
			}
		}
		block := n.Type == html.ElementNode && isBlock(n.DataAtom)
		if block {
			flush()
		}
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			rec(c)
		}
		if block {
			flush()
		}
	}
	rec(p.doc)
	flush()
	return strings.Join(lines, "\n")
}

// isBlock reports whether an element starts a new line of text.
func isBlock(a atom.Atom) bool {
	switch a {
	case atom.P, atom.Div, atom.Section, atom.Article, atom.Aside, atom.Header, atom.Footer, atom.Nav, atom.Main,
		atom.H1, atom.H2, atom.H3, atom.H4, atom.H5, atom.H6, atom.Li, atom.Ul, atom.Ol, atom.Dl, atom.Dt, atom.Dd,
		atom.Tr, atom.Table, atom.Blockquote, atom.Pre, atom.Figure, atom.Figcaption, atom.Form, atom.Fieldset,
		atom.Address, atom.Hr, atom.Details, atom.Summary, atom.Body, atom.Td, atom.Th, atom.Caption, atom.Label,
		atom.Button, atom.Option:
		return true
	}
	return false
}
