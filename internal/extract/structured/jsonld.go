package structured

import (
	"encoding/json"
	"fmt"
	"html"
	"regexp"
	"sort"
	"strings"

	xhtml "golang.org/x/net/html"
	"golang.org/x/net/html/atom"
)

// maxJSONLDBytes bounds one JSON-LD block that is read.
const maxJSONLDBytes = 2 << 20

// readJSONLD parses every <script type="application/ld+json"> and collects
// its typed nodes (top level, @graph members, array members and nested
// nodes alike) in document order, and the nodes that carry an @id.
func (p *Page) readJSONLD() {
	block := 0
	walk(p.doc, func(n *xhtml.Node) bool {
		if n.DataAtom != atom.Script {
			return true
		}
		typ := strings.ToLower(strings.TrimSpace(strings.SplitN(attr(n, "type"), ";", 2)[0]))
		if typ != "application/ld+json" {
			return false
		}
		block++
		var src strings.Builder
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			if c.Type == xhtml.TextNode {
				src.WriteString(c.Data)
			}
		}
		v, err := decodeJSONLD(src.String())
		if err != nil {
			p.notes = append(p.notes, fmt.Sprintf("JSON-LD block %d skipped: %v", block, err))
			return false
		}
		p.collectJSONLD(unescapeStrings(v))
		return false
	})
}

// decodeJSONLD reads one block, forgiving the usual damage: HTML comment
// or CDATA wrappers and trailing commas.
func decodeJSONLD(s string) (any, error) {
	if len(s) > maxJSONLDBytes {
		return nil, fmt.Errorf("larger than %d bytes", maxJSONLDBytes)
	}
	s = strings.TrimSpace(s)
	for _, w := range []string{"<!--", "-->", "//<![CDATA[", "//]]>", "<![CDATA[", "]]>"} {
		s = strings.ReplaceAll(s, w, "")
	}
	var v any
	err := json.Unmarshal([]byte(s), &v)
	if err == nil {
		return v, nil
	}
	// A comma before a closing bracket: hand-made JSON-LD often has one.
	trailingComma := regexp.MustCompile(`,\s*([}\]])`)
	if err2 := json.Unmarshal([]byte(trailingComma.ReplaceAllString(s, "$1")), &v); err2 == nil {
		return v, nil
	}
	return nil, fmt.Errorf("not JSON: %v", err)
}

// unescapeStrings decodes HTML entities left in JSON-LD strings ("AT&amp;T"
// written into a script, where the browser does not decode them).
func unescapeStrings(v any) any {
	switch t := v.(type) {
	case string:
		if strings.Contains(t, "&") {
			return html.UnescapeString(t)
		}
		return t
	case []any:
		for i, x := range t {
			t[i] = unescapeStrings(x)
		}
	case map[string]any:
		for k, x := range t {
			t[k] = unescapeStrings(x)
		}
	}
	return v
}

// collectJSONLD walks a decoded block and records typed nodes and @ids.
func (p *Page) collectJSONLD(v any) {
	switch t := v.(type) {
	case []any:
		for _, x := range t {
			p.collectJSONLD(x)
		}
	case map[string]any:
		if id, ok := t["@id"].(string); ok && len(t) > 1 {
			if _, seen := p.jsonldIDs[id]; !seen {
				p.jsonldIDs[id] = t
			}
		}
		if len(entityTypes(t)) > 0 {
			p.jsonld = append(p.jsonld, t)
		}
		keys := make([]string, 0, len(t))
		for k := range t {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			x := t[k]
			if k == "@context" {
				continue
			}
			if k == "@graph" {
				p.collectJSONLD(x)
				continue
			}
			switch x.(type) {
			case []any, map[string]any:
				p.collectNested(x)
			}
		}
	}
}

// collectNested records typed nodes below a node's properties, parents
// before children (sibling properties in name order).
func (p *Page) collectNested(v any) {
	switch t := v.(type) {
	case []any:
		for _, x := range t {
			p.collectNested(x)
		}
	case map[string]any:
		p.collectJSONLD(t)
	}
}

// entityTypes returns a node's @type names, shortened to the schema.org
// local name ("http://schema.org/Product" → "Product").
func entityTypes(m map[string]any) []string {
	var out []string
	switch t := m["@type"].(type) {
	case string:
		out = append(out, shortType(t))
	case []any:
		for _, x := range t {
			if s, ok := x.(string); ok {
				out = append(out, shortType(s))
			}
		}
	}
	return out
}

// shortType cuts a type IRI or CURIE to its local name.
func shortType(s string) string {
	s = strings.TrimSpace(s)
	if i := strings.LastIndexAny(s, "/#"); i >= 0 {
		s = s[i+1:]
	}
	if i := strings.LastIndex(s, ":"); i >= 0 {
		s = s[i+1:]
	}
	return s
}
