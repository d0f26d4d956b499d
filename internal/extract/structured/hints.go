package structured

import (
	"errors"
	"fmt"
	"regexp"
	"strings"

	"golang.org/x/net/html"
)

// maxPatternLen bounds an x-pattern's length: a pattern is a short
// expression around one value, and RE2 compiles it once per schema.
const maxPatternLen = 1000

// The text hints beside an x-selector, checked when the schema is
// compiled (at submit and at run):
//
//   - "x-pattern": a regular expression (Go RE2 syntax) with exactly one
//     capture group, for a property read as text (a string, number,
//     integer or boolean, or an array of them, one value per element).
//     The first match in the element's text (or x-attr's value) is taken
//     and its group is the value, coerced by the usual rules; an element
//     whose text the pattern does not match gives no value. It is how a
//     text holding several numbers ("9. Classes … RFC 7159") gives the one
//     meant: "x-pattern": "RFC (\\d+)", or "^(\\d+)" for the first.
//   - "x-count": true: the property (type integer or number) is the count
//     of elements x-selector matches, 0 when none, whatever their text.
//
// Each refusal names the keyword's path in the schema
// ("options.outputSchema.properties.year.x-pattern") and the fix.
func (w walker) textHints(p *prop, m map[string]any, ptr string) error {
	at := pointerPath(w.s.field, ptr)
	_, hasAttr := m["x-attr"]
	pat, hasPattern := m["x-pattern"]
	if v, ok := m["x-count"]; ok {
		on, isBool := v.(bool)
		switch {
		case !isBool:
			return fmt.Errorf("%s.x-count must be true (the property is the number of elements x-selector matches) or false", at)
		case !on:
		case p.selector == nil:
			return fmt.Errorf("%s.x-count needs an x-selector beside it naming the elements to count", at)
		case p.typ != "integer" && p.typ != "number":
			return fmt.Errorf("%s.x-count gives a number: set \"type\": \"integer\" on this property (it is %s)", at, typeName(p.typ))
		case hasAttr || hasPattern:
			return fmt.Errorf("%s.x-count counts elements and reads no text: leave out x-attr and x-pattern beside it", at)
		default:
			p.count = true
		}
	}
	if !hasPattern {
		return nil
	}
	text, isStr := pat.(string)
	switch {
	case !isStr || text == "":
		return fmt.Errorf("%s.x-pattern must be a regular expression with one capture group around the value, such as \"RFC (\\\\d+)\"", at)
	case len(text) > maxPatternLen:
		return fmt.Errorf("%s.x-pattern is %d bytes long; keep it under %d bytes", at, len(text), maxPatternLen)
	case p.selector == nil:
		return fmt.Errorf("%s.x-pattern needs an x-selector beside it naming the element whose text it reads", at)
	case p.typ == "object" || (p.typ == "array" && p.items != nil && (p.items.typ == "object" || p.items.typ == "array")):
		return fmt.Errorf("%s.x-pattern reads a value out of a text: put it on a string, number, integer or boolean property (or an array of them), not on this %s", at, typeName(p.typ))
	}
	re, err := regexp.Compile(text)
	if err != nil {
		return fmt.Errorf("%s.x-pattern %q is not a valid regular expression (Go RE2 syntax): %v", at, clip(text, 60), err)
	}
	if n := re.NumSubexp(); n != 1 {
		return fmt.Errorf("%s.x-pattern %q has %d capture groups; it needs exactly one, around the value (make other groups non-capturing: (?:…))", at, clip(text, 60), n)
	}
	p.pattern = re
	return nil
}

// typeName names a property's type in messages.
func typeName(t string) string {
	if t == "" {
		return "property without a type"
	}
	return t + " property"
}

// patternValue applies c's x-pattern to a value read from an element: the
// capture group of the first match, or an error naming the pattern and the
// text when it does not match. Without x-pattern the value is kept.
func patternValue(c *prop, v string) (string, error) {
	if c.pattern == nil {
		return v, nil
	}
	m := c.pattern.FindStringSubmatchIndex(v)
	if m == nil || m[2] < 0 || m[2] == m[3] {
		return "", fmt.Errorf("x-pattern %q finds no value in the text %q", clip(c.pattern.String(), 40), clip(v, 80))
	}
	return v[m[2]:m[3]], nil
}

// ambiguityMessage is the property error for an x-selector text that holds
// several values: what was read, where, and the two ways out.
func ambiguityMessage(path, label string, c *prop, err error) (string, bool) {
	var amb *ambiguousError
	if !errors.As(err, &amb) {
		return "", false
	}
	fix := "point x-selector at an element that holds one, or add \"x-pattern\" with one capture group around the value you want (\"^(\\\\d+)\" takes the first number, \"RFC (\\\\d+)\" the one after \"RFC\")"
	if c.pattern != nil {
		fix = "make x-pattern's capture group hold one value"
	}
	return fmt.Sprintf("%s: %s: %v; %s", path, label, amb, fix), true
}

// countLabel is the source of a value x-count gave.
func countLabel(selectorText string) string {
	return "count:selector:" + strings.TrimSpace(selectorText)
}

// hintValue reads element n for property c (nodeValue), through c's
// x-pattern when it has one; "" when there is nothing (a pattern that
// finds nothing is noted).
func (x extractor) hintValue(c *prop, n *html.Node, path, label string, f *fill) string {
	v := x.nodeValue(n, c.attr)
	if v == "" {
		return ""
	}
	out, err := patternValue(c, v)
	if err != nil {
		f.note(path, fmt.Sprintf("%s: %s: %v", path, label, err))
		return ""
	}
	return out
}

// ambiguousItem reports the property error of an array of scalars read
// by x-selector when one element's text holds several values: dropping
// that element (as one that holds none is) would hide it.
func (x extractor) ambiguousItem(c *prop, path, label string, vals []any) (string, bool) {
	if c.items == nil || c.items.typ == "object" || c.items.typ == "array" {
		return "", false
	}
	for _, v := range vals {
		if _, err := coerce(c.items, v, x.page); err != nil {
			if msg, bad := ambiguityMessage(path, label, c, err); bad {
				return msg, true
			}
		}
	}
	return "", false
}

// emptyList fills an array property whose x-selector matches nothing
// with [] (nothing matched is an answer: zero items), unless its
// subschema refuses an empty list (minItems, contains): then it stays
// missing, with a note naming the rule.
func (x extractor) emptyList(c *prop, path, label string, f *fill) {
	empty := []any{}
	if msgs := validationMessages(c.check, toValidatable(empty), path); len(msgs) > 0 {
		f.note(path, fmt.Sprintf("%s: %s matches no element, and the schema refuses an empty list (%s)", path, label, strings.Join(msgs, "; ")))
		return
	}
	f.obj[c.name] = empty
	f.src[path] = label
}

// Problems returns why obj is not a page's answer, sorted: each property
// error (errs, Result.Errors) and Validate's messages, without the
// "required property is missing" of a property that has an error (the
// error says why it is absent). Run calls it again once a model filled
// what was missing. Nil when obj is valid and errs is empty.
func (s *Schema) Problems(obj map[string]any, errs map[string]string) []string {
	var out []string
	for _, path := range sortedKeys(errs) {
		out = append(out, errs[path])
	}
	for _, m := range s.Validate(obj) {
		if path, ok := strings.CutSuffix(m, ": required property is missing"); ok {
			if _, bad := errs[path]; bad {
				continue
			}
		}
		out = append(out, m)
	}
	return out
}

// dropPath removes the value at a dot path from obj (and its sources), so
// a property with an error is not filled from another source.
func dropPath(obj map[string]any, src map[string]string, path string) {
	parts := strings.Split(path, ".")
	cur := obj
	for _, name := range parts[:len(parts)-1] {
		next, ok := cur[name].(map[string]any)
		if !ok {
			return
		}
		cur = next
	}
	delete(cur, parts[len(parts)-1])
	for sp := range src {
		if sp == path || strings.HasPrefix(sp, path+".") || strings.HasPrefix(sp, path+"[") {
			delete(src, sp)
		}
	}
}
