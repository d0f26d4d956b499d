package page

import (
	"strings"
	"unicode/utf8"

	"golang.org/x/net/html"
	"golang.org/x/net/html/atom"
)

// The visible text: an approximation of innerText (HTML Standard, "the
// rendered text collection steps") computed from the markup, with the
// browser's default style sheet, the page's own style sheets and its
// style attributes (css.go, cascade.go) standing in for the computed
// style:
//
//   - not rendered: <head> and its content, <script>, <style>, <template>,
//     <noscript> (scripting is on), <datalist>, <dialog> without open,
//     <rp>, <area>, <source>, <track>, <param>, elements with the hidden
//     attribute (unless a rule of the page displays them, as in a
//     browser), elements a rule or style attribute makes display: none,
//     the content of a closed <details> other than its <summary>, the
//     content of an element with content-visibility: hidden;
//   - replaced elements show none of their children: <img>, <input>,
//     <textarea>, <iframe>, <video>, <audio>, <canvas>, <embed>, <object
//     data>, <progress>, <meter>, <svg>;
//   - block-level elements (div, p, h1–h6, li, table, section, …) start and
//     end lines; <p> leaves an empty line before and after; <br> breaks the
//     line; table cells are separated by a tab and rows by a line break;
//     <select> shows each option on its own line;
//   - white space collapses as CSS does (runs of spaces, tabs and newlines
//     become one space, none at the start or end of a line, none twice
//     across inline elements) except in <pre>, <listing>, <xmp>,
//     <plaintext> and under white-space: pre…, where it is kept;
//   - visibility: hidden (or collapse) hides an element's own text
//     (descendants with visibility: visible still show);
//   - display values from the page's rules lay out as they say; float
//     and position: absolute/fixed make a box block-level, and so does
//     being a child (element or text) of a flex or grid container;
//   - text-transform: uppercase, lowercase and capitalize change the
//     text as Chromium's innerText does (ß becomes SS).
//
// Scripts are not run: text they add or change differs from the
// browser's. When an element is not rendered at all, its innerText is its
// textContent, as in a browser.

// wsMode is the part of CSS white-space that innerText sees.
type wsMode uint8

const (
	wsNormal  wsMode = iota // normal, nowrap: collapse spaces and newlines
	wsPre                   // pre, pre-wrap, break-spaces: keep all
	wsPreLine               // pre-line: collapse spaces, keep newlines
)

// inherited is the inherited computed style innerText depends on.
type inherited struct {
	hidden    bool // visibility: hidden or collapse
	ws        wsMode
	transform string // text-transform: "", uppercase, lowercase, capitalize
}

// outer is an element's kind of box.
type outer uint8

const (
	outerInline   outer = iota // an inline box (span, a, b, …)
	outerBlock                 // block-level (one required line break around it)
	outerAtomic                // inline-block: an atomic inline with its own lines inside
	outerNone                  // display: none
	outerRow                   // table-row
	outerCell                  // table-cell
	outerContents              // no box of its own (table-row-group, display: contents)
)

// layout is what the default style sheet and the inline style say about
// an element.
type layout struct {
	outer      outer
	noChildren bool // a replaced element: its children are not rendered
	// contentHidden: content-visibility: hidden (children not rendered).
	contentHidden bool
	style         map[string]string
}

// blockElements are displayed as blocks (list-item, table and
// table-caption included) by the default style sheet.
var blockElements = map[atom.Atom]bool{
	atom.Html: true, atom.Body: true, atom.Address: true, atom.Blockquote: true, atom.Center: true,
	atom.Div: true, atom.Figure: true, atom.Figcaption: true, atom.Footer: true, atom.Form: true,
	atom.Header: true, atom.Hr: true, atom.Legend: true, atom.Listing: true, atom.Main: true,
	atom.P: true, atom.Plaintext: true, atom.Pre: true, atom.Search: true, atom.Xmp: true,
	atom.Article: true, atom.Aside: true, atom.H1: true, atom.H2: true, atom.H3: true, atom.H4: true,
	atom.H5: true, atom.H6: true, atom.Hgroup: true, atom.Nav: true, atom.Section: true,
	atom.Dir: true, atom.Dd: true, atom.Dl: true, atom.Dt: true, atom.Menu: true, atom.Ol: true,
	atom.Ul: true, atom.Li: true, atom.Fieldset: true, atom.Details: true, atom.Summary: true,
	atom.Table: true, atom.Caption: true, atom.Optgroup: true, atom.Option: true, atom.Frameset: true,
	atom.Dialog: true,
}

// hiddenElements are display: none in the default style sheet.
var hiddenElements = map[atom.Atom]bool{
	atom.Head: true, atom.Title: true, atom.Meta: true, atom.Link: true, atom.Style: true,
	atom.Script: true, atom.Template: true, atom.Noscript: true, atom.Base: true,
	atom.Datalist: true, atom.Param: true, atom.Area: true, atom.Rp: true, atom.Noembed: true,
	atom.Noframes: true, atom.Source: true, atom.Track: true, atom.Col: true, atom.Colgroup: true,
}

// replacedElements show none of their children.
var replacedElements = map[atom.Atom]bool{
	atom.Img: true, atom.Input: true, atom.Textarea: true, atom.Iframe: true, atom.Video: true,
	atom.Audio: true, atom.Canvas: true, atom.Embed: true, atom.Progress: true, atom.Meter: true,
	atom.Frame: true,
}

// svgHidden are the SVG elements whose content is never rendered.
var svgHidden = map[string]bool{
	"title": true, "desc": true, "metadata": true, "style": true, "script": true,
}

// layoutOf classifies an element.
func (d *Document) layoutOf(n *html.Node) layout {
	var l layout
	switch n.Namespace {
	case "svg":
		// Chromium lays out the text of <text> elements (each on its own
		// line) and the HTML of <foreignObject>; other SVG elements pass
		// their children through, and text directly inside them is not
		// rendered.
		switch {
		case n.Data == "svg":
			l.outer = outerAtomic
		case n.Data == "text" || n.Data == "foreignObject":
			l.outer = outerBlock
		case svgHidden[n.Data]:
			l.outer = outerNone
		default:
			l.outer = outerContents
		}
		return d.applyStyle(n, l)
	case "math":
		// Chromium puts each MathML element on its own line, the <math>
		// element itself being inline unless display="block".
		l.outer = outerBlock
		if n.Data == "math" {
			if d, _ := attr(n, "display"); !strings.EqualFold(d, "block") {
				l.outer = outerAtomic
			}
		}
		return d.applyStyle(n, l)
	}
	switch a := n.DataAtom; {
	case hiddenElements[a]:
		l.outer = outerNone
	case a == atom.Dialog:
		if _, open := attr(n, "open"); !open {
			l.outer = outerNone
		} else {
			l.outer = outerBlock
		}
	case a == atom.Input:
		if t, _ := attr(n, "type"); strings.EqualFold(strings.TrimSpace(t), "hidden") {
			l.outer = outerNone
		} else {
			l.outer, l.noChildren = outerAtomic, true
		}
	case a == atom.Object:
		if _, ok := attr(n, "data"); ok {
			l.outer, l.noChildren = outerAtomic, true
		}
	case replacedElements[a]:
		l.outer, l.noChildren = outerAtomic, true
	case a == atom.Button || a == atom.Select || a == atom.Marquee:
		l.outer = outerAtomic
	case blockElements[a]:
		l.outer = outerBlock
	case a == atom.Tr:
		l.outer = outerRow
	case a == atom.Td || a == atom.Th:
		l.outer = outerCell
	case a == atom.Thead || a == atom.Tbody || a == atom.Tfoot || a == atom.Slot:
		l.outer = outerContents
	}
	if v, ok := attr(n, "hidden"); ok {
		if strings.EqualFold(strings.TrimSpace(v), "until-found") {
			l.contentHidden = true
		} else {
			l.outer = outerNone
		}
	}
	return d.applyStyle(n, l)
}

// applyStyle applies an element's cascaded style (its style attribute and
// the page's rules, cascade.go) to its layout. A <noscript> stays hidden
// whatever the page says: with scripting on its content is not markup,
// and Chromium shows none of it.
func (doc *Document) applyStyle(n *html.Node, l layout) layout {
	if isHTML(n, atom.Noscript) {
		return l
	}
	if st := doc.styleOf(n); st != nil {
		l.style = st
		switch d := l.style["display"]; {
		case d == "none":
			l.outer = outerNone
		case d == "block" || d == "flow-root" || d == "flex" || d == "grid" || d == "table" || d == "-webkit-box" ||
			d == "list-item" || d == "table-caption" || strings.HasPrefix(d, "block ") || strings.HasPrefix(d, "flow "):
			l.outer = outerBlock
		case strings.HasPrefix(d, "inline-") || strings.HasPrefix(d, "inline ") || d == "-webkit-inline-box":
			l.outer = outerAtomic
		case d == "inline":
			if !l.noChildren {
				l.outer = outerInline
			}
		case d == "contents":
			l.outer = outerContents
		case d == "table-row":
			l.outer = outerRow
		case d == "table-cell":
			l.outer = outerCell
		case strings.HasPrefix(d, "table-") && strings.HasSuffix(d, "-group"):
			l.outer = outerContents
		case d == "initial" || d == "unset":
			if !l.noChildren {
				l.outer = outerInline
			}
		}
		if l.style["content-visibility"] == "hidden" {
			l.contentHidden = true
		}
		if f := l.style["float"]; (f != "" && f != "none") || l.style["position"] == "absolute" || l.style["position"] == "fixed" {
			l = blockify(l)
		}
	}
	if p := n.Parent; p != nil && p.Type == html.ElementNode && l.outer != outerNone && l.outer != outerContents {
		if pst := doc.styleOf(p); pst != nil && isFlexLike(pst["display"]) {
			l = blockify(l)
		}
	}
	return l
}

// isFlexLike reports the display values whose children are blockified.
func isFlexLike(d string) bool {
	switch d {
	case "flex", "grid", "inline-flex", "inline-grid", "block flex", "block grid", "inline flex", "inline grid",
		"-webkit-box", "-webkit-inline-box":
		return true
	}
	return false
}

// inlineLevel reports the display values of an inline-level box.
func inlineLevel(d string) bool {
	return strings.HasPrefix(d, "inline") || d == "-webkit-inline-box"
}

// blockify makes an inline-level box block-level (CSS Display 3 §2.7).
func blockify(l layout) layout {
	if l.outer == outerInline || l.outer == outerAtomic {
		l.outer = outerBlock
	}
	return l
}

// inherit applies an element's own white-space and visibility.
func inherit(st inherited, n *html.Node, l layout) inherited {
	if n.Namespace == "" {
		switch n.DataAtom {
		case atom.Pre, atom.Listing, atom.Xmp, atom.Plaintext, atom.Textarea:
			st.ws = wsPre
		case atom.Td, atom.Th:
			if _, ok := attr(n, "nowrap"); ok {
				st.ws = wsNormal
			}
		}
	}
	if isHTML(n, atom.Select) {
		// A <select> shows its options as Chromium draws them, without
		// the page's text-transform.
		st.transform = ""
		return inheritStyle(st, l, false)
	}
	if isHTML(n, atom.Button) || isHTML(n, atom.Input) || isHTML(n, atom.Textarea) {
		// Chromium's own style sheet gives form controls text-transform:
		// none, which beats what they would inherit; a rule of the page
		// on the control itself still applies.
		st.transform = ""
	}
	return inheritStyle(st, l, true)
}

// inheritStyle applies an element's own visibility, white-space and (when
// transform) text-transform.
func inheritStyle(st inherited, l layout, transform bool) inherited {
	if l.style == nil {
		return st
	}
	switch t := l.style["text-transform"]; {
	case !transform:
	case t == "uppercase" || t == "lowercase" || t == "capitalize":
		st.transform = t
	case t == "none" || t == "initial" || t == "unset":
		st.transform = ""
	}
	switch v := l.style["visibility"]; v {
	case "hidden", "collapse":
		st.hidden = true
	case "visible":
		st.hidden = false
	}
	ws := l.style["white-space"]
	if c := l.style["white-space-collapse"]; c != "" {
		ws = c
	}
	switch ws {
	case "normal", "nowrap", "collapse":
		st.ws = wsNormal
	case "pre", "pre-wrap", "break-spaces", "preserve", "preserve-spaces":
		st.ws = wsPre
	case "pre-line", "preserve-breaks":
		st.ws = wsPreLine
	}
	return st
}

// rendering returns the inherited style of an element and whether it is
// being rendered (it and its ancestors displayed, not inside a replaced
// element, a closed <details> or template contents).
//
// skipped is true when the reason is an ancestor whose content is
// skipped rather than not rendered — content-visibility: hidden,
// hidden=until-found, a closed <details> (Chromium hides its content
// that way): innerText is then empty, not the textContent of an element
// that is not rendered.
func (d *Document) rendering(el *html.Node) (st inherited, ok, skipped bool) {
	var chain []*html.Node
	n := el
	for ; n != nil && n.Type == html.ElementNode; n = n.Parent {
		chain = append(chain, n)
	}
	if n != d.root {
		return inherited{}, false, false
	}
	var parent *html.Node
	var parentLayout layout
	for i := len(chain) - 1; i >= 0; i-- {
		n := chain[i]
		l := d.layoutOf(n)
		if parent != nil && !childRendered(parent, parentLayout, n) {
			return inherited{}, false, contentSkipped(parent, parentLayout)
		}
		if l.outer == outerNone {
			return inherited{}, false, false
		}
		st = inherit(st, n, l)
		parent, parentLayout = n, l
	}
	return st, true, false
}

// contentSkipped reports whether p's children are skipped
// (content-visibility: hidden, a closed <details>) rather than not
// rendered (a replaced element's).
func contentSkipped(p *html.Node, pl layout) bool {
	if pl.noChildren {
		return false
	}
	return pl.contentHidden || isHTML(p, atom.Details)
}

// childRendered reports whether child c of parent p gets a box: not inside
// a replaced element, only options (and optgroups) inside a <select>, only
// the first <summary> of a closed <details>.
func childRendered(p *html.Node, pl layout, c *html.Node) bool {
	if pl.noChildren || pl.contentHidden {
		return false
	}
	if p.Namespace != "" {
		return true
	}
	switch p.DataAtom {
	case atom.Select:
		return isHTML(c, atom.Option) || isHTML(c, atom.Optgroup)
	case atom.Optgroup:
		if p.Parent != nil && isHTML(p.Parent, atom.Select) {
			return isHTML(c, atom.Option)
		}
	case atom.Details:
		if _, open := attr(p, "open"); !open {
			return c == firstSummary(p)
		}
	}
	return true
}

// firstSummary returns a <details> element's first <summary> child.
func firstSummary(details *html.Node) *html.Node {
	for c := details.FirstChild; c != nil; c = c.NextSibling {
		if isHTML(c, atom.Summary) {
			return c
		}
	}
	return nil
}

// innerText returns el.innerText (see the comment at the top of this
// file): the rendered text of its children, or its textContent when it is
// not being rendered.
func (d *Document) innerText(el *html.Node) string {
	st, ok, skipped := d.rendering(el)
	if skipped {
		return ""
	}
	if !ok {
		return textContent(el)
	}
	w := &textWalker{d: d, lastRow: map[*html.Node]*html.Node{}}
	l := d.layoutOf(el)
	w.startFirstLetter(el, l)
	for c := el.FirstChild; c != nil; c = c.NextSibling {
		if childRendered(el, l, c) {
			w.node(c, st)
		}
	}
	return w.b.String()
}

// textContent is the concatenation of every descendant text node.
func textContent(n *html.Node) string {
	var b strings.Builder
	walk(n, func(c *html.Node) bool {
		if c.Type == html.TextNode {
			b.WriteString(c.Data)
		}
		return true
	})
	return b.String()
}

// textWalker runs the rendered text collection steps over a subtree.
type textWalker struct {
	d *Document
	b textBuilder
	// prev is the last character written (for capitalize).
	prev rune
	// lastRow caches each table's last row.
	lastRow map[*html.Node]*html.Node
	// firstLetter is the ::first-letter text-transform the next letter
	// takes, set by firstLetterOwner (css_first_letter.go).
	firstLetter      string
	firstLetterOwner *html.Node
}

// node collects the rendered text of n, whose parent's style is st.
func (w *textWalker) node(n *html.Node, st inherited) {
	switch n.Type {
	case html.TextNode:
		if p := n.Parent; p != nil && p.Namespace == "svg" && !svgTextElement(p) {
			return
		}
		data := n.Data
		if p := n.Parent; p != nil && p.Namespace == "math" && p.Data == "mi" {
			data = mathItalic(p, data)
		}
		if st.transform != "" {
			data = w.transform(data, st.transform)
		}
		data = w.applyFirstLetter(data)
		if r, size := utf8.DecodeLastRuneInString(data); size > 0 {
			w.prev = r
		}
		anon := false
		if p := n.Parent; p != nil && p.Type == html.ElementNode && strings.TrimFunc(data, isCollapsible) != "" {
			// Text directly in a block-level flex or grid container is an
			// anonymous block of its own. In an inline-level one
			// (inline-flex: an icon's ligature beside its label) Chromium
			// puts no line break around it: "searchBusca".
			if pst := w.d.styleOf(p); pst != nil && isFlexLike(pst["display"]) && !inlineLevel(pst["display"]) {
				anon = true
				w.b.endLine()
				w.b.requiredBreak(1)
			}
		}
		if !st.hidden {
			w.b.text(data, st.ws)
		} else if strings.TrimFunc(data, isCollapsible) != "" {
			// Invisible text still takes its place on the line.
			w.b.atomic()
		}
		if anon {
			w.b.requiredBreak(1)
		}
		return
	case html.ElementNode:
	default:
		return
	}
	l := w.d.layoutOf(n)
	if l.outer == outerNone {
		return
	}
	st = inherit(st, n, l)
	w.startFirstLetter(n, l)
	defer w.endFirstLetter(n)
	if isHTML(n, atom.Br) {
		w.cancelFirstLetter()
		if !st.hidden {
			w.b.forced("\n")
		} else {
			w.b.endLine()
		}
		return
	}
	breaks := 0
	switch {
	case isHTML(n, atom.P):
		breaks = 2
	case l.outer == outerBlock:
		breaks = 1
	}
	if st.hidden {
		breaks = 0
	}
	switch l.outer {
	case outerBlock, outerCell:
		w.b.endLine()
	case outerAtomic:
		w.b.atomic()
		w.b.endLine()
	}
	if breaks > 0 {
		w.b.requiredBreak(breaks)
	}
	w.boxBoundary(l.outer)
	for c := n.FirstChild; c != nil; c = c.NextSibling {
		if childRendered(n, l, c) {
			w.node(c, st)
		}
	}
	w.boxBoundary(l.outer)
	if breaks > 0 {
		w.b.requiredBreak(breaks)
	}
	switch l.outer {
	case outerBlock:
		w.b.endLine()
	case outerAtomic:
		w.b.endLine()
		w.b.atomic()
	case outerCell:
		if !st.hidden && !w.d.lastCell(n) {
			w.b.forced("\t")
		} else {
			w.b.endLine()
		}
	case outerRow:
		if !st.hidden && !w.isLastRow(n) {
			w.b.forced("\n")
		} else {
			w.b.endLine()
		}
	}
}

// lastCell reports whether no displayed cell follows td in its row.
func (d *Document) lastCell(td *html.Node) bool {
	for s := td.NextSibling; s != nil; s = s.NextSibling {
		if s.Type == html.ElementNode && d.layoutOf(s).outer == outerCell {
			return false
		}
	}
	return true
}

// isLastRow reports whether tr is the last row of its table (row groups
// included, in document order).
func (w *textWalker) isLastRow(tr *html.Node) bool {
	table := tr.Parent
	for table != nil && !isHTML(table, atom.Table) {
		table = table.Parent
	}
	if table == nil {
		return true
	}
	last, ok := w.lastRow[table]
	if !ok {
		for c := table.FirstChild; c != nil; c = c.NextSibling {
			switch {
			case isHTML(c, atom.Tr):
				last = c
			case isHTML(c, atom.Thead) || isHTML(c, atom.Tbody) || isHTML(c, atom.Tfoot):
				for r := c.FirstChild; r != nil; r = r.NextSibling {
					if isHTML(r, atom.Tr) {
						last = r
					}
				}
			}
		}
		w.lastRow[table] = last
	}
	return last == tr
}

// isCollapsible is CSS's collapsible white space (a form feed is not).
func isCollapsible(r rune) bool {
	return r == ' ' || r == '\t' || r == '\n' || r == '\r'
}

// textBuilder assembles the items of the rendered text collection steps:
// strings, and required line break counts that merge with their
// neighbours. It also collapses white space across the text of one line.
type textBuilder struct {
	items []textItem
	cur   strings.Builder
	// pending is a collapsible space seen after content on this line,
	// written only if more content follows on the same line.
	pending bool
	// content is true once the current line has content.
	content bool
}

// textItem is a string (rlb 0) or a required line break count.
type textItem struct {
	s   string
	rlb int
}

// text appends the text of a text node under white-space mode ws.
func (b *textBuilder) text(s string, ws wsMode) {
	switch ws {
	case wsPre:
		for _, r := range s {
			if b.pending {
				b.cur.WriteByte(' ')
				b.pending = false
			}
			b.cur.WriteRune(r)
			b.content = r != '\n'
		}
	case wsPreLine:
		for i, line := range strings.Split(s, "\n") {
			if i > 0 {
				b.forced("\n")
			}
			b.text(line, wsNormal)
		}
	default:
		for _, r := range s {
			if isCollapsible(r) {
				if b.content {
					b.pending = true
				}
				continue
			}
			if b.pending {
				b.cur.WriteByte(' ')
				b.pending = false
			}
			b.cur.WriteRune(r)
			b.content = true
		}
	}
}

// atomic records an atomic inline (an image, a button): content on the
// line, so the space before it stays and the one after it can follow.
func (b *textBuilder) atomic() {
	if b.pending {
		b.cur.WriteByte(' ')
		b.pending = false
	}
	b.content = true
}

// endLine ends the current line: a pending space is dropped.
func (b *textBuilder) endLine() {
	b.pending = false
	b.content = false
}

// forced writes a line break or tab that ends the current line.
func (b *textBuilder) forced(s string) {
	b.pending = false
	b.cur.WriteString(s)
	b.content = false
}

// requiredBreak appends a required line break count.
func (b *textBuilder) requiredBreak(n int) {
	b.endLine()
	b.flush()
	b.items = append(b.items, textItem{rlb: n})
}

func (b *textBuilder) flush() {
	if b.cur.Len() > 0 {
		b.items = append(b.items, textItem{s: b.cur.String()})
		b.cur.Reset()
	}
}

// String joins the items: leading and trailing required line breaks
// dropped, each run of them replaced by as many newlines as its largest
// count.
func (b *textBuilder) String() string {
	b.flush()
	items := b.items
	for len(items) > 0 && items[0].rlb > 0 {
		items = items[1:]
	}
	for len(items) > 0 && items[len(items)-1].rlb > 0 {
		items = items[:len(items)-1]
	}
	var out strings.Builder
	run := 0
	for _, it := range items {
		if it.rlb > 0 {
			run = max(run, it.rlb)
			continue
		}
		if run > 0 {
			out.WriteString(strings.Repeat("\n", run))
			run = 0
		}
		out.WriteString(it.s)
	}
	return out.String()
}

// svgTextElement reports the SVG elements whose text children are
// rendered: <text> and the elements inside it.
func svgTextElement(n *html.Node) bool {
	for ; n != nil && n.Namespace == "svg"; n = n.Parent {
		if n.Data == "text" {
			return true
		}
	}
	return false
}

// mathItalic renders the text of an <mi> as Chromium does: a single
// letter, without a mathvariant, in its mathematical italic form.
func mathItalic(mi *html.Node, s string) string {
	if _, ok := attr(mi, "mathvariant"); ok {
		return s
	}
	t := strings.TrimFunc(s, isCollapsible)
	r := []rune(t)
	if len(r) != 1 || mi.FirstChild != mi.LastChild {
		return s
	}
	c := r[0]
	var m rune
	switch {
	case c == 'h':
		m = 0x210e
	case c >= 'A' && c <= 'Z':
		m = 0x1d434 + c - 'A'
	case c >= 'a' && c <= 'z':
		m = 0x1d44e + c - 'a'
	case c == 0x131:
		m = 0x1d6a4
	case c == 0x237:
		m = 0x1d6a5
	case c >= 0x391 && c <= 0x3a9 && c != 0x3a2:
		m = 0x1d6e2 + c - 0x391
	case c == 0x3f4:
		m = 0x1d6f1
	case c == 0x2207:
		m = 0x1d6fb
	case c >= 0x3b1 && c <= 0x3c9:
		m = 0x1d6fc + c - 0x3b1
	default:
		if i := strings.IndexRune("\u2202\u03f5\u03d1\u03f0\u03d5\u03f1\u03d6", c); i >= 0 {
			m = 0x1d715 + rune(len([]rune("\u2202\u03f5\u03d1\u03f0\u03d5\u03f1\u03d6"[:i])))
		} else {
			return s
		}
	}
	return strings.Replace(s, t, string(m), 1)
}
