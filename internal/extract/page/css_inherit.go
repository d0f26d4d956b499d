package page

import (
	"golang.org/x/net/html"
	"golang.org/x/net/html/atom"
)

// parentDisplay is the display value `display: inherit` takes on n: its
// parent's computed display (the cascade visits a parent before its
// children, so the parent's value is final), or the parent's default
// when no rule set one: "block" for the elements the default style
// sheet makes block-level, "inline" otherwise. chip.de's footer sets
// `display: inherit` on a child of a flex container, which makes the
// child a flex container too and puts its links on lines of their own.
func (d *Document) parentDisplay(n *html.Node) string {
	p := n.Parent
	if p == nil || p.Type != html.ElementNode {
		return "inline"
	}
	if v := d.css.computed[p]["display"]; v != "" {
		return v
	}
	if p.Namespace == "" && (blockElements[p.DataAtom] || p.DataAtom == atom.Html) {
		return "block"
	}
	return "inline"
}
