package structured

import (
	"strings"

	"golang.org/x/net/html"
	"golang.org/x/net/html/atom"
)

// itemSyntax tells readItems how one markup names its parts: microdata
// (itemscope / itemprop / itemtype) or RDFa Lite (typeof / property, the
// type in typeof itself).
type itemSyntax struct {
	scope, prop, typ string
}

// microdataSyntax is microdata's itemSyntax.
func microdataSyntax() itemSyntax {
	return itemSyntax{scope: "itemscope", prop: "itemprop", typ: "itemtype"}
}

// rdfaSyntax is RDFa Lite's itemSyntax.
func rdfaSyntax() itemSyntax {
	return itemSyntax{scope: "typeof", prop: "property", typ: "typeof"}
}

// readMicrodata collects every microdata item (itemscope), nested ones
// included, as a map of property → value(s) with "@type" from itemtype.
// itemref is not followed.
func (p *Page) readMicrodata() {
	p.microdata = p.readItems(microdataSyntax())
}

// readRDFa collects every RDFa Lite entity (typeof) the same way; property
// names may carry a prefix ("schema:name") or be full IRIs.
func (p *Page) readRDFa() {
	p.rdfa = p.readItems(rdfaSyntax())
}

// readItems walks the document for scopes of syntax sx.
func (p *Page) readItems(sx itemSyntax) []map[string]any {
	var out []map[string]any
	seen := map[*html.Node]map[string]any{}
	walk(p.doc, func(n *html.Node) bool {
		if hasAttr(n, sx.scope) {
			out = append(out, p.readItem(n, sx, seen))
		}
		return true
	})
	return out
}

// readItem builds the item scoped at n (memoized in seen, since a nested
// item is both a value and an entity of its own).
func (p *Page) readItem(n *html.Node, sx itemSyntax, seen map[*html.Node]map[string]any) map[string]any {
	if it, ok := seen[n]; ok {
		return it
	}
	item := map[string]any{}
	seen[n] = item
	var types []any
	for _, t := range strings.Fields(attr(n, sx.typ)) {
		types = append(types, shortType(t))
	}
	switch len(types) {
	case 0:
	case 1:
		item["@type"] = types[0]
	default:
		item["@type"] = types
	}
	var rec func(c *html.Node)
	rec = func(c *html.Node) {
		for k := c.FirstChild; k != nil; k = k.NextSibling {
			if k.Type != html.ElementNode {
				continue
			}
			names := strings.Fields(attr(k, sx.prop))
			if len(names) > 0 {
				v := p.itemValue(k, sx, seen)
				for _, name := range names {
					if name = shortType(name); name != "" && v != nil {
						addValue(item, name, v)
					}
				}
			}
			if hasAttr(k, sx.scope) {
				continue // its properties are its own
			}
			rec(k)
		}
	}
	rec(n)
	return item
}

// itemValue reads the value of a property element the way the microdata
// spec says (meta content, media src, link href, time datetime, data and
// meter value, else the text), preferring a content attribute on any
// element, as sites commonly write <span itemprop="price"
// content="1299.00">$1,299.00</span>.
func (p *Page) itemValue(n *html.Node, sx itemSyntax, seen map[*html.Node]map[string]any) any {
	if hasAttr(n, sx.scope) {
		return p.readItem(n, sx, seen)
	}
	if c, ok := attrOK(n, "content"); ok {
		return strings.TrimSpace(c)
	}
	switch n.DataAtom {
	case atom.Audio, atom.Embed, atom.Iframe, atom.Img, atom.Source, atom.Track, atom.Video:
		return nonEmptyOrNil(p.resolve(attr(n, "src")))
	case atom.A, atom.Area, atom.Link:
		return nonEmptyOrNil(p.resolve(attr(n, "href")))
	case atom.Object:
		return nonEmptyOrNil(p.resolve(attr(n, "data")))
	case atom.Data, atom.Meter:
		return strings.TrimSpace(attr(n, "value"))
	case atom.Time:
		if d, ok := attrOK(n, "datetime"); ok {
			return strings.TrimSpace(d)
		}
	}
	if sx == rdfaSyntax() {
		if r, ok := attrOK(n, "resource"); ok {
			return nonEmptyOrNil(p.resolve(r))
		}
	}
	return textOf(n)
}

// nonEmptyOrNil turns "" into a nil value (no value).
func nonEmptyOrNil(s string) any {
	if s == "" {
		return nil
	}
	return s
}

// addValue appends v to item[name], making a list on the second value.
func addValue(item map[string]any, name string, v any) {
	old, ok := item[name]
	if !ok {
		item[name] = v
		return
	}
	if list, isList := old.([]any); isList {
		item[name] = append(list, v)
		return
	}
	item[name] = []any{old, v}
}
