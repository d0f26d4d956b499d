package content

import (
	"strings"
	"unicode"

	"golang.org/x/net/html"
)

// blockBreaks is the separator each block element puts around its text in
// Result.Text: a blank line between paragraphs, headings, lists, tables
// and code; a line break between list items, rows and terms.
var blockBreaks = map[string]string{
	"p": "\n\n", "h1": "\n\n", "h2": "\n\n", "h3": "\n\n", "h4": "\n\n", "h5": "\n\n", "h6": "\n\n",
	"ul": "\n\n", "ol": "\n\n", "dl": "\n\n", "table": "\n\n", "pre": "\n\n", "blockquote": "\n\n",
	"figure": "\n\n", "div": "\n", "section": "\n\n", "article": "\n\n", "hr": "\n\n",
	"li": "\n", "tr": "\n", "dt": "\n", "dd": "\n", "caption": "\n", "figcaption": "\n", "br": "\n",
}

// plainText is the text of the cleaned content: the words of the Markdown
// without its markup. Whitespace inside a block collapses to one space as
// a reader sees it; a code block keeps its lines; table cells are
// separated by a space. It is what the benchmark scores (the
// "with"/"without" snippets are matched against it).
func plainText(root *html.Node) string {
	var b strings.Builder
	pending := ""
	space := false
	emit := func(s string) {
		if s == "" {
			return
		}
		if b.Len() > 0 {
			if pending != "" {
				b.WriteString(pending)
			} else if space {
				b.WriteByte(' ')
			}
		}
		pending, space = "", false
		b.WriteString(s)
	}
	brk := func(sep string) {
		if len(sep) > len(pending) {
			pending = sep
		}
	}
	var walk func(*html.Node)
	walk = func(n *html.Node) {
		switch n.Type {
		case html.TextNode:
			if n.Parent != nil && n.Parent.Data == "code" && n.Parent.Parent != nil && n.Parent.Parent.Data == "pre" {
				emit(strings.TrimRight(n.Data, "\n"))
				return
			}
			words := strings.Fields(n.Data)
			if len(words) == 0 {
				if n.Data != "" {
					space = true
				}
				return
			}
			if startsWithSpace(n.Data) {
				space = true
			}
			emit(strings.Join(words, " "))
			if endsWithSpace(n.Data) {
				space = true
			}
			return
		case html.ElementNode:
			if n.Data == "td" || n.Data == "th" {
				space = true
			}
			sep := blockBreaks[n.Data]
			brk(sep)
			for c := n.FirstChild; c != nil; c = c.NextSibling {
				walk(c)
			}
			brk(sep)
			if n.Data == "td" || n.Data == "th" {
				space = true
			}
			return
		}
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			walk(c)
		}
	}
	walk(root)
	return b.String()
}

// startsWithSpace and endsWithSpace use the same notion of space as
// strings.Fields (no-break space included), so a word is never glued to
// its neighbour across an inline element.
func startsWithSpace(s string) bool { return strings.TrimLeftFunc(s, unicode.IsSpace) != s }
func endsWithSpace(s string) bool   { return strings.TrimRightFunc(s, unicode.IsSpace) != s }
