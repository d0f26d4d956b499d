package page

import (
	"bytes"
	"slices"
	"strings"

	"golang.org/x/net/html"
	"golang.org/x/net/html/atom"
)

// innerHTML serializes el's children with the HTML Standard's fragment
// serialization algorithm, as a browser's innerHTML getter does (a
// <template>'s contents included). It differs from html.Render: text
// escapes only &, <, > and U+00A0 (as &nbsp;), attribute values only &,
// ", <, > and U+00A0, raw-text elements are written as they are, void
// elements get no end tag and no "/>".
func (d *Document) innerHTML(el *html.Node) string {
	var b strings.Builder
	d.serializeChildren(&b, el)
	return b.String()
}

// voidElements have no end tag.
var voidElements = map[atom.Atom]bool{
	atom.Area: true, atom.Base: true, atom.Basefont: true, atom.Bgsound: true, atom.Br: true,
	atom.Col: true, atom.Embed: true, atom.Frame: true, atom.Hr: true, atom.Img: true,
	atom.Input: true, atom.Keygen: true, atom.Link: true, atom.Meta: true, atom.Param: true,
	atom.Source: true, atom.Track: true, atom.Wbr: true,
}

// rawTextParents are the elements whose text children are serialized
// unescaped (noscript too: scripting is on).
var rawTextParents = map[atom.Atom]bool{
	atom.Style: true, atom.Script: true, atom.Xmp: true, atom.Iframe: true, atom.Noembed: true,
	atom.Noframes: true, atom.Plaintext: true, atom.Noscript: true,
}

func (d *Document) serializeChildren(b *strings.Builder, el *html.Node) {
	parent := el
	if frag, ok := d.templates[el]; ok {
		parent = frag
	}
	for c := parent.FirstChild; c != nil; c = c.NextSibling {
		d.serializeNode(b, c, el)
	}
}

func (d *Document) serializeNode(b *strings.Builder, n, parent *html.Node) {
	switch n.Type {
	case html.ElementNode:
		b.WriteByte('<')
		b.WriteString(n.Data)
		for _, a := range d.sourceOrder(n) {
			b.WriteByte(' ')
			b.WriteString(attrName(a))
			b.WriteString(`="`)
			escape(b, a.Val, true)
			b.WriteByte('"')
		}
		b.WriteByte('>')
		if n.Namespace == "" && voidElements[n.DataAtom] {
			return
		}
		d.serializeChildren(b, n)
		b.WriteString("</")
		b.WriteString(n.Data)
		b.WriteByte('>')
	case html.TextNode:
		if parent != nil && parent.Namespace == "" && rawTextParents[parent.DataAtom] {
			b.WriteString(n.Data)
			return
		}
		escape(b, n.Data, false)
	case html.CommentNode:
		b.WriteString("<!--")
		b.WriteString(n.Data)
		b.WriteString("-->")
	case html.DoctypeNode:
		b.WriteString("<!DOCTYPE ")
		b.WriteString(n.Data)
		b.WriteByte('>')
	}
}

// escape writes s escaped for text (&, <, >, U+00A0) or for an attribute
// value (also ").
func escape(b *strings.Builder, s string, inAttr bool) {
	for _, r := range s {
		switch {
		case r == '&':
			b.WriteString("&amp;")
		case r == 0xa0:
			b.WriteString("&nbsp;")
		case r == '<':
			b.WriteString("&lt;")
		case r == '>':
			b.WriteString("&gt;")
		case r == '"' && inAttr:
			b.WriteString("&quot;")
		default:
			b.WriteRune(r)
		}
	}
}

// formattingElements are the elements whose attributes x/net/html sorts
// while parsing (for its "Noah's Ark" comparison), which loses the source
// order a browser's innerHTML keeps.
var formattingElements = map[atom.Atom]bool{
	atom.A: true, atom.B: true, atom.Big: true, atom.Code: true, atom.Em: true, atom.Font: true,
	atom.I: true, atom.Nobr: true, atom.S: true, atom.Small: true, atom.Strike: true,
	atom.Strong: true, atom.Tt: true, atom.U: true,
}

// sourceOrder returns n's attributes in source order. For a formatting
// element with several attributes it looks the order up in the source
// (tokenized once, on first need): the first start tag with the same name
// and the same attributes gives it.
func (d *Document) sourceOrder(n *html.Node) []html.Attribute {
	if len(n.Attr) < 2 || n.Namespace != "" || !formattingElements[n.DataAtom] {
		return n.Attr
	}
	if d.attrOrder == nil {
		d.attrOrder = scanAttrOrder(d.src)
	}
	if a, ok := d.attrOrder[attrKey(n.Data, n.Attr)]; ok {
		return a
	}
	return n.Attr
}

// scanAttrOrder tokenizes src and maps each formatting start tag (by name
// and sorted attributes) to its attributes in source order, duplicates
// dropped as the parser drops them.
func scanAttrOrder(src []byte) map[string][]html.Attribute {
	out := map[string][]html.Attribute{}
	z := html.NewTokenizer(bytes.NewReader(src))
	for {
		tt := z.Next()
		if tt == html.ErrorToken {
			return out
		}
		if tt != html.StartTagToken && tt != html.SelfClosingTagToken {
			continue
		}
		tok := z.Token()
		if !formattingElements[tok.DataAtom] || len(tok.Attr) < 2 {
			continue
		}
		seen := map[string]bool{}
		attrs := make([]html.Attribute, 0, len(tok.Attr))
		for _, a := range tok.Attr {
			if !seen[a.Key] {
				seen[a.Key] = true
				attrs = append(attrs, a)
			}
		}
		k := attrKey(tok.Data, attrs)
		if _, ok := out[k]; !ok {
			out[k] = attrs
		}
	}
}

// attrKey identifies a tag by its name and its set of attributes.
func attrKey(tag string, attrs []html.Attribute) string {
	sorted := append([]html.Attribute(nil), attrs...)
	slices.SortFunc(sorted, func(a, b html.Attribute) int {
		if c := strings.Compare(a.Namespace, b.Namespace); c != 0 {
			return c
		}
		if c := strings.Compare(a.Key, b.Key); c != 0 {
			return c
		}
		return strings.Compare(a.Val, b.Val)
	})
	var b strings.Builder
	b.WriteString(tag)
	for _, a := range sorted {
		b.WriteByte(0)
		b.WriteString(a.Namespace)
		b.WriteByte(0)
		b.WriteString(a.Key)
		b.WriteByte(0)
		b.WriteString(a.Val)
	}
	return b.String()
}
