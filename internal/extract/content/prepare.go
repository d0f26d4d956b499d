package content

import (
	"bytes"
	"fmt"
	"strings"

	"golang.org/x/net/html"
	"golang.org/x/text/unicode/norm"

	"github.com/browsertask/browsertask/internal/extract/page"
	"github.com/browsertask/browsertask/internal/extract/weburl"
)

// MaxInputBytes is the largest page Extract reads. Main-content extraction
// walks the tree many times (go-trafilatura, then readability and DOM
// distiller as fallbacks, each on its own copy of the tree). Measured here
// on a page of linked paragraphs, lists and headings (2 cores, loaded):
// 8 MiB took 84 s of CPU and 2.2 GB of memory, 3 MiB 14 s and under 1 GB.
// The largest page of go-trafilatura's comparison set is 1.6 MB, so 3 MiB
// keeps every real page in reach while a 10 MB page is refused at once
// with an error naming the limit and the way out (the "text" format),
// rather than holding a worker and a gigabyte for minutes.
const MaxInputBytes = 3 << 20

// TooLargeError is the error of a page over MaxInputBytes.
type TooLargeError struct{ Size int }

// Error names the size and the limit.
func (e *TooLargeError) Error() string {
	return fmt.Sprintf("the page's HTML is %d bytes, above the main-content extraction limit of %d bytes; ask for the \"text\" format instead", e.Size, MaxInputBytes)
}

// prepared is the page after the pass that runs before the extractor: the
// parsed tree with every link and image made absolute, the languages of
// its code blocks, and the metadata the extractor does not read.
type prepared struct {
	doc *html.Node
	// codeLangs maps a code block's text (whitespace collapsed) to the
	// language its markup names; the extractor drops the class that says
	// it, so restore puts it back by matching the text.
	codeLangs map[string]string
	canonical string
	openGraph map[string]string
}

// prepare parses body and readies it for the extractor. The only error is
// the parser's refusal (a *page.DepthError past page.MaxDepth levels).
//
// A UTF-8 page that was read as windows-1252 is read again as UTF-8 first
// (repairMojibake). The page is then put in Unicode normalization form C:
// pages saved from some systems spell "ü" as "u" plus a combining mark,
// which looks the same but matches nothing a person or a model types
// (go-trafilatura's own parser, go-shiori/dom, normalizes the same way).
// Soft hyphens are dropped from the text (see dropSoftHyphens).
func prepare(body []byte, pageURL string) (*prepared, error) {
	if fixed, ok := repairMojibake(string(body)); ok {
		body = []byte(fixed)
	}
	if !norm.NFC.IsNormal(body) {
		body = norm.NFC.Bytes(body)
	}
	doc, err := html.ParseWithOptions(bytes.NewReader(body), html.ParseOptionEnableScripting(true))
	if err != nil {
		return nil, page.ParseError(err)
	}
	p := &prepared{doc: doc, codeLangs: map[string]string{}}
	base, _ := weburl.Parse(pageURL)
	if base != nil {
		if b := findElement(doc, "base"); b != nil {
			if href, ok := attr(b, "href"); ok {
				if bu, err := weburl.ParseRef(href, base); err == nil {
					base = bu
				}
			}
		}
	}
	p.walk(doc, base)
	return p, nil
}

// walk makes URLs absolute, records code languages and reads the head's
// canonical link and Open Graph properties, in one pass over the tree.
func (p *prepared) walk(n *html.Node, base *weburl.URL) {
	if n.Type == html.TextNode {
		n.Data = dropSoftHyphens(n.Data)
	}
	if n.Type == html.ElementNode {
		switch n.Data {
		case "a", "area":
			absolutize(n, "href", base)
		case "img", "source":
			absolutize(n, "src", base)
			absolutize(n, "data-src", base)
		case "link":
			if hasToken(n, "rel", "canonical") && p.canonical == "" {
				if href, ok := attr(n, "href"); ok && strings.TrimSpace(href) != "" {
					p.canonical = webAddress(resolve(href, base))
				}
			}
		case "meta":
			p.readMeta(n, base)
		case "pre":
			if lang := codeLanguage(n); lang != "" {
				p.codeLangs[collapse(dropSoftHyphens(textOf(n)))] = lang
			}
		}
	}
	for c := n.FirstChild; c != nil; {
		next := c.NextSibling
		if isPermalink(c) {
			n.RemoveChild(c)
		} else {
			p.walk(c, base)
		}
		c = next
	}
}

// permalinkTexts are what a heading's permalink anchor shows: Sphinx's and
// MkDocs' "¶", "§", the "#" of GitHub, Docusaurus and VitePress, a link
// symbol, or nothing (an icon drawn by CSS or an <svg>).
var permalinkTexts = map[string]bool{"": true, "¶": true, "§": true, "#": true, "🔗": true, "⚓": true, "∞": true}

// isPermalink reports whether n is a heading's permalink anchor: a link
// to a fragment of the page itself ("#section-id") showing only a mark
// (permalinkTexts) and no image. It is navigation inside the page, not
// content: left in, every heading of a documentation page reads
// "# Title[¶](https://…#title)" in the Markdown. A footnote or a table
// of contents ("#fn1" showing "1", "#setup" showing "Setup") shows words
// and stays.
func isPermalink(n *html.Node) bool {
	if n.Type != html.ElementNode || n.Data != "a" {
		return false
	}
	href, _ := attr(n, "href")
	if href = strings.TrimSpace(href); len(href) < 2 || href[0] != '#' {
		return false
	}
	if findElement(n, "img") != nil {
		return false
	}
	return permalinkTexts[strings.TrimSpace(textOf(n))]
}

// webAddress is u when it is an http or https URL, else "": a canonical
// link that names a file on the machine the pages were built on
// (file:///usr/share/doc/… in Debian's documentation packages) is no
// address anyone can fetch.
func webAddress(u string) string {
	l := strings.ToLower(u)
	if strings.HasPrefix(l, "http://") || strings.HasPrefix(l, "https://") {
		return u
	}
	return ""
}

// softHyphen is U+00AD, a hyphenation hint ("&shy;").
const softHyphen = "\u00ad"

// dropSoftHyphens removes soft hyphens from s. A soft hyphen is a hint
// where a word may break at a line end; a browser shows nothing for it
// elsewhere, but it stays in the text, where it splits the word for
// anyone who searches or tokenizes it ("Bundes\u00adregierung" matches
// no query for "Bundesregierung", and a model reads two pieces).
// German and Polish news pages set them inside long words; on
// go-trafilatura's comparison set 4 pages lost expected snippets to
// them. go-shiori/dom, go-trafilatura's parser, drops them the same way
// (the raw character, not the &shy; entity; here both).
func dropSoftHyphens(s string) string {
	if !strings.Contains(s, softHyphen) {
		return s
	}
	return strings.ReplaceAll(s, softHyphen, "")
}

// address is the page's address for the date search: its canonical link,
// else its og:url, else pageURL (the order go-trafilatura reads them in).
func (p *prepared) address(pageURL string) string {
	if p.canonical != "" {
		return p.canonical
	}
	if u := p.openGraph["url"]; u != "" {
		return u
	}
	return pageURL
}

// readMeta keeps an og:* property (the property attribute, or name as
// some sites write it); image and url values are made absolute.
func (p *prepared) readMeta(n *html.Node, base *weburl.URL) {
	key, ok := attr(n, "property")
	if !ok || !strings.HasPrefix(strings.ToLower(key), "og:") {
		key, ok = attr(n, "name")
	}
	key = strings.ToLower(strings.TrimSpace(key))
	if !ok || !strings.HasPrefix(key, "og:") || len(key) == 3 {
		return
	}
	val, ok := attr(n, "content")
	val = strings.TrimSpace(val)
	if !ok || val == "" {
		return
	}
	key = key[3:]
	if key == "image" || key == "url" || strings.HasPrefix(key, "image:url") || key == "audio" || key == "video" {
		val = resolve(val, base)
	}
	if p.openGraph == nil {
		p.openGraph = map[string]string{}
	}
	if _, seen := p.openGraph[key]; !seen {
		p.openGraph[key] = val // the first wins, as Open Graph readers do
	}
}

// codeLanguage reads the language a code block's markup names: a
// language-X or lang-X class on the pre or its code child (the
// convention CommonMark renderers and highlight.js write), or GitHub's
// highlight-source-X on the parent.
func codeLanguage(pre *html.Node) string {
	nodes := []*html.Node{pre}
	for c := pre.FirstChild; c != nil; c = c.NextSibling {
		if c.Type == html.ElementNode && c.Data == "code" {
			nodes = append(nodes, c)
		}
	}
	if pre.Parent != nil {
		nodes = append(nodes, pre.Parent)
	}
	for _, n := range nodes {
		class, _ := attr(n, "class")
		for _, f := range strings.Fields(class) {
			for _, prefix := range []string{"language-", "lang-", "highlight-source-"} {
				if l, ok := strings.CutPrefix(f, prefix); ok && validLanguage(l) {
					return l
				}
			}
		}
	}
	return ""
}

// validLanguage keeps a fence's info string to a plain word, so no class
// value can break out of the fence line.
func validLanguage(l string) bool {
	if l == "" || len(l) > 32 {
		return false
	}
	for _, r := range l {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("+-#._", r)) {
			return false
		}
	}
	return true
}

// absolutize resolves the attribute key of n against base in place; a
// value that does not resolve is left as written.
func absolutize(n *html.Node, key string, base *weburl.URL) {
	for i, a := range n.Attr {
		if a.Namespace == "" && a.Key == key {
			n.Attr[i].Val = resolve(a.Val, base)
		}
	}
}

// resolve is ref resolved against base the way a browser does, or ref
// (trimmed) when there is no base or it does not resolve.
func resolve(ref string, base *weburl.URL) string {
	ref = strings.TrimSpace(ref)
	if base == nil {
		return ref
	}
	u, err := weburl.ParseRef(ref, base)
	if err != nil {
		return ref
	}
	return u.String()
}
