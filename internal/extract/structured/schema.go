// Package structured fills a caller's JSON Schema (2020-12) from what a web
// page already states in machine-readable form, with no model and no cost.
//
// For each property of the schema it tries, in this order, and keeps the
// first value that coerces to the property's type and validates against
// the property's own subschema:
//
//  1. a hint in the schema: "x-selector" (a CSS selector) with an optional
//     "x-attr" (an attribute name, "text" the default, or "html"), the same
//     semantics as batch_extract_pages' fields, and optionally "x-pattern"
//     (a regular expression whose one capture group is the value) or
//     "x-count": true (the number of matching elements; hints.go). A
//     scalar takes the first matching element that gives a value; an
//     element whose text holds several numbers (or dates) is a property
//     error naming the text (Result.Errors), never its first number. An
//     array whose x-selector matches nothing is [] (unless its subschema
//     refuses an empty list, as minItems does);
//  2. JSON-LD (<script type="application/ld+json">, with @graph, arrays and
//     @id references);
//  3. microdata (itemscope / itemprop / itemtype, nested items);
//  4. RDFa Lite (vocab / typeof / property);
//  5. OpenGraph and other meta tags, then the page itself (<title>,
//     <link rel="canonical">, <html lang>, the final URL).
//
// Properties are matched by name and by common synonyms (see synonyms.go):
// a property "price" is read from a JSON-LD Product's offers.price or
// offers.lowPrice, from og:price:amount or product:price:amount, and so on.
// Within one source the entity that fills the most properties is used (a
// root "x-type": "Product" restricts the choice to those types; without
// it, navigation types such as BreadcrumbList and ListItem never compete).
// Nested
// object properties are filled from the matching nested entity (offers,
// aggregateRating, brand, author…); arrays from repeated values.
//
// Every filled value records where it came from (Result.Sources), what
// nothing filled is listed in Result.Missing, and the object is validated
// against the whole schema (Result.Problems).
package structured

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"sort"
	"strconv"
	"strings"

	"github.com/andybalholm/cascadia"
	"github.com/browsertask/browsertask/engine"
	"github.com/santhosh-tekuri/jsonschema/v6"
	"github.com/santhosh-tekuri/jsonschema/v6/kind"
	"golang.org/x/text/language"
	"golang.org/x/text/message"
)

// schemaURL is the in-memory location the caller's schema is compiled at.
const schemaURL = "mem://output-schema.json"

// maxSchemaDepth bounds how deep nested properties (and $ref chains) are
// walked, so a recursive schema terminates.
const maxSchemaDepth = 12

// maxMessages bounds the validation messages returned for one object.
const maxMessages = 20

// Schema is a caller's output schema, validated, compiled, and walked into
// the tree of properties Extract fills. It is safe for concurrent use.
type Schema struct {
	raw      map[string]any
	field    string
	compiled *jsonschema.Schema
	root     *prop
	// types restricts which structured-data entities may fill the root
	// (from the root's "x-type"); empty means any.
	types []string
	syn   synonymIndex
}

// prop is one property of the schema (or the root, or an array's items).
type prop struct {
	name   string
	ptr    string // JSON pointer of the resolved subschema
	typ    string // "string", "number", "integer", "boolean", "object", "array" or "" (any)
	format string
	enum   []any

	selector     cascadia.Selector // x-selector, nil when absent
	selectorText string
	attr         string         // x-attr ("" = text)
	pattern      *regexp.Regexp // x-pattern, nil when absent (hints.go)
	count        bool           // x-count: the value is the number of matches

	props    []*prop // object: its properties, by name
	required map[string]bool
	items    *prop // array: its items

	check *jsonschema.Schema // the property's own subschema, compiled
}

// Compile validates doc as a JSON Schema 2020-12 document and prepares it
// for Extract. field names the schema in messages ("options.outputSchema").
// The root must describe an object with at least one property; $ref may
// only point inside the document; an x-selector must be a valid CSS
// selector; a property name must not contain "." (paths such as
// "offers.price" join names with it). Every error names the offending path, e.g.
// "options.outputSchema.properties.price.type: value must be one of …".
func Compile(doc json.RawMessage, field string) (*Schema, error) {
	if field == "" {
		field = "outputSchema"
	}
	if len(bytes.TrimSpace(doc)) == 0 {
		return nil, fmt.Errorf("%s is required: give a JSON Schema object such as {\"type\":\"object\",\"properties\":{\"name\":{\"type\":\"string\"}}}", field)
	}
	v, err := jsonschema.UnmarshalJSON(bytes.NewReader(doc))
	if err != nil {
		return nil, fmt.Errorf("%s is not valid JSON: %v", field, err)
	}
	raw, ok := v.(map[string]any)
	if !ok {
		return nil, fmt.Errorf("%s must be a JSON Schema object describing the output object, not %s", field, jsonKind(v))
	}
	c := jsonschema.NewCompiler()
	c.DefaultDraft(jsonschema.Draft2020)
	c.AssertFormat()
	c.UseLoader(noRemoteLoader{field: field})
	if err := c.AddResource(schemaURL, v); err != nil {
		return nil, fmt.Errorf("%s: %v", field, err)
	}
	compiled, err := c.Compile(schemaURL)
	if err != nil {
		return nil, compileError(field, err)
	}
	s := &Schema{raw: raw, field: field, compiled: compiled, syn: newSynonymIndex()}
	if s.types, err = xTypes(raw, field); err != nil {
		return nil, err
	}
	w := walker{s: s, c: c}
	root, err := w.walk("", raw, "", 0)
	if err != nil {
		return nil, err
	}
	if root.typ != "object" || len(root.props) == 0 {
		return nil, fmt.Errorf("%s must describe an object with properties to fill: set \"type\": \"object\" and \"properties\": {…} with at least one property", field)
	}
	s.root = root
	return s, nil
}

// Raw returns the schema document as compiled (decoded JSON).
func (s *Schema) Raw() map[string]any { return s.raw }

// Field is the name the schema has in messages.
func (s *Schema) Field() string { return s.field }

// Properties lists the leaf paths Extract fills, in name order:
// "name", "offers.price", "reviews" (an array counts as one leaf).
func (s *Schema) Properties() []string {
	var out []string
	var walk func(p *prop, prefix string)
	walk = func(p *prop, prefix string) {
		for _, c := range p.props {
			path := joinPath(prefix, c.name)
			if c.typ == "object" && len(c.props) > 0 {
				walk(c, path)
				continue
			}
			out = append(out, path)
		}
	}
	walk(s.root, "")
	return out
}

// Validate checks obj against the whole schema and returns one message per
// problem, sorted, each naming the property ("price: required property is
// missing", "rating: must be <= 5, but got 7"); nil when obj is valid.
func (s *Schema) Validate(obj any) []string {
	return validationMessages(s.compiled, toValidatable(obj), "")
}

// CoerceValue converts v to what the schema asks at path (a dot path such
// as "offers.price"), with the rules of Extract (see coerce.go), and
// checks it against that property's subschema. An object or array is
// coerced member by member (nulls dropped). It lets a caller (the model
// fill) bring a value found elsewhere into shape; errors name the path.
func (s *Schema) CoerceValue(path string, v any) (any, error) {
	p := s.lookup(path)
	if p == nil {
		return nil, fmt.Errorf("%s has no property %q", s.field, path)
	}
	out, err := coerceDeep(p, v, path)
	if err != nil {
		return nil, err
	}
	if msgs := validationMessages(p.check, toValidatable(out), path); len(msgs) > 0 {
		return nil, errors.New(strings.Join(msgs, "; "))
	}
	return out, nil
}

// Restrict returns a JSON Schema that asks only for the given dot paths
// (as Result.Missing lists them): the root and the objects on the way keep
// their type, the listed properties keep their whole subschema (minus the
// x- hints), and "required" keeps only what is both required and asked.
// $defs and definitions are carried along so local $refs still resolve.
func (s *Schema) Restrict(paths []string) map[string]any {
	out := map[string]any{"type": "object", "properties": map[string]any{}}
	for _, k := range []string{"$defs", "definitions"} {
		if d, ok := s.raw[k]; ok {
			out[k] = stripHints(d)
		}
	}
	for _, path := range paths {
		parts := strings.Split(path, ".")
		p := s.root
		dst := out
		for i, name := range parts {
			c := p.child(name)
			if c == nil {
				break
			}
			props := dst["properties"].(map[string]any)
			if p.required[name] {
				addRequired(dst, name)
			}
			if i == len(parts)-1 {
				props[name] = stripHints(s.subschema(c.ptr))
				break
			}
			next, ok := props[name].(map[string]any)
			if !ok {
				next = map[string]any{"type": "object", "properties": map[string]any{}}
				props[name] = next
			}
			dst, p = next, c
		}
	}
	return out
}

// lookup finds the property at a dot path, or nil.
func (s *Schema) lookup(path string) *prop {
	p := s.root
	for _, name := range strings.Split(path, ".") {
		if p = p.child(name); p == nil {
			return nil
		}
	}
	return p
}

// subschema returns the raw subschema at a JSON pointer of the document.
func (s *Schema) subschema(ptr string) any {
	var cur any = s.raw
	if ptr == "" {
		return cur
	}
	for _, tok := range strings.Split(strings.TrimPrefix(ptr, "/"), "/") {
		tok = strings.NewReplacer("~1", "/", "~0", "~").Replace(tok)
		switch c := cur.(type) {
		case map[string]any:
			cur = c[tok]
		case []any:
			i, err := strconv.Atoi(tok)
			if err != nil || i < 0 || i >= len(c) {
				return nil
			}
			cur = c[i]
		default:
			return nil
		}
	}
	return cur
}

// child returns the property name of an object property, or nil.
func (p *prop) child(name string) *prop {
	for _, c := range p.props {
		if c.name == name {
			return c
		}
	}
	return nil
}

// walker turns the raw schema into the prop tree, compiling each
// property's subschema for candidate checks.
type walker struct {
	s *Schema
	c *jsonschema.Compiler
}

// walk builds the prop for the subschema node found at ptr.
func (w walker) walk(name string, node any, ptr string, depth int) (*prop, error) {
	node, ptr, err := w.deref(node, ptr, depth)
	if err != nil {
		return nil, err
	}
	p := &prop{name: name, ptr: ptr}
	check, err := w.c.Compile(schemaURL + "#" + ptr)
	if err != nil {
		return nil, compileError(w.s.field, err)
	}
	p.check = check
	m, _ := node.(map[string]any)
	if m == nil {
		return p, nil // a boolean schema: anything (or nothing) goes
	}
	p.typ = w.typeOf(m, ptr, depth)
	p.format, _ = m["format"].(string)
	p.enum, _ = m["enum"].([]any)
	if err := w.hints(p, m, ptr); err != nil {
		return nil, err
	}
	if depth >= maxSchemaDepth {
		return p, w.textHints(p, m, ptr)
	}
	switch p.typ {
	case "object":
		props, _ := m["properties"].(map[string]any)
		names := make([]string, 0, len(props))
		for n := range props {
			names = append(names, n)
		}
		sort.Strings(names)
		for _, n := range names {
			if strings.Contains(n, ".") {
				// Paths join names with "." (Missing, Sources,
				// CoerceValue, Restrict): "a.b" would read as b inside a.
				return nil, fmt.Errorf("%s: the property name %q contains \".\", which paths such as \"offers.price\" use between names; rename it, e.g. %q",
					pointerPath(w.s.field, ptr+"/properties/"+escapePointer(n)), n, strings.ReplaceAll(n, ".", "_"))
			}
			c, err := w.walk(n, props[n], ptr+"/properties/"+escapePointer(n), depth+1)
			if err != nil {
				return nil, err
			}
			p.props = append(p.props, c)
		}
		p.required = map[string]bool{}
		req, _ := m["required"].([]any)
		for _, r := range req {
			if rs, ok := r.(string); ok {
				p.required[rs] = true
			}
		}
	case "array":
		if items, ok := m["items"]; ok {
			it, err := w.walk("", items, ptr+"/items", depth+1)
			if err != nil {
				return nil, err
			}
			p.items = it
		}
	}
	return p, w.textHints(p, m, ptr)
}

// deref follows local $refs ("#/$defs/x") from node, returning the target
// and its pointer. Sibling keywords of a $ref are not merged: the target
// describes the property.
func (w walker) deref(node any, ptr string, depth int) (any, string, error) {
	for i := 0; i < maxSchemaDepth; i++ {
		m, ok := node.(map[string]any)
		if !ok {
			return node, ptr, nil
		}
		ref, ok := m["$ref"].(string)
		if !ok {
			return node, ptr, nil
		}
		if !strings.HasPrefix(ref, "#") {
			return nil, "", fmt.Errorf("%s: $ref %q leaves the schema: put the subschema under $defs and refer to it as \"#/$defs/NAME\"", pointerPath(w.s.field, ptr), ref)
		}
		target := strings.TrimPrefix(ref, "#")
		if target != "" && !strings.HasPrefix(target, "/") {
			return nil, "", fmt.Errorf("%s: $ref %q uses an anchor: refer to the subschema by pointer, e.g. \"#/$defs/NAME\"", pointerPath(w.s.field, ptr), ref)
		}
		next := w.s.subschema(target)
		if next == nil {
			return nil, "", fmt.Errorf("%s: $ref %q points to nothing in the schema", pointerPath(w.s.field, ptr), ref)
		}
		node, ptr = next, target
	}
	return nil, "", fmt.Errorf("%s: $ref chain is longer than %d steps", pointerPath(w.s.field, ptr), maxSchemaDepth)
}

// typeOf decides which JSON type a property is filled as: its "type" (the
// first that is not "null" when it lists several), else the first
// non-null branch of anyOf/oneOf, else what properties/items/enum imply.
func (w walker) typeOf(m map[string]any, ptr string, depth int) string {
	switch t := m["type"].(type) {
	case string:
		if t != "null" {
			return t
		}
	case []any:
		for _, x := range t {
			if s, ok := x.(string); ok && s != "null" {
				return s
			}
		}
	}
	for _, k := range []string{"anyOf", "oneOf"} {
		branches, _ := m[k].([]any)
		for i, b := range branches {
			bn, _, err := w.deref(b, fmt.Sprintf("%s/%s/%d", ptr, k, i), depth)
			if bm, ok := bn.(map[string]any); ok && err == nil {
				if t := w.typeOf(bm, ptr, depth+1); t != "" {
					return t
				}
			}
		}
	}
	if _, ok := m["properties"]; ok {
		return "object"
	}
	if _, ok := m["items"]; ok {
		return "array"
	}
	if e, ok := m["enum"].([]any); ok && len(e) > 0 {
		return jsonKind(e[0])
	}
	return ""
}

// hints reads x-selector and x-attr.
func (w walker) hints(p *prop, m map[string]any, ptr string) error {
	if a, ok := m["x-attr"]; ok {
		s, isStr := a.(string)
		if !isStr || strings.TrimSpace(s) == "" {
			return fmt.Errorf("%s.x-attr must be an attribute name, \"text\" or \"html\"", pointerPath(w.s.field, ptr))
		}
		p.attr = strings.ToLower(strings.TrimSpace(s))
		if p.attr == "text" {
			p.attr = ""
		}
	}
	sel, ok := m["x-selector"]
	if !ok {
		if p.attr != "" {
			return fmt.Errorf("%s.x-attr needs an x-selector beside it naming the element", pointerPath(w.s.field, ptr))
		}
		return nil
	}
	text, isStr := sel.(string)
	if !isStr || strings.TrimSpace(text) == "" {
		return fmt.Errorf("%s.x-selector must be a CSS selector string such as \".price\"", pointerPath(w.s.field, ptr))
	}
	compiled, err := cascadia.Compile(text)
	if err != nil {
		return fmt.Errorf("%s.x-selector %q is not a valid CSS selector: %v", pointerPath(w.s.field, ptr), text, err)
	}
	p.selector, p.selectorText = compiled, strings.TrimSpace(text)
	return nil
}

// xTypes reads the root's x-type: a schema.org type name or a list.
func xTypes(raw map[string]any, field string) ([]string, error) {
	v, ok := raw["x-type"]
	if !ok {
		return nil, nil
	}
	var out []string
	switch t := v.(type) {
	case string:
		out = []string{t}
	case []any:
		for _, x := range t {
			s, ok := x.(string)
			if !ok {
				return nil, fmt.Errorf("%s.x-type must be a type name or a list of names such as [\"Product\"]", field)
			}
			out = append(out, s)
		}
	default:
		return nil, fmt.Errorf("%s.x-type must be a type name or a list of names such as [\"Product\"]", field)
	}
	for i, s := range out {
		out[i] = shortType(s)
	}
	return out, nil
}

// noRemoteLoader refuses every $ref that leaves the document: a caller's
// schema must not make the server read files or fetch URLs.
type noRemoteLoader struct{ field string }

// Load implements jsonschema.URLLoader.
func (l noRemoteLoader) Load(url string) (any, error) {
	return nil, fmt.Errorf("%s: $ref to %s is not allowed: put the subschema under $defs", l.field, url)
}

// compileError renders a compile failure with the schema path it names.
func compileError(field string, err error) error {
	var sve *jsonschema.SchemaValidationError
	if errors.As(err, &sve) {
		var ve *jsonschema.ValidationError
		if errors.As(sve.Err, &ve) {
			msgs := leafMessages(ve, field)
			return fmt.Errorf("%s is not a valid JSON Schema 2020-12: %s", field, strings.Join(msgs, "; "))
		}
	}
	return fmt.Errorf("%s is not a valid JSON Schema 2020-12: %v", field, err)
}

// validationMessages validates v and renders the problems.
// root names the value in messages ("" for an object's own properties).
func validationMessages(s *jsonschema.Schema, v any, root string) []string {
	err := s.Validate(v)
	if err == nil {
		return nil
	}
	var ve *jsonschema.ValidationError
	if !errors.As(err, &ve) {
		return []string{err.Error()}
	}
	return leafMessages(ve, root)
}

// leafMessages renders the leaves of a validation error as "path: message",
// sorted and de-duplicated; a missing required property names itself.
func leafMessages(ve *jsonschema.ValidationError, root string) []string {
	p := message.NewPrinter(language.English)
	seen := map[string]bool{}
	var msgs []string
	add := func(m string) {
		if !seen[m] {
			seen[m] = true
			msgs = append(msgs, m)
		}
	}
	var walk func(e *jsonschema.ValidationError)
	walk = func(e *jsonschema.ValidationError) {
		if len(e.Causes) > 0 {
			for _, c := range e.Causes {
				walk(c)
			}
			return
		}
		if ap, ok := e.ErrorKind.(*kind.AdditionalProperties); ok {
			sort.Strings(ap.Properties) // map order in the library: one object, one message
		}
		if req, ok := e.ErrorKind.(*kind.Required); ok {
			for _, name := range req.Missing {
				add(tokensPath(root, append(append([]string{}, e.InstanceLocation...), name)) + ": required property is missing")
			}
			return
		}
		add(tokensPath(root, e.InstanceLocation) + ": " + clip(e.ErrorKind.LocalizedString(p), 300))
	}
	walk(ve)
	sort.Strings(msgs)
	if len(msgs) > maxMessages {
		msgs = append(msgs[:maxMessages], fmt.Sprintf("and %d more", len(msgs)-maxMessages))
	}
	return msgs
}

// tokensPath renders JSON pointer tokens as "offers.price" or
// "reviews[0].author" under root (engine.FieldPath's rule; "(root)" for
// the schema's root itself).
func tokensPath(root string, tokens []string) string {
	if root == "" && len(tokens) == 0 {
		return "(root)"
	}
	return engine.FieldPath(root, tokens)
}

// pointerPath renders a JSON pointer of the schema document under field:
// "/properties/price" → "outputSchema.properties.price".
func pointerPath(field, ptr string) string {
	if ptr == "" {
		return field
	}
	var toks []string
	for _, t := range strings.Split(strings.TrimPrefix(ptr, "/"), "/") {
		toks = append(toks, strings.NewReplacer("~1", "/", "~0", "~").Replace(t))
	}
	return tokensPath(field, toks)
}

// escapePointer escapes a property name as a JSON pointer token.
func escapePointer(s string) string {
	return strings.NewReplacer("~", "~0", "/", "~1").Replace(s)
}

// joinPath appends name to a dot path.
func joinPath(prefix, name string) string {
	if prefix == "" {
		return name
	}
	return prefix + "." + name
}

// addRequired adds name to dst's "required" list once.
func addRequired(dst map[string]any, name string) {
	req, _ := dst["required"].([]any)
	for _, r := range req {
		if r == name {
			return
		}
	}
	dst["required"] = append(req, name)
}

// stripHints copies a raw subschema without the x- hint keywords, which
// mean nothing to a model.
func stripHints(v any) any {
	switch t := v.(type) {
	case map[string]any:
		out := make(map[string]any, len(t))
		for k, x := range t {
			if strings.HasPrefix(k, "x-") {
				continue
			}
			out[k] = stripHints(x)
		}
		return out
	case []any:
		out := make([]any, len(t))
		for i, x := range t {
			out[i] = stripHints(x)
		}
		return out
	}
	return v
}

// toValidatable round-trips v through JSON so Go numeric types, nested
// maps and slices reach the validator as the JSON it expects.
func toValidatable(v any) any {
	b, err := json.Marshal(v)
	if err != nil {
		return v
	}
	out, err := jsonschema.UnmarshalJSON(bytes.NewReader(b))
	if err != nil {
		return v
	}
	return out
}

// jsonKind names the JSON type of a decoded value.
func jsonKind(v any) string {
	switch t := v.(type) {
	case nil:
		return "null"
	case bool:
		return "boolean"
	case string:
		return "string"
	case json.Number:
		if _, err := t.Int64(); err == nil {
			return "integer"
		}
		return "number"
	case float64, int, int64:
		return "number"
	case []any:
		return "array"
	case map[string]any:
		return "object"
	}
	return fmt.Sprintf("%T", v)
}

// clip shortens s to at most n runes, marking the cut with "…".
func clip(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[:n-1]) + "…"
}
