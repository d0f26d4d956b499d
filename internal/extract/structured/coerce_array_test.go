package structured

import (
	"encoding/json"
	"reflect"
	"testing"
)

// TestCoerceValueArrayWithoutItems: a property {"type": "array"} without
// "items" takes a list as given (nulls dropped), as Extract fills it from
// an x-selector; CoerceValue refused every list for it ("a string value
// where a array is asked": it tried the items as the array), so the model
// step could never fill it. Found by FuzzCompileSchema
// (testdata/fuzz/FuzzCompileSchema/079e13539773aba6).
func TestCoerceValueArrayWithoutItems(t *testing.T) {
	s, err := Compile(json.RawMessage(`{"type":"object","properties":{"tags":{"type":"array","x-selector":"li"},"n":{"type":"array","maxItems":2}}}`), "options.outputSchema")
	if err != nil {
		t.Fatal(err)
	}
	got, err := s.CoerceValue("tags", []any{"cookware", nil, 3.5, map[string]any{"k": "v"}})
	if want := []any{"cookware", 3.5, map[string]any{"k": "v"}}; err != nil || !reflect.DeepEqual(got, want) {
		t.Fatalf("CoerceValue(tags) = %#v, %v; want %#v", got, err, want)
	}
	// The property's own subschema still applies.
	if got, err := s.CoerceValue("n", []any{"a", "b", "c"}); err == nil {
		t.Fatalf("CoerceValue(n) of 3 items = %#v, want the maxItems refusal", got)
	}
	page, err := ParsePage(`<ul><li>a</li><li>b</li></ul>`, "https://shop.example/")
	if err != nil {
		t.Fatal(err)
	}
	r := s.Extract(page)
	v := r.Object["tags"]
	if again, err := s.CoerceValue("tags", v); err != nil || !reflect.DeepEqual(again, v) {
		t.Fatalf("the extracted %#v coerces to %#v, %v", v, again, err)
	}
}
