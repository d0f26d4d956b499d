package page

import (
	"bytes"
	"encoding/json"
	"fmt"
	"sort"
	"strings"
	"unicode/utf16"
	"unicode/utf8"

	"github.com/andybalholm/cascadia"
	"golang.org/x/net/html"
	"golang.org/x/net/html/atom"
)

// Field is one requested value: the same shape and JSON as an entry of the
// templates' inputs.fields in its long form ({selector, attr?, all?}).
type Field struct {
	// Selector is a CSS selector; the first match gives the value, or
	// every match with All.
	Selector string `json:"selector"`
	// Attr is "" or "text" (the element's visible text, whitespace
	// collapsed), "html" (innerHTML), or an attribute name ("href" and
	// "src" come back absolute on the elements a browser resolves them
	// for; any other attribute as written, null when absent).
	Attr string `json:"attr,omitempty"`
	// All returns every match as a list.
	All bool `json:"all,omitempty"`
}

// Options say what to extract; the JSON matches the browser script's
// configuration (templates' extractOptions).
type Options struct {
	Fields map[string]Field `json:"fields"`
	// Text, Links and Meta ask for the visible text, the links and the
	// meta tags.
	Text  bool `json:"text"`
	Links bool `json:"links"`
	Meta  bool `json:"meta"`
	// MaxText caps the text in UTF-16 code units (JavaScript string
	// length), MaxLinks the number of links.
	MaxText  int `json:"maxText"`
	MaxLinks int `json:"maxLinks"`
	// MaxValueChars, MaxFieldChars, MaxValues and MaxPageFieldChars cap
	// the fields' values (caps.go; 0 takes the Default* constant).
	MaxValueChars     int `json:"maxValueChars"`
	MaxFieldChars     int `json:"maxFieldChars"`
	MaxValues         int `json:"maxValues"`
	MaxPageFieldChars int `json:"maxPageFieldChars"`
}

// Link is one link of a page.
type Link struct {
	Href string `json:"href"`
	Text string `json:"text"`
}

// Result is what the browser's extraction script returns, field for field
// and with the same JSON, so a caller can treat both paths alike.
type Result struct {
	// URL is the document's URL (location.href).
	URL   string `json:"url"`
	Title string `json:"title"`
	// Fields holds one value per requested field: a string or nil, or for
	// All a []any of strings (nil for a missing attribute).
	Fields map[string]any `json:"fields"`
	// FieldErrors names the fields whose selector cannot be used, with
	// the reason.
	FieldErrors map[string]string `json:"fieldErrors"`
	// FieldsCapped names the fields whose value was cut by the caps
	// (caps.go), saying how; absent when none was.
	FieldsCapped map[string]FieldCap `json:"fieldsCapped,omitempty"`
	// Text is the visible text when asked for, TextTruncated true when it
	// was cut at MaxText.
	Text          *string `json:"text,omitempty"`
	TextTruncated bool    `json:"textTruncated"`
	Links         []Link  `json:"links,omitempty"`
	// LinksTruncated is true when the page had more distinct links than
	// MaxLinks.
	LinksTruncated bool `json:"linksTruncated"`
	// LinksFound is how many distinct links the page has, counted past
	// MaxLinks, so a cut can say what it left out (templates' linksCapped).
	LinksFound int               `json:"linksFound,omitempty"`
	Meta       map[string]string `json:"meta,omitempty"`
}

// maxLinkText is how many UTF-16 code units of a link's text are kept.
const maxLinkText = 200

// maxMetaKeys is how many distinct meta keys are kept.
const maxMetaKeys = 200

// Extract parses body (UTF-8 HTML) as the page at pageURL and extracts
// what o asks for. The error is ParseString's (a *DepthError).
func Extract(body, pageURL string, o Options) (*Result, error) {
	d, err := ParseString(body, pageURL)
	if err != nil {
		return nil, err
	}
	return NewExtractor(o).Extract(d), nil
}

// Extract extracts what o asks for from the document (NewExtractor(o),
// then its Extract; a run with many pages should make the Extractor once).
func (d *Document) Extract(o Options) *Result {
	return NewExtractor(o).Extract(d)
}

// Extractor applies one set of Options to many documents, with the field
// selectors compiled once. It is safe for concurrent use.
type Extractor struct {
	opts   Options
	caps   caps
	sels   map[string]*Selector
	errors map[string]string
}

// NewExtractor compiles o's field selectors. A field whose selector cannot
// be compiled is named in FieldErrors (CompileSelector's message) and in
// every Result's FieldErrors, and left out of Fields, as the browser
// script does with a selector querySelector refuses.
func NewExtractor(o Options) *Extractor {
	e := &Extractor{opts: o, caps: capsOf(o), sels: map[string]*Selector{}, errors: map[string]string{}}
	for name, f := range o.Fields {
		sel, err := CompileSelector(f.Selector)
		if err != nil {
			e.errors[name] = err.Error()
			continue
		}
		e.sels[name] = sel
	}
	return e
}

// FieldErrors returns the fields whose selector could not be compiled, by
// name, with the reason.
func (e *Extractor) FieldErrors() map[string]string {
	out := make(map[string]string, len(e.errors))
	for k, v := range e.errors {
		out[k] = v
	}
	return out
}

// Extract extracts from one document.
func (e *Extractor) Extract(d *Document) *Result {
	r := &Result{URL: d.url, Title: d.Title(), Fields: map[string]any{}, FieldErrors: e.FieldErrors()}
	e.extractFields(d, r)
	if e.opts.Text {
		t, cut := d.Text(e.opts.MaxText)
		r.Text, r.TextTruncated = &t, cut
	}
	if e.opts.Links {
		r.Links, r.LinksFound = d.CountedLinks(e.opts.MaxLinks)
		r.LinksTruncated = r.LinksFound > len(r.Links)
	}
	if e.opts.Meta {
		r.Meta = d.Meta()
	}
	return r
}

// DifferentFields compares two results' fields (from this package or
// from the browser script, decoded from JSON or not) and returns the
// names whose values differ, sorted; a name present in only one differs.
// `auto` mode uses it to tell whether the HTML alone gives what the
// browser gives.
func DifferentFields(a, b map[string]any) []string {
	var out []string
	for name, va := range a {
		vb, ok := b[name]
		if !ok || !sameValue(va, vb) {
			out = append(out, name)
		}
	}
	for name := range b {
		if _, ok := a[name]; !ok {
			out = append(out, name)
		}
	}
	sort.Strings(out)
	return out
}

// sameValue compares two field values through their JSON form, so []any
// and []string (or a nil and an absent value) compare by content.
func sameValue(a, b any) bool {
	ja, errA := json.Marshal(a)
	jb, errB := json.Marshal(b)
	return errA == nil && errB == nil && bytes.Equal(ja, jb)
}

// FieldValue is the value of field f whose selector sel was compiled by
// CompileSelector: nil or a string, or a []any for f.All.
func (d *Document) FieldValue(sel *Selector, f Field) any {
	if f.All {
		matches := cascadia.QueryAll(d.root, sel.group)
		out := make([]any, 0, len(matches))
		for _, el := range matches {
			out = append(out, d.value(el, f.Attr))
		}
		return out
	}
	el := cascadia.Query(d.root, sel.group)
	if el == nil {
		return nil
	}
	return d.value(el, f.Attr)
}

// value is the browser script's val(el, attr): the element's text, its
// innerHTML, a resolved href/src, or an attribute (nil when absent).
func (d *Document) value(el *html.Node, name string) any {
	switch name {
	case "", "text":
		return d.ElementText(el)
	case "html":
		return d.innerHTML(el)
	case "href", "src":
		if reflectsURL(el, name) {
			if v, ok := attr(el, name); ok {
				if u := d.resolve(v); u != "" {
					return u
				}
			}
		}
	}
	key := name
	if el.Namespace == "" {
		key = strings.ToLower(name)
	}
	for _, a := range el.Attr {
		if attrName(a) == key {
			return a.Val
		}
	}
	return nil
}

// attrName is an attribute's qualified name (xlink:href for the XLink
// attributes of SVG).
func attrName(a html.Attribute) string {
	if a.Namespace != "" {
		return a.Namespace + ":" + a.Key
	}
	return a.Key
}

// reflectsURL reports whether an HTML element's href or src property is a
// string holding the resolved URL (HTMLAnchorElement.href,
// HTMLImageElement.src and their kin).
func reflectsURL(el *html.Node, name string) bool {
	if el.Namespace != "" {
		return false
	}
	switch name {
	case "href":
		switch el.DataAtom {
		case atom.A, atom.Area, atom.Link, atom.Base:
			return true
		}
	case "src":
		switch el.DataAtom {
		case atom.Img, atom.Script, atom.Iframe, atom.Frame, atom.Embed, atom.Source,
			atom.Track, atom.Input, atom.Audio, atom.Video:
			return true
		}
	}
	return false
}

// Links returns the page's links as the browser script collects them:
// every <a href> in document order, href resolved, the first occurrence of
// each href, its text whitespace-collapsed and cut at 200 UTF-16 code
// units, at most max links. Links of SVG (<svg><a href>) are left out:
// their href is no string in a browser.
func (d *Document) Links(max int) []Link {
	out, _ := d.CappedLinks(max)
	return out
}

// CappedLinks is Links, also reporting whether the page had more distinct
// links than max (the result's linksTruncated).
func (d *Document) CappedLinks(max int) (links []Link, truncated bool) {
	links, found := d.CountedLinks(max)
	return links, found > len(links)
}

// CountedLinks is Links, also counting the page's distinct links past max
// (the result's linksFound): a cut can say how many it left out. Only the
// hrefs past max are kept (to count them once), not their text.
func (d *Document) CountedLinks(max int) (links []Link, found int) {
	out := []Link{}
	seen := map[string]bool{}
	walk(d.root, func(n *html.Node) bool {
		if !isHTML(n, atom.A) {
			return true
		}
		v, ok := attr(n, "href")
		if !ok {
			return true
		}
		href := d.resolve(v)
		if href == "" || seen[href] {
			return true
		}
		seen[href] = true
		if len(out) >= max {
			return true
		}
		t := d.innerText(n)
		if t == "" {
			t = textContent(n)
		}
		out = append(out, Link{Href: href, Text: cutUTF16(clean(t), maxLinkText)})
		return true
	})
	return out, len(seen)
}

// Meta returns the meta tags as the browser script collects them: for each
// <meta> with a name, property or http-equiv (the first non-empty of
// these, in that order) and a content attribute, key → content (later
// tags win, at most 200 keys), then "canonical" (the first
// <link rel=canonical>'s resolved href) and "lang" (<html lang>) when
// present.
func (d *Document) Meta() map[string]string {
	out := map[string]string{}
	var canon *html.Node
	walk(d.root, func(n *html.Node) bool {
		switch {
		case isHTML(n, atom.Meta):
			key := ""
			for _, k := range []string{"name", "property", "http-equiv"} {
				if v, _ := attr(n, k); v != "" {
					key = v
					break
				}
			}
			content, ok := attr(n, "content")
			if key != "" && ok && len(out) < maxMetaKeys {
				out[key] = content
			}
		case canon == nil && isHTML(n, atom.Link):
			if rel, ok := attr(n, "rel"); ok && strings.EqualFold(rel, "canonical") {
				canon = n
			}
		}
		return true
	})
	if canon != nil {
		if v, ok := attr(canon, "href"); ok {
			if u := d.resolve(v); u != "" {
				out["canonical"] = u
			}
		}
	}
	if de := d.documentElement(); de != nil && de.Namespace == "" {
		if lang, _ := attr(de, "lang"); lang != "" {
			out["lang"] = lang
		}
	}
	return out
}

// Text returns body.innerText (see text.go) as the browser script reduces
// it: spaces and tabs before a line break removed, runs of three or more
// line breaks made two, trimmed, and cut at max UTF-16 code units (never
// inside a surrogate pair). cut tells whether it was cut.
func (d *Document) Text(max int) (text string, cut bool) {
	b := d.body()
	if b == nil {
		return "", false
	}
	t := reduceText(d.innerText(b))
	if utf16Len(t) > max {
		return cutTextUTF16(t, max), true
	}
	return t, false
}

// cutTextUTF16 cuts s to at most max UTF-16 code units, one less when the
// cut would split a surrogate pair (the script's end-- on a high
// surrogate).
func cutTextUTF16(s string, max int) string {
	n := 0
	for i, r := range s {
		n += utf16.RuneLen(r)
		if n > max {
			return s[:i]
		}
	}
	return s
}

// reduceText is the script's
// t.replace(/[ \t]+\n/g, '\n').replace(/\n{3,}/g, '\n\n').trim().
func reduceText(t string) string {
	var b strings.Builder
	b.Grow(len(t))
	spaces := 0 // pending run of spaces and tabs, not yet written
	newlines := 0
	flushSpaces := func(upTo int) {
		b.WriteString(t[upTo-spaces : upTo])
		spaces = 0
	}
	for i := 0; i < len(t); i++ {
		c := t[i]
		switch c {
		case ' ', '\t':
			spaces++
		case '\n':
			spaces = 0
			newlines++
		default:
			if newlines > 0 {
				b.WriteString(strings.Repeat("\n", min(newlines, 2)))
				newlines = 0
			}
			if spaces > 0 {
				flushSpaces(i)
			}
			b.WriteByte(c)
		}
	}
	if newlines > 0 {
		b.WriteString(strings.Repeat("\n", min(newlines, 2)))
	}
	if spaces > 0 {
		flushSpaces(len(t))
	}
	return strings.TrimFunc(b.String(), isJSSpace)
}

// clean is the script's clean(): runs of JavaScript whitespace (\s)
// become one space, and the ends are trimmed.
func clean(s string) string {
	var b strings.Builder
	b.Grow(len(s))
	space := false
	for _, r := range s {
		if isJSSpace(r) {
			space = true
			continue
		}
		if space && b.Len() > 0 {
			b.WriteByte(' ')
		}
		space = false
		b.WriteRune(r)
	}
	return b.String()
}

// isJSSpace is JavaScript's \s (WhiteSpace and LineTerminator), which is
// also what String.prototype.trim removes.
func isJSSpace(r rune) bool {
	switch r {
	case '\t', '\n', '\v', '\f', '\r', ' ', 0xa0, 0x1680, 0x2028, 0x2029, 0x202f, 0x205f, 0x3000, 0xfeff:
		return true
	}
	return r >= 0x2000 && r <= 0x200a
}

// utf16Len is a string's JavaScript length.
func utf16Len(s string) int {
	n := 0
	for _, r := range s {
		n += utf16.RuneLen(r)
	}
	return n
}

// cutUTF16 cuts s after max UTF-16 code units, as String.prototype.slice
// does. A surrogate pair cut in half leaves a lone high surrogate in
// JavaScript, which reaches Go (through JSON) as U+FFFD; so does this.
func cutUTF16(s string, max int) string {
	n := 0
	for i, r := range s {
		w := utf16.RuneLen(r)
		if n+w > max {
			if n < max {
				return s[:i] + string(utf8.RuneError)
			}
			return s[:i]
		}
		n += w
	}
	return s
}

// CompileSelector compiles a CSS selector as querySelector would take it.
// It refuses what cascadia accepts but browsers do not (:contains,
// :matches, :haschild, :input and the [attr#=regexp], [attr!=value]
// operators), so a selector never matches here and fails in a browser.
// Errors name the selector and the reason; a selector browsers accept but
// cascadia cannot parse (such as :is() or :where()) fails too, so callers
// should then use the browser.
func CompileSelector(sel string) (*Selector, error) {
	if ext := nonStandard(sel); ext != "" {
		return nil, fmt.Errorf("%q is not a valid selector: %s is a cascadia extension that browsers do not know", sel, ext)
	}
	s, err := cascadia.ParseGroup(sel)
	if err != nil {
		return nil, fmt.Errorf("%q is not a selector the HTML path can use (%v); if a browser accepts it, extract with the browser", sel, err)
	}
	return &Selector{group: s}, nil
}

// Selector is a compiled CSS selector (a group: "a, b" matches either).
type Selector struct {
	group cascadia.SelectorGroup
}

// nonStandard returns the first cascadia-only construct in sel (outside
// quoted strings), or "".
func nonStandard(sel string) string {
	var quote byte
	for i := 0; i < len(sel); i++ {
		c := sel[i]
		switch {
		case c == '\\':
			i++
		case quote != 0:
			if c == quote {
				quote = 0
			}
		case c == '"' || c == '\'':
			quote = c
		case (c == '!' || c == '#') && i+1 < len(sel) && sel[i+1] == '=':
			return string(c) + "="
		case c == ':':
			j := i + 1
			for j < len(sel) && (isIdentByte(sel[j])) {
				j++
			}
			switch name := strings.ToLower(sel[i+1 : j]); name {
			case "contains", "containsown", "matches", "matchesown", "haschild", "input":
				return ":" + name
			}
		}
	}
	return ""
}

func isIdentByte(c byte) bool {
	return c == '-' || c == '_' || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9')
}
