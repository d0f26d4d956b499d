package fidelity

import (
	"bytes"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strings"

	"golang.org/x/net/html"
	"golang.org/x/net/html/atom"
	"golang.org/x/net/html/charset"
)

// Source is what the classifier knows of a page's own markup: the words
// of each kind of content one path may read and the other not. It is read
// from the file on disk, not through either path, so that it can judge
// both.
type Source struct {
	// Words counts the words of every text node (and, once each, of the
	// attributes a reader shows: alt, title, value, content), lower-cased:
	// a word the browser reads more often than here was written by a
	// script.
	Words map[string]int
	// Noscript, Hidden, Details and Template are the words inside
	// <noscript>, inside elements with the hidden attribute or an inline
	// style that hides them, inside closed <details> (past the summary),
	// and inside <template>.
	Noscript, Hidden, Details, Template map[string]bool
	// Hrefs are the links of the markup resolved against the page URL
	// (and <base>), NoscriptHrefs those inside <noscript>.
	Hrefs, NoscriptHrefs map[string]bool
	// HideRules is true when the page's stylesheets (<style> or linked
	// files under the corpus) hold a rule that hides content (display:
	// none, visibility: hidden, content-visibility).
	HideRules bool
	// TransformRules is true when they hold text-transform.
	TransformRules bool
	// Scripts is true when the page has a <script>.
	Scripts bool
	// Navigates is true when an inline script assigns the page's
	// location; AMPBoilerplate when the page has AMP's boilerplate style
	// (offline.go).
	Navigates, AMPBoilerplate bool
}

// hideRule finds declarations that hide content; it only flags a page as
// having such rules (the classifier's hint), it does not decide what is
// hidden.
var hideRule = regexp.MustCompile(`(?i)(display\s*:\s*none|visibility\s*:\s*hidden|content-visibility\s*:\s*hidden)`)

// ReadSource reads the page file at path (pageURL is where it is served,
// root the corpus directory that linked stylesheets are read from).
func ReadSource(path, pageURL, root string) (*Source, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	return ParseSource(data, pageURL, func(ref string) []byte {
		return readLocalCSS(root, pageURL, ref)
	}), nil
}

// ParseSource analyses a page's bytes; css, when not nil, returns the bytes
// of a linked stylesheet (nil when unavailable).
func ParseSource(data []byte, pageURL string, css func(href string) []byte) *Source {
	enc, _, _ := charset.DetermineEncoding(data, "text/html")
	if dec, err := enc.NewDecoder().Bytes(data); err == nil {
		data = dec
	}
	s := &Source{Words: map[string]int{}, Noscript: map[string]bool{}, Hidden: map[string]bool{},
		Details: map[string]bool{}, Template: map[string]bool{}, Hrefs: map[string]bool{}, NoscriptHrefs: map[string]bool{}}
	doc, err := html.Parse(bytes.NewReader(data))
	if err != nil {
		return s
	}
	base, _ := url.Parse(pageURL)
	if b := find(doc, atom.Base); b != nil && base != nil {
		if h, ok := attr(b, "href"); ok {
			if u, err := base.Parse(strings.TrimSpace(h)); err == nil {
				base = u
			}
		}
	}
	s.walk(doc, base, css, walkState{})
	return s
}

// walkState is what the ancestors of a node say about it.
type walkState struct{ noscript, hidden, details, template bool }

// walk collects the words and links of n and its descendants.
func (s *Source) walk(n *html.Node, base *url.URL, css func(string) []byte, st walkState) {
	switch n.Type {
	case html.TextNode:
		s.addWords(n.Data, st)
		return
	case html.ElementNode:
		switch n.DataAtom {
		case atom.Script:
			s.Scripts = true
			s.noteScript(n)
			return
		case atom.Style:
			css := textOf(n)
			s.styleRules(css)
			s.noteStyle(n, css)
			return
		case atom.Noscript:
			// Parsed with scripting on, its content is one text node: parse
			// that as markup, as a browser without JavaScript would.
			inner := &html.Node{Type: html.ElementNode, Data: "div", DataAtom: atom.Div}
			nodes, _ := html.ParseFragmentWithOptions(strings.NewReader(textOf(n)), inner, html.ParseOptionEnableScripting(false))
			ns := st
			ns.noscript = true
			for _, c := range nodes {
				s.walk(c, base, css, ns)
			}
			return
		case atom.Template:
			st.template = true
		case atom.Link:
			if rel, _ := attr(n, "rel"); strings.Contains(strings.ToLower(rel), "stylesheet") && css != nil {
				if h, ok := attr(n, "href"); ok {
					s.styleRules(string(css(h)))
				}
			}
		case atom.Details:
			if _, open := attr(n, "open"); !open {
				for c := n.FirstChild; c != nil; c = c.NextSibling {
					cs := st
					if c.DataAtom != atom.Summary {
						cs.details = true
					}
					s.walk(c, base, css, cs)
				}
				return
			}
		}
		if _, ok := attr(n, "hidden"); ok {
			st.hidden = true
		}
		if style, ok := attr(n, "style"); ok && hideRule.MatchString(style) {
			st.hidden = true
		}
		for _, a := range n.Attr {
			switch a.Key {
			case "alt", "title", "value", "content", "placeholder", "aria-label":
				for _, w := range Tokens(a.Val) {
					if l := strings.ToLower(w); s.Words[l] == 0 {
						s.Words[l] = 1
					}
				}
			case "href":
				if n.DataAtom == atom.A || n.DataAtom == atom.Area {
					s.addHref(a.Val, base, st)
				}
			}
		}
	}
	for c := n.FirstChild; c != nil; c = c.NextSibling {
		s.walk(c, base, css, st)
	}
}

// addWords files the words of text by where they are.
func (s *Source) addWords(text string, st walkState) {
	for _, w := range Tokens(text) {
		w = strings.ToLower(w)
		s.Words[w]++
		if st.noscript {
			s.Noscript[w] = true
		}
		if st.hidden {
			s.Hidden[w] = true
		}
		if st.details {
			s.Details[w] = true
		}
		if st.template {
			s.Template[w] = true
		}
	}
}

// addHref files a link resolved against base.
func (s *Source) addHref(href string, base *url.URL, st walkState) {
	h := strings.TrimSpace(href)
	if base != nil {
		if u, err := base.Parse(h); err == nil {
			h = u.String()
		}
	}
	if st.noscript {
		s.NoscriptHrefs[h] = true
	} else {
		s.Hrefs[h] = true
	}
}

// styleRules notes what a stylesheet's rules can change of the text.
func (s *Source) styleRules(css string) {
	if hideRule.MatchString(css) {
		s.HideRules = true
	}
	if strings.Contains(strings.ToLower(css), "text-transform") {
		s.TransformRules = true
	}
}

// readLocalCSS reads a same-origin stylesheet from the corpus directory.
func readLocalCSS(root, pageURL, href string) []byte {
	pu, err := url.Parse(pageURL)
	if err != nil {
		return nil
	}
	u, err := pu.Parse(strings.TrimSpace(href))
	if err != nil || u.Host != pu.Host {
		return nil
	}
	p := filepath.Join(root, filepath.FromSlash(filepath.Clean("/"+u.Path)))
	data, err := os.ReadFile(p)
	if err != nil {
		return nil
	}
	return data
}

// find returns the first element of type a under n.
func find(n *html.Node, a atom.Atom) *html.Node {
	if n.Type == html.ElementNode && n.DataAtom == a {
		return n
	}
	for c := n.FirstChild; c != nil; c = c.NextSibling {
		if f := find(c, a); f != nil {
			return f
		}
	}
	return nil
}

// attr returns the value of attribute key of n.
func attr(n *html.Node, key string) (string, bool) {
	for _, a := range n.Attr {
		if a.Key == key {
			return a.Val, true
		}
	}
	return "", false
}

// textOf concatenates the text nodes under n.
func textOf(n *html.Node) string {
	var b strings.Builder
	var rec func(*html.Node)
	rec = func(n *html.Node) {
		if n.Type == html.TextNode {
			b.WriteString(n.Data)
		}
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			rec(c)
		}
	}
	rec(n)
	return b.String()
}
