package engine

import (
	"bytes"
	"encoding/json"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"github.com/santhosh-tekuri/jsonschema/v6/kind"
	"golang.org/x/text/language"
	"golang.org/x/text/message"
)

// Schema is a compiled JSON Schema that reports violations as
// INVALID_PARAMETER errors naming the offending field.
type Schema struct {
	s *jsonschema.Schema
}

// CompileSchema compiles a JSON Schema document (draft 2020-12 unless the
// document says otherwise).
func CompileSchema(raw json.RawMessage) (*Schema, error) {
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(raw))
	if err != nil {
		return nil, fmt.Errorf("parse schema: %w", err)
	}
	c := jsonschema.NewCompiler()
	c.DefaultDraft(jsonschema.Draft2020)
	if err := c.AddResource("mem://schema.json", doc); err != nil {
		return nil, err
	}
	s, err := c.Compile("mem://schema.json")
	if err != nil {
		return nil, err
	}
	return &Schema{s: s}, nil
}

// Validate checks doc against the schema. field is the name of the document
// in messages ("inputs", "arguments"); an empty field names paths bare. It
// returns nil or an INVALID_PARAMETER *Error whose message names every
// offending field, e.g. "inputs.urls[0]: length must be >= 1, but got 0".
func (s *Schema) Validate(doc json.RawMessage, field string) error {
	if len(bytes.TrimSpace(doc)) == 0 {
		doc = json.RawMessage("{}")
	}
	v, err := jsonschema.UnmarshalJSON(bytes.NewReader(doc))
	if err != nil {
		return Errorf(InvalidParameter, "%s is not valid JSON: %v", nonEmpty(field, "input"), err)
	}
	err = s.s.Validate(v)
	if err == nil {
		return nil
	}
	ve, ok := err.(*jsonschema.ValidationError)
	if !ok {
		return Errorf(InvalidParameter, "%s: %v", nonEmpty(field, "input"), err)
	}
	p := message.NewPrinter(language.English)
	var msgs []string
	seen := map[string]bool{}
	var walk func(e *jsonschema.ValidationError)
	walk = func(e *jsonschema.ValidationError) {
		if len(e.Causes) == 0 {
			if ap, ok := e.ErrorKind.(*kind.AdditionalProperties); ok {
				// The library lists them in map order: sorted, one
				// input gives one message.
				sort.Strings(ap.Properties)
			}
			// The library's messages may quote the offending value (a
			// pattern mismatch repeats the whole string): an error never
			// echoes more than maxProblemLen of the caller's input.
			m := FieldPath(field, e.InstanceLocation) + ": " + e.ErrorKind.LocalizedString(p)
			if ap, ok := e.ErrorKind.(*kind.AdditionalProperties); ok {
				m = s.unknownProperties(field, e.InstanceLocation, ap.Properties, m)
			}
			m = clipText(m, maxProblemLen)
			if !seen[m] {
				seen[m] = true
				msgs = append(msgs, m)
			}
			return
		}
		for _, c := range e.Causes {
			walk(c)
		}
	}
	walk(ve)
	sort.Strings(msgs)
	if len(msgs) > 5 {
		msgs = append(msgs[:5], fmt.Sprintf("and %d more", len(msgs)-5))
	}
	leaf := firstLeaf(ve)
	at := leaf.InstanceLocation
	if ap, ok := leaf.ErrorKind.(*kind.AdditionalProperties); ok && len(ap.Properties) > 0 {
		// The field to fix is the first unknown property, not its object.
		at = append(append([]string(nil), at...), ap.Properties[0])
	}
	return Errorf(InvalidParameter, "%s", strings.Join(msgs, "; ")).
		WithDetails(map[string]any{"field": FieldPath(field, at)})
}

// unknownProperties words an additionalProperties failure at location
// (instance tokens) the way a person fixes it: the names that are not
// properties there, the nearest property of each when one is close
// (Nearest), and the properties there are ("inputs.maxPage: not an input
// here (did you mean maxPages?); the inputs here are …"). Where the
// schema at location is composed (allOf, oneOf, if/then…), which
// properties a branch allows is not one list: the library's message
// stays.
func (s *Schema) unknownProperties(field string, location, names []string, libMsg string) string {
	allowed, ok := propertiesAt(s.s, location)
	if !ok {
		return libMsg
	}
	noun, nouns := "a property", "properties"
	if field == "inputs" && len(location) == 0 {
		noun, nouns = "an input", "inputs"
	}
	words := make([]string, len(names))
	for i, name := range names {
		words[i] = name
		if n := Nearest(name, allowed); n != "" {
			words[i] += " (did you mean " + n + "?)"
		}
	}
	var m string
	if len(names) == 1 {
		m = FieldPath(field, append(append([]string(nil), location...), names[0])) + ": not " + noun + " here" + strings.TrimPrefix(words[0], names[0])
	} else {
		m = FieldPath(field, location) + ": " + strings.Join(words, ", ") + ": not " + nouns + " here"
	}
	list := allowed
	if len(list) > 12 {
		list = append(append([]string(nil), list[:12]...), "…")
	}
	return m + "; the " + nouns + " here are " + strings.Join(list, ", ")
}

// propertiesAt returns the property names the schema declares for the
// object at location (instance tokens: names through properties,
// indexes through items), sorted; ok is false when the walk cannot follow
// the location, or the schema there declares no properties or is
// composed (its properties are not one list).
func propertiesAt(sch *jsonschema.Schema, location []string) ([]string, bool) {
	for _, tok := range location {
		if sch = followRef(sch); sch == nil {
			return nil, false
		}
		if _, err := strconv.Atoi(tok); err == nil && sch.Items2020 != nil {
			sch = sch.Items2020
			continue
		}
		sch = sch.Properties[tok]
	}
	sch = followRef(sch)
	if sch == nil || len(sch.Properties) == 0 || len(sch.AllOf)+len(sch.AnyOf)+len(sch.OneOf) > 0 ||
		sch.If != nil || len(sch.DependentSchemas) > 0 || len(sch.PatternProperties) > 0 {
		return nil, false
	}
	names := make([]string, 0, len(sch.Properties))
	for n := range sch.Properties {
		names = append(names, n)
	}
	sort.Strings(names)
	return names, true
}

// followRef is sch with its $ref followed (a schema whose only content is
// a reference), or sch itself.
func followRef(sch *jsonschema.Schema) *jsonschema.Schema {
	for i := 0; sch != nil && sch.Ref != nil && len(sch.Properties) == 0 && i < 16; i++ {
		sch = sch.Ref
	}
	return sch
}

func firstLeaf(e *jsonschema.ValidationError) *jsonschema.ValidationError {
	for len(e.Causes) > 0 {
		e = e.Causes[0]
	}
	return e
}

// FieldPath renders a JSON pointer's tokens as "inputs.urls[0].name".
func FieldPath(root string, tokens []string) string {
	var b strings.Builder
	b.WriteString(root)
	for _, t := range tokens {
		if _, err := strconv.Atoi(t); err == nil {
			b.WriteString("[" + t + "]")
			continue
		}
		if b.Len() > 0 {
			b.WriteByte('.')
		}
		b.WriteString(t)
	}
	if b.Len() == 0 {
		return nonEmpty(root, "input")
	}
	return b.String()
}

func nonEmpty(s, def string) string {
	if s == "" {
		return def
	}
	return s
}

// maxProblemLen bounds one validation problem in an error message.
const maxProblemLen = 300

// clipText shortens s to at most n runes, marking the cut with "…".
func clipText(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	r := []rune(s)
	return string(r[:n-1]) + "…"
}

// SchemaFinding is one portability problem of a JSON Schema: a spelling
// that is legal but that some MCP clients reject or silently weaken.
type SchemaFinding struct {
	// Rule names the problem: "type-union" (type is an array),
	// "untyped-schema" (a subschema with no validation keyword, so it
	// accepts anything), "boolean-schema" (a bare true or false where a
	// schema object belongs) or "remote-ref" (a $ref outside the document).
	Rule string
	// Path locates the subschema, e.g. "anyOf[0].properties.startedAt"
	// ("" is the root).
	Path string
}

// String renders the finding as "path: rule".
func (f SchemaFinding) String() string {
	return nonEmpty(f.Path, "(root)") + ": " + f.Rule
}

// Keywords of a schema whose values are subschemas, by shape. They mirror
// what tool-schema linters (the MCP Inspector's portability check) walk.
var (
	// schemaMapKeywords hold an object of subschemas by name.
	schemaMapKeywords = []string{"properties", "patternProperties", "dependentSchemas", "dependencies", "$defs", "definitions"}
	// schemaListKeywords hold an array of subschemas.
	schemaListKeywords = []string{"allOf", "anyOf", "oneOf", "prefixItems"}
	// schemaOneKeywords hold one subschema (items may also be an array).
	schemaOneKeywords = []string{"items", "contains", "not", "propertyNames", "if", "then", "else",
		"additionalProperties", "unevaluatedProperties", "additionalItems", "unevaluatedItems", "contentSchema"}
)

// constrainingKeywords are the keywords that restrict what a schema
// accepts. A subschema with none of them (and no if with then or else)
// accepts every value.
var constrainingKeywords = map[string]bool{
	"type": true, "enum": true, "const": true, "multipleOf": true, "maximum": true, "exclusiveMaximum": true,
	"minimum": true, "exclusiveMinimum": true, "maxLength": true, "minLength": true, "pattern": true, "format": true,
	"contentMediaType": true, "contentEncoding": true, "contentSchema": true, "maxItems": true, "minItems": true,
	"uniqueItems": true, "maxContains": true, "minContains": true, "maxProperties": true, "minProperties": true,
	"required": true, "dependentRequired": true, "allOf": true, "anyOf": true, "oneOf": true, "not": true,
	"items": true, "prefixItems": true, "contains": true, "additionalItems": true, "unevaluatedItems": true,
	"properties": true, "patternProperties": true, "additionalProperties": true, "unevaluatedProperties": true,
	"propertyNames": true, "dependentSchemas": true, "dependencies": true, "$ref": true, "$dynamicRef": true,
	"$recursiveRef": true,
}

// booleanAllowed are the keywords where a bare true or false is the usual
// spelling (additionalProperties: false) rather than a portability problem.
var booleanAllowed = map[string]bool{
	"additionalProperties": true, "unevaluatedProperties": true, "additionalItems": true, "unevaluatedItems": true,
}

// PortabilityFindings lints a JSON Schema document for spellings that MCP
// clients handle poorly, with the rules of the MCP Inspector's schema
// check (2.12): a type array (write anyOf of single-type branches
// instead; any array is flagged, where the Inspector skips malformed
// ones), a subschema that constrains nothing (declare what the value is),
// a bare boolean schema outside additionalProperties and its kin, and a
// $ref that leaves the document. It walks the same subschema keywords as
// the Inspector and returns the findings with properties in name order
// (nil when the schema is portable), or an error when doc is not JSON.
func PortabilityFindings(doc json.RawMessage) ([]SchemaFinding, error) {
	var root any
	if err := json.Unmarshal(doc, &root); err != nil {
		return nil, fmt.Errorf("parse schema: %w", err)
	}
	var out []SchemaFinding
	lintSubschema(root, "", "", 0, &out)
	return out, nil
}

// maxLintDepth stops the walk of pathologically deep documents.
const maxLintDepth = 64

// lintSubschema checks node, reached through keyword ("" at the root), and
// then every subschema below it.
func lintSubschema(node any, path, keyword string, depth int, out *[]SchemaFinding) {
	if depth > maxLintDepth {
		return
	}
	if _, ok := node.(bool); ok {
		if keyword == "" || !booleanAllowed[keyword] {
			*out = append(*out, SchemaFinding{Rule: "boolean-schema", Path: path})
		}
		return
	}
	m, ok := node.(map[string]any)
	if !ok {
		return
	}
	if _, isList := m["type"].([]any); isList {
		*out = append(*out, SchemaFinding{Rule: "type-union", Path: path})
	}
	if ref, ok := m["$ref"].(string); ok && ref != "" && !strings.HasPrefix(ref, "#") {
		*out = append(*out, SchemaFinding{Rule: "remote-ref", Path: path})
	}
	if keyword != "not" && !constrains(m) {
		*out = append(*out, SchemaFinding{Rule: "untyped-schema", Path: path})
	}
	for _, k := range schemaMapKeywords {
		sub, _ := m[k].(map[string]any)
		for _, name := range sortedKeys(sub) {
			lintSubschema(sub[name], lintPath(lintPath(path, k), name), k, depth+1, out)
		}
	}
	for _, k := range schemaListKeywords {
		list, _ := m[k].([]any)
		for i, sub := range list {
			lintSubschema(sub, fmt.Sprintf("%s[%d]", lintPath(path, k), i), k, depth+1, out)
		}
	}
	for _, k := range schemaOneKeywords {
		sub, present := m[k]
		if !present {
			continue
		}
		if list, ok := sub.([]any); ok && k == "items" {
			for i, s := range list {
				lintSubschema(s, fmt.Sprintf("%s[%d]", lintPath(path, k), i), k, depth+1, out)
			}
			continue
		}
		lintSubschema(sub, lintPath(path, k), k, depth+1, out)
	}
}

// constrains reports whether a schema object restricts what it accepts.
func constrains(m map[string]any) bool {
	for k := range m {
		if constrainingKeywords[k] {
			return true
		}
	}
	_, hasIf := m["if"]
	_, hasThen := m["then"]
	_, hasElse := m["else"]
	return hasIf && (hasThen || hasElse)
}

// lintPath appends key to a finding's path: "a.b" for plain names,
// `a["x-y"]` for the others.
func lintPath(parent, key string) string {
	plain := key != ""
	for i, r := range key {
		if !(r == '_' || r == '$' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || i > 0 && r >= '0' && r <= '9') {
			plain = false
			break
		}
	}
	if !plain {
		q, _ := json.Marshal(key)
		return parent + "[" + string(q) + "]"
	}
	if parent == "" {
		return key
	}
	return parent + "." + key
}

// sortedKeys returns m's keys in order, so findings come out stable.
func sortedKeys(m map[string]any) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
