package content

import (
	"strings"

	"golang.org/x/net/html"
)

// Links and images survive a text-only selection as marks.
//
// go-trafilatura selects its main content best with links and images off
// (measured on its comparison set: F 0.910 text-only against 0.907 with
// both kept, because kept links and images change which blocks it
// scores as content). The Markdown needs both, so the page is selected
// text-only and they come back from the page itself: before selection,
// each link's text is framed by two marks and each image is followed by
// one, all characters of Unicode's supplementary private use areas,
// which no page's text uses in practice (a page that does is selected
// with links and images on, as before). After selection, the marks left
// in the chosen blocks are turned back into the links and images they
// stood for; marks of blocks it dropped went with them. The text that is
// scored and returned is the text-only selection's, with the marks gone.
const (
	linkMarkBase  = 0xF0000  // + link index: where a link's text starts
	imageMarkBase = 0x100000 // + image index: where an image was
	markCount     = 0xFFFD   // indexes per kind (the last two code points of a plane are noncharacters)
	linkEndMark   = 0x10FFFD // where a link's text ends
)

// marking is the page's links and images by mark index.
type marking struct {
	links  []*html.Node
	images []*html.Node
}

// isMark reports whether r is one of the marks.
func isMark(r rune) bool { return r >= linkMarkBase && r <= linkEndMark }

// hasMarks reports whether any text or attribute of n holds a mark
// character already, when marking would be ambiguous.
func hasMarks(n *html.Node) bool {
	if n.Type == html.TextNode && strings.IndexFunc(n.Data, isMark) >= 0 {
		return true
	}
	for _, a := range n.Attr {
		if strings.IndexFunc(a.Val, isMark) >= 0 {
			return true
		}
	}
	for c := n.FirstChild; c != nil; c = c.NextSibling {
		if hasMarks(c) {
			return true
		}
	}
	return false
}

// mark frames the text of every <a href> under n and follows every <img>
// with its mark, up to markCount of each; the rest stay unmarked (their
// text stays, as plain text).
func (m *marking) mark(n *html.Node) {
	for c := n.FirstChild; c != nil; c = c.NextSibling {
		m.mark(c)
	}
	if n.Type != html.ElementNode {
		return
	}
	switch n.Data {
	case "a":
		if _, ok := attr(n, "href"); !ok || n.FirstChild == nil || len(m.links) >= markCount {
			return
		}
		start := &html.Node{Type: html.TextNode, Data: string(rune(linkMarkBase + len(m.links)))}
		n.InsertBefore(start, n.FirstChild)
		n.AppendChild(&html.Node{Type: html.TextNode, Data: string(rune(linkEndMark))})
		m.links = append(m.links, n)
	case "img":
		if n.Parent == nil || len(m.images) >= markCount {
			return
		}
		n.Parent.InsertBefore(&html.Node{Type: html.TextNode, Data: string(rune(imageMarkBase + len(m.images)))}, n.NextSibling)
		m.images = append(m.images, cloneImage(n))
	}
}

// cloneImage is a detached copy of img with its attributes.
func cloneImage(img *html.Node) *html.Node {
	return &html.Node{Type: html.ElementNode, Data: "img", DataAtom: img.DataAtom,
		Attr: append([]html.Attribute(nil), img.Attr...)}
}

// unmark turns the marks under root back into links and images: the text
// between a link's two marks (within one text node; a link whose text
// spans elements becomes one link per text piece) is wrapped in an <a>
// with the page's href, an image mark becomes the image. Marks whose
// partner was dropped are removed; text already inside an <a> is not
// linked again.
func (m *marking) unmark(root *html.Node) {
	if root == nil {
		return
	}
	var texts []*html.Node
	var walk func(*html.Node)
	walk = func(n *html.Node) {
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			walk(c)
		}
		if n.Type == html.TextNode {
			texts = append(texts, n)
		}
	}
	walk(root)
	open := -1 // the link whose text is being read, across text nodes
	for _, t := range texts {
		if open >= 0 || strings.IndexFunc(t.Data, isMark) >= 0 {
			open = m.split(t, open, insideLink(t))
		}
	}
}

// insideLink reports whether n has an <a> ancestor.
func insideLink(n *html.Node) bool {
	for p := n.Parent; p != nil; p = p.Parent {
		if p.Type == html.ElementNode && p.Data == "a" {
			return true
		}
	}
	return false
}

// split replaces text node t by its pieces: plain text, links and images.
// open is the link whose start mark came before t without its end; the
// link open after t is returned.
func (m *marking) split(t *html.Node, open int, inLink bool) int {
	parent := t.Parent
	var b strings.Builder
	flush := func() {
		if b.Len() == 0 {
			return
		}
		txt := &html.Node{Type: html.TextNode, Data: b.String()}
		b.Reset()
		if open >= 0 && !inLink {
			a := &html.Node{Type: html.ElementNode, Data: "a",
				Attr: []html.Attribute{{Key: "href", Val: hrefOf(m.links[open])}}}
			a.AppendChild(txt)
			parent.InsertBefore(a, t)
			return
		}
		parent.InsertBefore(txt, t)
	}
	for _, r := range t.Data {
		switch {
		case r == linkEndMark:
			flush()
			open = -1
		case r >= linkMarkBase && r < linkMarkBase+markCount:
			flush()
			if i := int(r - linkMarkBase); i < len(m.links) {
				open = i
			}
		case r >= imageMarkBase && r < imageMarkBase+markCount:
			flush()
			if i := int(r - imageMarkBase); i < len(m.images) {
				parent.InsertBefore(cloneImage(m.images[i]), t)
			}
		case isMark(r):
			// a mark of no kind: dropped
		default:
			b.WriteRune(r)
		}
	}
	flush()
	parent.RemoveChild(t)
	return open
}

// hrefOf is a's href as prepare made it (absolute where it resolved).
func hrefOf(a *html.Node) string {
	h, _ := attr(a, "href")
	return h
}

// unmarkString removes marks from s (metadata read from marked text,
// such as a title taken from a linked heading).
func unmarkString(s string) string {
	if strings.IndexFunc(s, isMark) < 0 {
		return s
	}
	return strings.Map(func(r rune) rune {
		if isMark(r) {
			return -1
		}
		return r
	}, s)
}
