package structured

// TextSelectors lists, once each in schema order, the x-selectors whose
// elements' text the schema reads (those without x-attr), so that a
// caller reading the page in a browser can have the browser compute
// those texts by the one text rule (package page's ElementText) before
// handing the HTML over.
func (s *Schema) TextSelectors() []string {
	var out []string
	seen := map[string]bool{}
	var visit func(p *prop)
	visit = func(p *prop) {
		if p == nil {
			return
		}
		if p.selector != nil && p.attr == "" && !seen[p.selectorText] {
			seen[p.selectorText] = true
			out = append(out, p.selectorText)
		}
		for _, c := range p.props {
			visit(c)
		}
		visit(p.items)
	}
	visit(s.root)
	return out
}
