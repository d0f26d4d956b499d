package content

import (
	"strings"

	"golang.org/x/net/html"
)

// attr returns the value of n's attribute key (no namespace) and whether
// n has it.
func attr(n *html.Node, key string) (string, bool) {
	for _, a := range n.Attr {
		if a.Namespace == "" && a.Key == key {
			return a.Val, true
		}
	}
	return "", false
}

// hasToken reports whether n's space-separated attribute key holds tok
// (ASCII case-insensitive), as rel="canonical" is matched.
func hasToken(n *html.Node, key, tok string) bool {
	v, _ := attr(n, key)
	for _, f := range strings.Fields(v) {
		if strings.EqualFold(f, tok) {
			return true
		}
	}
	return false
}

// findElement is the first element named tag in document order, or nil.
func findElement(n *html.Node, tag string) *html.Node {
	if n.Type == html.ElementNode && n.Data == tag {
		return n
	}
	for c := n.FirstChild; c != nil; c = c.NextSibling {
		if f := findElement(c, tag); f != nil {
			return f
		}
	}
	return nil
}

// textOf is the concatenated text of n's descendants, <br> as a newline,
// without the bodies of script and style.
func textOf(n *html.Node) string {
	var b strings.Builder
	var walk func(*html.Node)
	walk = func(n *html.Node) {
		switch n.Type {
		case html.TextNode:
			b.WriteString(n.Data)
			return
		case html.ElementNode:
			switch n.Data {
			case "script", "style":
				return
			case "br":
				b.WriteByte('\n')
				return
			}
		}
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			walk(c)
		}
	}
	walk(n)
	return b.String()
}

// collapse joins s's words with single spaces: the key that matches a
// code block before and after the extractor reflowed its whitespace.
func collapse(s string) string { return strings.Join(strings.Fields(s), " ") }
