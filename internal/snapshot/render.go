package snapshot

import (
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Limits of what one line carries, in runes. A model reads a snapshot to
// find where to act; the full text of a page is what the extraction
// templates are for.
const (
	textLimit  = 100
	nameLimit  = 80
	valueLimit = 40
	// listLimit is how many items of a list or rows of a table are shown
	// with their text; the rest show only their interactive elements.
	listLimit = 10
)

// renderer writes a tree as lines.
type renderer struct {
	refs    *Refs
	expand  map[string]bool
	lines   []string
	pending []string
	indent  int
	seen    map[string]bool
	visited map[*node]bool
}

// mode says what a walk shows below an element.
type mode int

const (
	full     mode = iota // everything
	noText               // interactive elements and nested structure, no text (inside a link, a heading)
	controls             // interactive elements only (rows of a collapsed list)
)

func render(root *node, refs *Refs, expand map[string]bool) []string {
	r := &renderer{refs: refs, expand: expand, seen: map[string]bool{}, visited: map[*node]bool{}}
	if root != nil {
		r.walk(root, full)
	}
	r.flush()
	return r.lines
}

// emit writes one line at the current indentation.
func (r *renderer) emit(s string) {
	r.lines = append(r.lines, strings.Repeat(" ", r.indent)+s)
}

// flush writes the text gathered since the last block, trimmed, unless it
// says nothing (punctuation only) or the same text was already written.
func (r *renderer) flush() {
	if len(r.pending) == 0 {
		return
	}
	t := squash(strings.Join(r.pending, " "))
	r.pending = r.pending[:0]
	t = strings.Trim(t, " |")
	if !strings.ContainsFunc(t, func(c rune) bool { return unicode.IsLetter(c) || unicode.IsDigit(c) }) || r.seen[t] {
		return
	}
	r.seen[t] = true
	r.emit(cut(t, textLimit))
}

func (r *renderer) walk(n *node, m mode) {
	if r.visited[n] {
		return
	}
	r.visited[n] = true
	if n.ignored {
		r.children(n, m)
		return
	}
	switch role := n.role; {
	case interactive[role] && !(role == "option" && m == noText):
		// A label read just before its control says what the control's
		// name says.
		if name := squash(n.name); name != "" {
			if strings.Trim(squash(strings.Join(r.pending, " ")), " |:") == name {
				r.pending = r.pending[:0]
			}
			r.seen[name] = true
		}
		r.flush()
		r.emit(r.line(n))
		r.children(n, noText)
	case role == "StaticText":
		if m == full {
			r.pending = append(r.pending, n.name)
		}
	case role == "InlineTextBox":
	case role == "heading":
		r.flush()
		if m != controls {
			lvl, _ := strconv.Atoi(n.props["level"])
			r.emit(strings.Repeat("#", min(max(lvl, 1), 6)) + " " + cut(squash(n.name), textLimit))
		}
		if m == full {
			r.children(n, noText)
		} else {
			r.children(n, m)
		}
	case role == "Iframe":
		r.flush()
		r.emit("iframe " + quote(cut(squash(n.name), nameLimit)))
		r.indent++
		if n.frame != nil {
			r.walk(n.frame, m)
		} else {
			r.emit("(frame not readable)")
		}
		r.flush()
		r.indent--
	case landmarks[role] != "":
		r.flush()
		s := "[" + landmarks[role]
		if n.name != "" {
			s += " " + quote(cut(squash(n.name), nameLimit))
		}
		r.emit(s + "]")
		r.indent++
		r.children(n, m)
		r.flush()
		r.indent--
	case role == "list" || role == "table" || role == "grid" || role == "treegrid":
		r.flush()
		r.long(n, m)
	default:
		if blocks[role] {
			r.flush()
		}
		if cells[role] && len(r.pending) > 0 {
			r.pending = append(r.pending, "|")
		}
		r.children(n, m)
		if blocks[role] {
			r.flush()
		}
	}
}

func (r *renderer) children(n *node, m mode) {
	for _, c := range n.children {
		r.walk(c, m)
	}
}

// long shows a list or table: its first listLimit items whole, and of the
// rest only their interactive elements after a line saying how many there
// are and the reference that expands it (Options.Expand).
func (r *renderer) long(n *node, m mode) {
	items := itemsOf(n)
	if len(items) <= listLimit || m != full {
		r.children(n, m)
		r.flush()
		return
	}
	ref := r.refs.ref(n.key)
	if r.expand[ref] {
		r.children(n, m)
		r.flush()
		return
	}
	rest := map[*node]bool{}
	for _, it := range items[listLimit:] {
		rest[it] = true
	}
	unit := "items"
	if n.role != "list" {
		unit = "rows"
	}
	var walkUntil func(c *node)
	marked := false
	walkUntil = func(c *node) {
		if rest[c] {
			r.flush()
			if !marked {
				marked = true
				r.emit("… " + strconv.Itoa(len(items)-listLimit) + " more " + unit + ", text left out (expand " + ref + ")")
			}
			r.walk(c, controls)
			return
		}
		if r.visited[c] {
			return
		}
		if !c.ignored && c.role != "rowgroup" && c.role != "generic" && c.role != "none" {
			r.walk(c, m)
			return
		}
		r.visited[c] = true
		for _, cc := range c.children {
			walkUntil(cc)
		}
	}
	r.visited[n] = true
	for _, c := range n.children {
		walkUntil(c)
	}
	r.flush()
}

// itemsOf returns the items of a list or the rows of a table, looking
// through row groups and ignored wrappers but not into nested lists.
func itemsOf(n *node) []*node {
	var out []*node
	var rec func(c *node, depth int)
	rec = func(c *node, depth int) {
		if depth > 4 {
			return
		}
		for _, cc := range c.children {
			switch {
			case !cc.ignored && (cc.role == "listitem" || cc.role == "row"):
				out = append(out, cc)
			case cc.ignored || cc.role == "rowgroup" || cc.role == "generic" || cc.role == "none":
				rec(cc, depth+1)
			}
		}
	}
	rec(n, 0)
	return out
}

// line is an interactive element's line: reference, role, name, value,
// options of a select and states.
func (r *renderer) line(n *node) string {
	var b strings.Builder
	b.WriteString(r.refs.ref(n.key))
	b.WriteByte(' ')
	role := n.role
	if s, ok := roleNames[role]; ok {
		role = s
	}
	b.WriteString(role)
	if name := squash(n.name); name != "" {
		b.WriteByte(' ')
		b.WriteString(quote(cut(name, nameLimit)))
	}
	if v := squash(n.value); v != "" && v != squash(n.name) {
		b.WriteString(" =")
		b.WriteString(quote(cut(v, valueLimit)))
	}
	if n.role == "combobox" || n.role == "listbox" {
		if opts := optionNames(n); len(opts) > 0 {
			b.WriteString(" of ")
			b.WriteString(cut(strings.Join(opts, "|"), textLimit))
		}
	}
	var st []string
	for _, s := range states {
		v, ok := n.props[s.prop]
		if !ok || v == "false" || v == "" {
			continue
		}
		switch {
		case s.prop == "checked" && v == "mixed":
			st = append(st, "mixed")
		case s.prop == "invalid" && v != "true":
			st = append(st, "invalid:"+v)
		default:
			st = append(st, s.show)
		}
	}
	if n.props["expanded"] == "false" {
		st = append(st, "collapsed")
	}
	if len(st) > 0 {
		b.WriteString(" [" + strings.Join(st, ",") + "]")
	}
	return b.String()
}

// optionNames lists the names of a combobox's options.
func optionNames(n *node) []string {
	var out []string
	var rec func(c *node, depth int)
	rec = func(c *node, depth int) {
		if depth > 4 {
			return
		}
		for _, cc := range c.children {
			if cc.role == "option" {
				out = append(out, squash(cc.name))
				continue
			}
			rec(cc, depth+1)
		}
	}
	rec(n, 0)
	return out
}

// squash collapses runs of white space (new lines included) to one space.
func squash(s string) string { return strings.Join(strings.Fields(s), " ") }

// cut shortens s to n runes, marking the cut with "…".
func cut(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	i, k := 0, 0
	for i = range s {
		if k == n-1 {
			break
		}
		k++
	}
	return s[:i] + "…"
}

// quote writes a name between double quotes, escaping the quotes and
// backslashes inside so the line reads back unambiguously.
func quote(s string) string {
	if !strings.ContainsAny(s, `"\`) {
		return `"` + s + `"`
	}
	return `"` + strings.NewReplacer(`\`, `\\`, `"`, `\"`).Replace(s) + `"`
}
