package page

import (
	"strings"

	"github.com/andybalholm/cascadia"
	"golang.org/x/net/html"
	"golang.org/x/net/html/atom"
)

// SheetLoader returns the parsed style sheet at an absolute URL, or nil
// when it cannot or may not be read (another origin, refused by the URL
// policy, an error status, the page's budget spent). A nil sheet means
// no rule from it, never a failed page. It is called in document order,
// once per <link rel=stylesheet> and @import.
type SheetLoader func(url string) *StyleSheet

// SheetUse says what became of one style sheet of a page (see
// Document.StyleReport): URL is empty for a <style> element; Applied is
// false with the reason when no rule of it counts.
type SheetUse struct {
	URL     string `json:"url,omitempty"`
	Applied bool   `json:"applied"`
	Reason  string `json:"reason,omitempty"`
}

// docStyles is a document's cascade, computed on first need.
type docStyles struct {
	computed map[*html.Node]map[string]string
	report   []SheetUse
	// capped is true when a cap of css.go left rules out.
	capped bool
}

// LoadStyleSheets reads the page's style sheets again, this time with
// the linked ones and their @import from load (without it only <style>
// elements count, and their @import are not followed). Call it before
// extracting; package fetch does, with its same-origin, policy-checked
// loader.
func (d *Document) LoadStyleSheets(load SheetLoader) {
	d.loader = load
	d.css = nil
}

// StyleReport lists the page's style sheets in cascade order with what
// became of each, and whether a cap (css.go) left rules out.
func (d *Document) StyleReport() (sheets []SheetUse, capped bool) {
	st := d.styles()
	return st.report, st.capped
}

// styleOf is the cascaded value of the text properties for el (nil when
// no rule or style attribute sets one).
func (d *Document) styleOf(el *html.Node) map[string]string {
	return d.styles().computed[el]
}

// styles computes the cascade once.
func (d *Document) styles() *docStyles {
	if d.css != nil {
		return d.css
	}
	c := &sheetCollector{d: d, st: &docStyles{computed: map[*html.Node]map[string]string{}}}
	walk(d.root, func(n *html.Node) bool {
		switch {
		case isHTML(n, atom.Style) || (n.Type == html.ElementNode && n.Namespace == "svg" && n.Data == "style"):
			c.styleElement(n)
		case isHTML(n, atom.Link):
			c.linkElement(n)
		}
		return true
	})
	c.st.capped = c.st.capped || c.capped
	d.css = c.st
	d.cascade(c.sheets)
	return d.css
}

// sheetCollector gathers a document's applied sheets in cascade order.
type sheetCollector struct {
	d      *Document
	st     *docStyles
	sheets []*StyleSheet
	bytes  int
	loaded int
	capped bool
}

// styleElement adds a <style> element's sheet.
func (c *sheetCollector) styleElement(n *html.Node) {
	if t, ok := attr(n, "type"); ok && !isCSSType(t) {
		return
	}
	if m, _ := attr(n, "media"); !mediaMatches(m) {
		return
	}
	base := c.d.url
	if c.d.base != nil {
		base = c.d.base.String()
	}
	c.add("", ParseStyleSheet(textContent(n), base), 0)
}

// linkElement adds a <link rel=stylesheet>'s sheet through the loader.
func (c *sheetCollector) linkElement(n *html.Node) {
	rel, _ := attr(n, "rel")
	stylesheet, alternate := false, false
	for _, r := range strings.Fields(strings.ToLower(rel)) {
		stylesheet = stylesheet || r == "stylesheet"
		alternate = alternate || r == "alternate"
	}
	href, ok := attr(n, "href")
	if !stylesheet || alternate || !ok || strings.TrimSpace(href) == "" {
		return
	}
	if _, off := attr(n, "disabled"); off {
		return
	}
	if t, ok := attr(n, "type"); ok && !isCSSType(t) {
		return
	}
	if m, _ := attr(n, "media"); !mediaMatches(m) {
		return
	}
	c.linked(c.d.resolve(href), 0)
}

// linked loads the sheet at u (a link or an @import at depth).
func (c *sheetCollector) linked(u string, depth int) {
	switch {
	case c.d.loader == nil:
		c.st.report = append(c.st.report, SheetUse{URL: u, Reason: "linked style sheets were not loaded"})
		return
	case c.loaded >= MaxStyleSheets:
		c.capped = true
		c.st.report = append(c.st.report, SheetUse{URL: u, Reason: "more than MaxStyleSheets sheets"})
		return
	}
	c.loaded++
	s := c.d.loader(u)
	if s == nil {
		c.st.report = append(c.st.report, SheetUse{URL: u, Reason: "not loaded (another origin, refused, failed or over the page's budget)"})
		return
	}
	c.add(u, s, depth)
}

// add appends sheet s (at url u, "" for a <style>) after its imports.
func (c *sheetCollector) add(u string, s *StyleSheet, depth int) {
	if c.bytes+s.Bytes > MaxDocumentStyleBytes {
		c.capped = true
		c.st.report = append(c.st.report, SheetUse{URL: u, Reason: "past MaxDocumentStyleBytes"})
		return
	}
	c.bytes += s.Bytes
	for _, im := range s.imports {
		if !mediaMatches(im.media) {
			continue
		}
		if depth+1 > MaxImportDepth {
			c.capped = true
			c.st.report = append(c.st.report, SheetUse{URL: im.url, Reason: "@import nested deeper than MaxImportDepth"})
			continue
		}
		c.linked(im.url, depth+1)
	}
	if s.Cut || s.rulesCut {
		c.capped = true
	}
	c.sheets = append(c.sheets, s)
	c.st.report = append(c.st.report, SheetUse{URL: u, Applied: true})
}

// isCSSType reports whether a type attribute names CSS ("" included).
func isCSSType(t string) bool {
	t = strings.ToLower(strings.TrimSpace(t))
	return t == "" || t == "text/css"
}

// ruleKey is the part of a rule's last compound selector an element must
// have: an id, a class or a tag name (kind '#', '.', 't'), or nothing
// (kind 0: every element is a candidate).
type ruleKey struct {
	kind byte
	name string
}

// keyOf finds the key of a selector (its text): in the compound after
// the last combinator, an id, else a class, else the type. A name with an
// escape has no key (the rule is tried on every element).
func keyOf(sel string) ruleKey {
	start, depth := 0, 0
	var quote byte
	for i := 0; i < len(sel); i++ {
		switch ch := sel[i]; {
		case ch == '\\':
			i++
		case quote != 0:
			if ch == quote {
				quote = 0
			}
		case ch == '"' || ch == '\'':
			quote = ch
		case ch == '(' || ch == '[':
			depth++
		case ch == ')' || ch == ']':
			depth--
		case depth == 0 && (ch == ' ' || ch == '>' || ch == '+' || ch == '~' || ch == '\t' || ch == '\n'):
			start = i + 1
		}
	}
	last := sel[start:]
	var id, class string
	depth = 0
	for i := 0; i < len(last); i++ {
		switch ch := last[i]; {
		case ch == '(' || ch == '[':
			depth++
		case ch == ')' || ch == ']':
			depth--
		case depth == 0 && (ch == '#' || ch == '.'):
			j := i + 1
			for j < len(last) && (isIdentByte(last[j]) || last[j] >= 0x80) {
				j++
			}
			name := last[i+1 : j]
			if j < len(last) && last[j] == '\\' || name == "" {
				continue
			}
			if ch == '#' && id == "" {
				id = name
			} else if ch == '.' && class == "" {
				class = name
			}
		}
	}
	switch {
	case id != "":
		return ruleKey{'#', id}
	case class != "":
		return ruleKey{'.', class}
	}
	j := 0
	for j < len(last) && (isIdentByte(last[j]) || last[j] >= 0x80) {
		j++
	}
	if j > 0 && (j == len(last) || last[j] != '\\') && last[0] != '-' && !(last[0] >= '0' && last[0] <= '9') {
		return ruleKey{'t', strings.ToLower(last[:j])}
	}
	return ruleKey{}
}

// orderedRule is a rule with its place in the document's cascade.
type orderedRule struct {
	*cssRule
	order int
}

// winner is the declaration that won a property so far.
type winner struct {
	value     string
	important bool
	inline    bool
	spec      cascadia.Specificity
	order     int
}

// beats reports whether w wins over o in the cascade.
func (w winner) beats(o winner) bool {
	if w.important != o.important {
		return w.important
	}
	if w.inline != o.inline {
		return w.inline
	}
	if w.spec != o.spec {
		return o.spec.Less(w.spec)
	}
	// A later rule wins, and within one rule a later declaration
	// ("display: -webkit-box; display: flex").
	return w.order >= o.order
}

// cascade computes every element's text properties from sheets (in
// cascade order) and style attributes.
func (d *Document) cascade(sheets []*StyleSheet) {
	buckets := map[ruleKey][]orderedRule{}
	order := 0
	for _, s := range sheets {
		for i := range s.rules {
			if order >= MaxStyleRules {
				d.css.capped = true
				break
			}
			r := &s.rules[i]
			buckets[r.key] = append(buckets[r.key], orderedRule{cssRule: r, order: order})
			order++
		}
	}
	work := 0
	walk(d.root, func(n *html.Node) bool {
		if n.Type != html.ElementNode {
			return true
		}
		won := map[string]winner{}
		set := func(decl cssDecl, w winner) {
			w.value, w.important = decl.value, decl.important
			if cur, ok := won[decl.prop]; !ok || w.beats(cur) {
				won[decl.prop] = w
			}
		}
		if len(buckets) > 0 && work <= maxMatchWork {
			for _, r := range candidates(buckets, n) {
				if work++; work > maxMatchWork {
					d.css.capped = true
					break
				}
				if r.sel.Match(n) {
					for _, decl := range r.decls {
						set(decl, winner{spec: r.spec, order: r.order})
					}
				}
			}
		}
		if s, ok := attr(n, "style"); ok {
			for _, decl := range parseDecls(s) {
				set(decl, winner{inline: true})
			}
		}
		if len(won) > 0 {
			out := make(map[string]string, len(won))
			for p, w := range won {
				out[p] = w.value
			}
			if out["display"] == "inherit" {
				out["display"] = d.parentDisplay(n)
			}
			d.css.computed[n] = out
		}
		return true
	})
}

// candidates are the rules whose key element n has.
func candidates(buckets map[ruleKey][]orderedRule, n *html.Node) []orderedRule {
	out := buckets[ruleKey{}]
	add := func(k ruleKey) {
		if rs := buckets[k]; len(rs) > 0 {
			out = append(out[:len(out):len(out)], rs...)
		}
	}
	add(ruleKey{'t', strings.ToLower(n.Data)})
	if id, ok := attr(n, "id"); ok && id != "" {
		add(ruleKey{'#', id})
	}
	if cl, ok := attr(n, "class"); ok {
		seen := map[string]bool{}
		for _, c := range strings.Fields(cl) {
			if !seen[c] {
				seen[c] = true
				add(ruleKey{'.', c})
			}
		}
	}
	return out
}
