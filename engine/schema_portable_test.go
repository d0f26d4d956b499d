package engine

import (
	"strings"
	"testing"
)

// Each rule of PortabilityFindings fires on the spelling it names, at the
// path of the offending subschema, and nowhere else.
func TestPortabilityFindingsRules(t *testing.T) {
	cases := []struct {
		name   string
		schema string
		want   string // findings joined by "; "
	}{
		{"portable", `{"type": "object", "additionalProperties": false, "required": ["a"], "properties": {
			"a": {"anyOf": [{"type": "integer"}, {"type": "null"}], "description": "x"},
			"b": {"type": "object", "additionalProperties": true},
			"c": {"enum": ["x", "y"]}, "d": {"const": 1}, "e": {"$ref": "#/$defs/e"},
			"f": {"if": {"required": ["g"]}, "then": {"required": ["h"]}},
			"n": {"not": {}}},
			"$defs": {"e": {"type": "string"}}}`, ""},
		{"type array in a property", `{"type": "object", "properties": {"at": {"type": ["integer", "null"]}}}`,
			"properties.at: type-union"},
		{"type array at the root", `{"type": ["object", "boolean"]}`, "(root): type-union"},
		{"description only", `{"type": "object", "properties": {"result": {"description": "anything"}}}`,
			"properties.result: untyped-schema"},
		{"empty schema in items", `{"type": "array", "items": {}}`, "items: untyped-schema"},
		{"if without then", `{"type": "object", "properties": {"x": {"if": {"const": 1}}}}`,
			"properties.x: untyped-schema"},
		{"bare true under properties", `{"type": "object", "properties": {"x": true}}`, "properties.x: boolean-schema"},
		{"bare false in anyOf", `{"anyOf": [false, {"type": "null"}]}`, "anyOf[0]: boolean-schema"},
		{"remote ref", `{"type": "object", "properties": {"x": {"$ref": "https://example.com/s.json"}}}`,
			"properties.x: remote-ref"},
		{"nested in anyOf and items", `{"type": "object", "anyOf": [{"type": "object", "properties": {"rows": {"type": "array",
			"items": {"type": "object", "properties": {"data": {"description": "d"}, "x-y": {"type": ["string", "null"]}}}}}}]}`,
			`anyOf[0].properties.rows.items.properties.data: untyped-schema; anyOf[0].properties.rows.items.properties["x-y"]: type-union`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			fs, err := PortabilityFindings([]byte(c.schema))
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, f := range fs {
				got = append(got, f.String())
			}
			if strings.Join(got, "; ") != c.want {
				t.Fatalf("findings = %q, want %q", strings.Join(got, "; "), c.want)
			}
		})
	}
	if _, err := PortabilityFindings([]byte(`{"type":`)); err == nil {
		t.Fatal("malformed JSON: no error")
	}
}
