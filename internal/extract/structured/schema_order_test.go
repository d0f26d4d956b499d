package structured

import (
	"encoding/json"
	"testing"
)

// TestValidateNamesExtraPropertiesSorted: an object with properties the
// schema forbids gets one message whatever the map order (the JSON Schema
// library lists them in map order), so Problems and a later Validate of
// the same object agree.
func TestValidateNamesExtraPropertiesSorted(t *testing.T) {
	s, err := Compile(json.RawMessage(`{"type":"object","properties":{"name":{"type":"string"}},"additionalProperties":false}`), "options.outputSchema")
	if err != nil {
		t.Fatal(err)
	}
	obj := map[string]any{"name": "n", "kilo": 1, "alpha": 2, "mike": 3, "echo": 4, "bravo": 5, "zulu": 6, "delta": 7, "golf": 8}
	const want = "(root): additional properties 'alpha', 'bravo', 'delta', 'echo', 'golf', 'kilo', 'mike', 'zulu' not allowed"
	for range 20 {
		got := s.Validate(obj)
		if len(got) != 1 || got[0] != want {
			t.Fatalf("Validate = %q\nwant [%q]", got, want)
		}
	}
}
