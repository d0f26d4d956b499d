package structured

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"
)

// TestCompileErrors: a bad schema is refused with a message naming the
// offending path and the fix.
func TestCompileErrors(t *testing.T) {
	cases := []struct {
		name, doc, want string
	}{
		{"empty", ``, "options.outputSchema is required"},
		{"not json", `{"type":`, "options.outputSchema is not valid JSON"},
		{"not an object", `[1]`, "must be a JSON Schema object describing the output object, not array"},
		{"bad type", `{"type":"object","properties":{"price":{"type":"money"}}}`,
			"options.outputSchema is not a valid JSON Schema 2020-12: options.outputSchema.properties.price.type:"},
		{"bad required", `{"type":"object","required":"name","properties":{"name":{"type":"string"}}}`,
			"options.outputSchema.required:"},
		{"no properties", `{"type":"object"}`, "must describe an object with properties to fill"},
		{"scalar root", `{"type":"string"}`, "must describe an object with properties to fill"},
		{"remote ref", `{"type":"object","properties":{"a":{"$ref":"https://evil.example/s.json"}}}`,
			"$ref to https://evil.example/s.json is not allowed"},
		{"file ref", `{"type":"object","properties":{"a":{"$ref":"file:///etc/passwd"}}}`,
			"$ref to file:///etc/passwd is not allowed"},
		{"bad selector", `{"type":"object","properties":{"a":{"type":"string","x-selector":"div[["}}}`,
			`options.outputSchema.properties.a.x-selector "div[[" is not a valid CSS selector`},
		{"attr without selector", `{"type":"object","properties":{"a":{"type":"string","x-attr":"href"}}}`,
			"options.outputSchema.properties.a.x-attr needs an x-selector"},
		{"bad x-type", `{"type":"object","x-type":3,"properties":{"a":{"type":"string"}}}`,
			"options.outputSchema.x-type must be a type name"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := Compile(json.RawMessage(c.doc), "options.outputSchema")
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Errorf("err = %v, want it to contain %q", err, c.want)
			}
		})
	}
}

// TestRefsAndNullable: local $refs resolve, a nullable type fills as its
// non-null type.
func TestRefsAndNullable(t *testing.T) {
	s := mustCompile(t, `{"type":"object","$defs":{"money":{"type":"number"}},"properties":{
	  "price":{"$ref":"#/$defs/money"},
	  "rating":{"type":["number","null"]},
	  "currency":{"anyOf":[{"type":"null"},{"type":"string"}]}}}`)
	res := s.Extract(parsedPage(t, fixture(t, "product_jsonld.html"), "https://shop.example.com/"))
	want := map[string]any{"price": 1299.0, "rating": 4.6, "currency": "USD"}
	if !reflect.DeepEqual(res.Object, want) {
		t.Errorf("object = %#v, want %#v", res.Object, want)
	}
}

// TestRestrict: the schema restricted to missing paths keeps those
// subschemas, the required ones among them, the objects on the way and
// the $defs, and drops the x- hints.
func TestRestrict(t *testing.T) {
	s := mustCompile(t, `{"type":"object","required":["name","price","offer"],"$defs":{"n":{"type":"number"}},"properties":{
	  "name":{"type":"string","x-selector":"h1"},
	  "price":{"$ref":"#/$defs/n"},
	  "offer":{"type":"object","required":["currency"],"properties":{
	    "currency":{"type":"string","x-selector":".cur"},"seller":{"type":"string"}}}}}`)
	got := s.Restrict([]string{"price", "offer.currency"})
	want := map[string]any{
		"type":     "object",
		"$defs":    map[string]any{"n": map[string]any{"type": "number"}},
		"required": []any{"price", "offer"},
		"properties": map[string]any{
			"price": map[string]any{"type": "number"},
			"offer": map[string]any{"type": "object", "required": []any{"currency"},
				"properties": map[string]any{"currency": map[string]any{"type": "string"}}},
		},
	}
	gj, _ := json.Marshal(got)
	wj, _ := json.Marshal(want)
	if string(gj) != string(wj) {
		t.Errorf("Restrict:\n got %s\nwant %s", gj, wj)
	}
	if props := s.Properties(); !reflect.DeepEqual(props, []string{"name", "offer.currency", "offer.seller", "price"}) {
		t.Errorf("Properties() = %q", props)
	}
}

// TestCoerceValueAndValidate: a caller's value is brought into shape or
// refused with the subschema's message.
func TestCoerceValueAndValidate(t *testing.T) {
	s := mustCompile(t, productSchema)
	if v, err := s.CoerceValue("price", "$1,299.00"); err != nil || v != 1299.0 {
		t.Errorf("CoerceValue(price) = %v, %v", v, err)
	}
	if _, err := s.CoerceValue("rating", "7"); err == nil || err.Error() != "rating: maximum: got 7, want 5" {
		t.Errorf("CoerceValue(rating 7) err = %v, want the property and its maximum named", err)
	}
	if _, err := s.CoerceValue("price", "call us"); err == nil || err.Error() != `price: no number in "call us"` {
		t.Errorf("CoerceValue(price call us) err = %v", err)
	}
	if _, err := s.CoerceValue("colour", "red"); err == nil || !strings.Contains(err.Error(), `no property "colour"`) {
		t.Errorf("CoerceValue(colour) err = %v", err)
	}
	msgs := s.Validate(map[string]any{"name": "x", "price": -1.0, "currency": "usd"})
	want := []string{"currency: 'usd' does not match pattern '^[A-Z]{3}$'", "price: minimum: got -1, want 0"}
	if !reflect.DeepEqual(msgs, want) {
		t.Errorf("Validate = %q, want %q", msgs, want)
	}
}
