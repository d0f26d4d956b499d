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
			// The library's messages may quote the offending value (a
			// pattern mismatch repeats the whole string): an error never
			// echoes more than maxProblemLen of the caller's input.
			m := clipText(FieldPath(field, e.InstanceLocation)+": "+e.ErrorKind.LocalizedString(p), maxProblemLen)
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
	return Errorf(InvalidParameter, "%s", strings.Join(msgs, "; ")).
		WithDetails(map[string]any{"field": FieldPath(field, firstLeaf(ve).InstanceLocation)})
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
