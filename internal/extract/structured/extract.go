package structured

import (
	"errors"
	"fmt"
	"sort"
	"strings"

	"golang.org/x/net/html"
)

// Result is what Extract found on one page.
type Result struct {
	// Object holds every property that was filled, coerced to the
	// schema's types (numbers as float64, integers as int64).
	Object map[string]any `json:"object"`
	// Sources maps a filled property's dot path ("name", "offers.price",
	// "reviews") to where its value came from: "selector:.price" (with
	// "@attr" when an attribute was read), "json-ld:Product.offers.price",
	// "microdata:Product.aggregateRating.ratingValue", "rdfa:Product.name",
	// "og:title", "product:price:amount", "meta:description", "html:title",
	// "link:canonical", "html:lang" or "page:url".
	Sources map[string]string `json:"sources"`
	// Missing lists the dot paths nothing filled, in name order: a
	// missing object is listed whole ("offers"), a partly filled one by
	// its missing leaves ("offers.priceCurrency").
	Missing []string `json:"missing,omitempty"`
	// Problems are the property errors (Errors) and the messages of
	// validating Object against the whole schema, each naming its
	// property ("price: required property is missing"); empty when Object
	// is valid (Schema.Problems).
	Problems []string `json:"problems,omitempty"`
	// Errors maps a property's dot path to why its x-selector hint gave
	// no value where it must: the element's text holds several candidate
	// values ("the text \"9. Classes … RFC 7159\" holds several numbers").
	// Such a property is neither filled from another source nor listed in
	// Missing (no model is asked to guess it): the page fails naming it,
	// and the fix is in the schema (x-pattern, or a narrower x-selector).
	Errors map[string]string `json:"errors,omitempty"`
	// Notes explain some misses: a value that was found but could not be
	// coerced or did not validate, a JSON-LD block that was not JSON.
	Notes []string `json:"notes,omitempty"`
}

// Valid reports whether Object validates against the schema.
func (r *Result) Valid() bool { return len(r.Problems) == 0 }

// Complete reports whether every property was filled and Object is valid.
func (r *Result) Complete() bool { return len(r.Missing) == 0 && r.Valid() }

// Extract fills the schema's properties from page, hints first, then
// JSON-LD, microdata, RDFa Lite, then meta tags and the page itself (see
// the package comment), and validates the result.
func (s *Schema) Extract(page *Page) *Result {
	x := extractor{s: s, page: page}
	acc := newFill()

	hints := newFill()
	x.fromHints(s.root, page.doc, "", hints)
	acc.merge(hints, "")

	for _, src := range []struct {
		kind     string
		entities []map[string]any
	}{
		{"json-ld", page.jsonld},
		{"microdata", page.microdata},
		{"rdfa", page.rdfa},
	} {
		acc.merge(x.bestEntity(src.kind, src.entities), "")
	}

	meta := newFill()
	x.fromMeta(s.root, meta)
	acc.merge(meta, "")

	for path := range hints.errs {
		dropPath(acc.obj, acc.src, path)
	}
	res := &Result{Object: acc.obj, Sources: acc.src}
	if len(hints.errs) > 0 {
		res.Errors = hints.errs
	}
	for _, m := range missingPaths(s.root, acc.obj, "") {
		if _, bad := hints.errs[m]; !bad {
			res.Missing = append(res.Missing, m)
		}
	}
	res.Problems = s.Problems(acc.obj, res.Errors)
	res.Notes = append(res.Notes, page.notes...)
	for _, m := range res.Missing {
		for _, path := range sortedKeys(acc.notes) {
			if path == m || strings.HasPrefix(path, m+".") {
				res.Notes = append(res.Notes, acc.notes[path])
			}
		}
	}
	return res
}

// fill is one source's (or the merged) partial object, with the source of
// each value, notes on rejected candidates and the property errors of
// hints (Result.Errors), all keyed by dot path.
type fill struct {
	obj   map[string]any
	src   map[string]string
	notes map[string]string
	errs  map[string]string
}

func newFill() *fill {
	return &fill{obj: map[string]any{}, src: map[string]string{}, notes: map[string]string{}, errs: map[string]string{}}
}

// merge adds what f lacks from other, property by property: a property f
// has keeps its value, an object both have is merged recursively.
func (f *fill) merge(other *fill, prefix string) {
	mergeInto(f.obj, other.obj, prefix, f.src, other.src)
	for k, v := range other.notes {
		if _, ok := f.notes[k]; !ok {
			f.notes[k] = v
		}
	}
	for k, v := range other.errs {
		f.fail(k, v)
	}
}

// mergeInto merges add into dst (both at prefix), copying the sources of
// what it takes.
func mergeInto(dst, add map[string]any, prefix string, dstSrc, addSrc map[string]string) {
	for k, v := range add {
		path := joinPath(prefix, k)
		old, ok := dst[k]
		if !ok {
			dst[k] = v
			for sp, s := range addSrc {
				if sp == path || strings.HasPrefix(sp, path+".") || strings.HasPrefix(sp, path+"[") {
					dstSrc[sp] = s
				}
			}
			continue
		}
		om, oldIsMap := old.(map[string]any)
		am, addIsMap := v.(map[string]any)
		if oldIsMap && addIsMap {
			mergeInto(om, am, path, dstSrc, addSrc)
		}
	}
}

// extractor carries one Extract call.
type extractor struct {
	s    *Schema
	page *Page
}

// bestEntity fills the root from each entity of one kind and keeps the
// fill with the most values (the first on ties). With a root x-type only
// entities of those types compete.
func (x extractor) bestEntity(kind string, entities []map[string]any) *fill {
	best := newFill()
	for _, e := range entities {
		types := entityTypes(e)
		if len(x.s.types) > 0 && !typeMatches(types, x.s.types) {
			continue
		}
		if len(x.s.types) == 0 && typeMatches(types, navigationTypes()) {
			continue
		}
		f := newFill()
		x.fromEntity(x.s.root, e, kind+":"+typeLabel(e), "", f, 0)
		// More values win; with as many, more rejected candidates (the
		// entity at least speaks of the properties, and its notes say why
		// they are missing).
		if len(f.src) > len(best.src) || (len(f.src) == len(best.src) && len(f.notes) > len(best.notes)) {
			best = f
		}
	}
	return best
}

// navigationTypes are schema.org types that describe a site's navigation,
// not a page's subject: they never fill the root unless x-type names them
// (a breadcrumb's or a list's item names are not the page's name).
func navigationTypes() []string {
	return []string{"ListItem", "BreadcrumbList", "SiteNavigationElement", "SearchAction", "EntryPoint",
		"WPHeader", "WPFooter", "WPSideBar"}
}

// typeMatches reports whether have and want share a type name.
func typeMatches(have, want []string) bool {
	for _, h := range have {
		for _, w := range want {
			if strings.EqualFold(h, w) {
				return true
			}
		}
	}
	return false
}

// typeLabel is an entity's first type name ("" when untyped).
func typeLabel(e map[string]any) string {
	if t := entityTypes(e); len(t) > 0 {
		return t[0]
	}
	return ""
}

// sourceLabel joins a label ("json-ld:Product") and a walked path.
func sourceLabel(label string, walked []string) string {
	path := strings.Join(walked, ".")
	if strings.HasSuffix(label, ":") {
		return label + path
	}
	return label + "." + path
}

// fromEntity fills p's properties (p is an object) from entity ent; label
// names the entity in sources, prefix is p's dot path.
func (x extractor) fromEntity(p *prop, ent map[string]any, label, prefix string, f *fill, depth int) {
	if depth > maxSchemaDepth {
		return
	}
	for _, c := range p.props {
		path := joinPath(prefix, c.name)
		at := x.s.syn.forName(c.name)
		switch {
		case c.typ == "object" && len(c.props) > 0:
			for _, lp := range at.paths {
				v, walked := x.get(ent, splitPath(lp))
				sub := x.firstEntity(v)
				if sub == nil {
					continue
				}
				sf := newFill()
				x.fromEntity(c, sub, sourceLabel(label, walked), "", sf, depth+1)
				if len(sf.obj) > 0 {
					f.obj[c.name] = sf.obj
					for sp, s := range sf.src {
						f.src[joinPath(path, sp)] = s
					}
					for sp, n := range sf.notes {
						f.notes[joinPath(path, sp)] = n
					}
					break
				}
			}
		case c.typ == "array":
			for _, lp := range at.paths {
				v, walked := x.get(ent, splitPath(lp))
				if v == nil {
					continue
				}
				if list, ok := x.arrayFrom(c, asList(v), sourceLabel(label, walked), depth); ok {
					f.obj[c.name] = list
					f.src[path] = sourceLabel(label, walked)
					break
				}
			}
		default:
			for _, lp := range at.paths {
				v, walked := x.get(ent, splitPath(lp))
				if v == nil {
					continue
				}
				v, walked = x.unwrap(v, walked)
				if x.accept(c, path, v, sourceLabel(label, walked), f) {
					break
				}
			}
		}
	}
}

// arrayFrom builds an array property's value from found elements: objects
// filled from entities, or scalars coerced one by one (those that fail are
// dropped). ok is false when nothing usable remains or the array fails
// its subschema.
func (x extractor) arrayFrom(c *prop, elems []any, label string, depth int) ([]any, bool) {
	var out []any
	for _, e := range elems {
		switch {
		case c.items != nil && c.items.typ == "object" && len(c.items.props) > 0:
			m := x.firstEntity(e)
			if m == nil {
				continue
			}
			sf := newFill()
			x.fromEntity(c.items, m, label, "", sf, depth+1)
			if len(sf.obj) > 0 {
				out = append(out, sf.obj)
			}
		case c.items != nil:
			if v, err := coerce(c.items, e, x.page); err == nil {
				out = append(out, v)
			}
		default:
			if s, ok := e.(string); ok {
				e = cleanText(s)
			}
			out = append(out, e)
		}
	}
	if len(out) == 0 || len(validationMessages(c.check, toValidatable(out), "")) > 0 {
		return nil, false
	}
	return out, true
}

// accept coerces v for scalar property c and keeps it when it validates
// against c's subschema; otherwise it notes why and returns false.
func (x extractor) accept(c *prop, path string, v any, label string, f *fill) bool {
	return x.try(c, path, v, label, f) == nil
}

// try is accept returning why v was refused (the coercion's error, such
// as an *ambiguousError, or the subschema's refusal).
func (x extractor) try(c *prop, path string, v any, label string, f *fill) error {
	out, err := coerce(c, v, x.page)
	if err != nil {
		f.note(path, fmt.Sprintf("%s: %s gave a value that is not usable: %v", path, label, err))
		return err
	}
	if msgs := validationMessages(c.check, toValidatable(out), path); len(msgs) > 0 {
		f.note(path, fmt.Sprintf("%s: %s gave %s, which the schema refuses: %s", path, label, clip(fmt.Sprint(out), 60), strings.Join(msgs, "; ")))
		return errors.New(strings.Join(msgs, "; "))
	}
	f.obj[c.name] = out
	f.src[path] = label
	return nil
}

// fail records a property error for path (the first one stays).
func (f *fill) fail(path, msg string) {
	if _, ok := f.errs[path]; !ok {
		f.errs[path] = msg
	}
}

// note keeps the first note for a path.
func (f *fill) note(path, msg string) {
	if _, ok := f.notes[path]; !ok {
		f.notes[path] = msg
	}
}

// get follows a property path inside a structured value: through lists
// (the first element that has the path), @id references (JSON-LD), and
// keys matched exactly or, failing that, after normKey. It returns the
// value and the keys walked, or nil.
func (x extractor) get(v any, segs []string) (any, []string) {
	if len(segs) == 0 {
		if m, ok := v.(map[string]any); ok {
			return x.deref(m), nil
		}
		return v, nil
	}
	switch t := v.(type) {
	case []any:
		for _, e := range t {
			if r, w := x.get(e, segs); r != nil {
				return r, w
			}
		}
	case map[string]any:
		key, val := findKey(x.deref(t), segs[0])
		if key == "" {
			return nil, nil
		}
		if r, w := x.get(val, segs[1:]); r != nil {
			return r, append([]string{key}, w...)
		}
	}
	return nil, nil
}

// unwrap turns an entity found where a scalar is asked into its telling
// value, the way coerce does, so the source names the key read: a Brand
// gives "brand.name", an ImageObject "image.url".
func (x extractor) unwrap(v any, walked []string) (any, []string) {
	for i := 0; i < 4; i++ {
		m := x.firstEntity(v)
		if m == nil {
			return v, walked
		}
		key := ""
		for _, k := range scalarKeys() {
			if _, ok := m[k]; ok {
				key = k
				break
			}
		}
		if key == "" {
			return v, walked
		}
		v, walked = m[key], append(walked, key)
	}
	return v, walked
}

// deref replaces a bare JSON-LD reference {"@id": "…"} by the node that
// carries that @id on the page.
func (x extractor) deref(m map[string]any) map[string]any {
	if id, ok := m["@id"].(string); ok && len(m) == 1 {
		if full, ok := x.page.jsonldIDs[id]; ok {
			return full
		}
	}
	return m
}

// findKey finds a key of m: name itself, else the first key (in name
// order) equal to it after normKey. Keywords (@type…) match only exactly.
func findKey(m map[string]any, name string) (string, any) {
	if v, ok := m[name]; ok {
		return name, v
	}
	want := normKey(name)
	var keys []string
	for k := range m {
		if !strings.HasPrefix(k, "@") && normKey(k) == want {
			keys = append(keys, k)
		}
	}
	if len(keys) == 0 {
		return "", nil
	}
	sort.Strings(keys)
	return keys[0], m[keys[0]]
}

// fromMeta fills the root's scalar properties (and arrays of scalars) from
// meta tags and the page itself.
func (x extractor) fromMeta(root *prop, f *fill) {
	for _, c := range root.props {
		if c.typ == "object" {
			continue
		}
		at := x.s.syn.forName(c.name)
		for _, key := range at.meta {
			vals := x.page.meta[key]
			if len(vals) == 0 {
				continue
			}
			label := metaLabel(key)
			if c.typ == "array" {
				elems := make([]any, len(vals))
				for i, v := range vals {
					elems[i] = v
				}
				if list, ok := x.arrayFrom(c, elems, label, 0); ok {
					f.obj[c.name] = list
					f.src[c.name] = label
					break
				}
				continue
			}
			done := false
			for _, v := range vals {
				if done = x.accept(c, c.name, v, label, f); done {
					break
				}
			}
			if done {
				break
			}
		}
	}
}

// metaLabel names a meta key as a source: "og:title" stays, a plain name
// becomes "meta:description".
func metaLabel(key string) string {
	if strings.Contains(key, ":") {
		return key
	}
	return "meta:" + key
}

// fromHints fills properties that carry an x-selector, relative to ctx;
// an object without one passes ctx on to its properties.
func (x extractor) fromHints(p *prop, ctx *html.Node, prefix string, f *fill) {
	for _, c := range p.props {
		path := joinPath(prefix, c.name)
		if c.selector == nil {
			if c.typ == "object" && len(c.props) > 0 {
				sf := newFill()
				x.fromHints(c, ctx, "", sf)
				x.adopt(f, sf, c.name, path)
			}
			continue
		}
		label := "selector:" + c.selectorText
		if c.attr != "" {
			label += "@" + c.attr
		}
		matches := c.selector.MatchAll(ctx)
		switch {
		case c.count:
			x.accept(c, path, float64(len(matches)), countLabel(c.selectorText), f)
		case c.typ == "array" && len(matches) == 0:
			x.emptyList(c, path, label, f)
		case c.typ == "object" && len(c.props) > 0:
			if len(matches) == 0 {
				continue
			}
			sf := newFill()
			x.fromHints(c, matches[0], "", sf)
			x.adopt(f, sf, c.name, path)
		case c.typ == "array":
			var out []any
			for i, m := range matches {
				if c.items != nil && c.items.typ == "object" && len(c.items.props) > 0 {
					sf := newFill()
					x.fromHints(c.items, m, "", sf)
					for _, sp := range sortedKeys(sf.errs) {
						f.fail(path, fmt.Sprintf("%s[%d].%s", path, i, sf.errs[sp]))
					}
					if len(sf.obj) > 0 {
						out = append(out, sf.obj)
					}
					continue
				}
				if v := x.hintValue(c, m, path, label, f); v != "" {
					out = append(out, v)
				}
			}
			if f.errs[path] != "" {
				continue
			}
			if len(out) == 0 {
				f.note(path, fmt.Sprintf("%s: %s matched %d elements, none with a value", path, label, len(matches)))
				continue
			}
			if msg, bad := x.ambiguousItem(c, path, label, out); bad {
				f.fail(path, msg)
				continue
			}
			list, ok := out, false
			if c.items != nil && c.items.typ == "object" && len(c.items.props) > 0 {
				ok = len(validationMessages(c.check, toValidatable(out), "")) == 0
			} else {
				list, ok = x.arrayFrom(c, out, label, 0)
			}
			if ok {
				f.obj[c.name] = list
				f.src[path] = label
			} else {
				f.note(path, fmt.Sprintf("%s: %s matched %d elements but the schema refuses them", path, label, len(matches)))
			}
		default:
			if len(matches) == 0 {
				f.note(path, fmt.Sprintf("%s: %s matches no element", path, label))
			}
			for _, m := range matches {
				v := x.hintValue(c, m, path, label, f)
				if v == "" {
					continue
				}
				err := x.try(c, path, v, label, f)
				if msg, bad := ambiguityMessage(path, label, c, err); bad {
					f.fail(path, msg)
				}
				if err == nil || f.errs[path] != "" {
					break
				}
			}
		}
	}
}

// adopt moves a nested fill sf (of property name at path) into f when it
// filled anything.
func (x extractor) adopt(f, sf *fill, name, path string) {
	for sp, n := range sf.notes {
		f.note(joinPath(path, sp), n)
	}
	for sp, e := range sf.errs {
		f.fail(joinPath(path, sp), path+"."+e) // e starts with sp
	}
	if len(sf.obj) == 0 {
		return
	}
	f.obj[name] = sf.obj
	for sp, s := range sf.src {
		f.src[joinPath(path, sp)] = s
	}
}

// nodeValue reads an element like batch_extract_pages' fields: its text
// ("" attr), its inner HTML ("html"), or an attribute, with href, src and
// their kin made absolute.
func (x extractor) nodeValue(n *html.Node, attrName string) string {
	switch attrName {
	case "":
		return x.page.text.ElementText(n)
	case "html":
		return innerHTML(n)
	}
	v, ok := attrOK(n, attrName)
	if !ok {
		return ""
	}
	switch attrName {
	case "href", "src", "data", "action", "poster", "cite", "formaction":
		return x.page.resolve(v)
	}
	return strings.TrimSpace(v)
}

// missingPaths lists p's properties absent from obj: an absent object
// whole, a present one by its missing leaves.
func missingPaths(p *prop, obj map[string]any, prefix string) []string {
	var out []string
	for _, c := range p.props {
		path := joinPath(prefix, c.name)
		v, ok := obj[c.name]
		if !ok {
			out = append(out, path)
			continue
		}
		if sub, isMap := v.(map[string]any); isMap && c.typ == "object" {
			out = append(out, missingPaths(c, sub, path)...)
		}
	}
	return out
}

// splitPath splits a dot path of a lookup.
func splitPath(p string) []string { return strings.Split(p, ".") }

// firstEntity returns v as an object, or the first object of a list,
// with a JSON-LD @id reference replaced by the node it names.
func (x extractor) firstEntity(v any) map[string]any {
	switch t := v.(type) {
	case map[string]any:
		return x.deref(t)
	case []any:
		for _, e := range t {
			if m, ok := e.(map[string]any); ok {
				return x.deref(m)
			}
		}
	}
	return nil
}

// asList returns v as a list (a single value as a list of one).
func asList(v any) []any {
	if l, ok := v.([]any); ok {
		return l
	}
	return []any{v}
}

// sortedKeys returns m's keys in order.
func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
