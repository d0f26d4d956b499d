package structured

import (
	"encoding/json"
	"strings"
	"testing"
)

// TestCompileRefusesDottedPropertyNames: a property name with "." is
// refused with a message naming it and a replacement. It compiled, then
// read as two names in every dot path: Restrict built an empty schema for
// the model step ("do not form a schema") and CoerceValue found no such
// property. Found by FuzzCompileSchema
// (testdata/fuzz/FuzzCompileSchema/b23854f830f529de).
func TestCompileRefusesDottedPropertyNames(t *testing.T) {
	for _, doc := range []string{
		`{"type":"object","properties":{"price.amount":{"type":"number"}}}`,
		`{"type":"object","properties":{"offers":{"type":"object","properties":{"price.amount":{"type":"number"}}}}}`,
	} {
		s, err := Compile(json.RawMessage(doc), "options.outputSchema")
		if err == nil {
			t.Fatalf("%s compiled (properties %v)", doc, s.Properties())
		}
		for _, want := range []string{"options.outputSchema.", `"price.amount"`, `"price_amount"`} {
			if !strings.Contains(err.Error(), want) {
				t.Fatalf("error %q does not say %s", err, want)
			}
		}
	}
	if _, err := Compile(json.RawMessage(`{"type":"object","properties":{"price_amount":{"type":"number"},"og:title":{"type":"string"}}}`), "s"); err != nil {
		t.Fatalf("names without a dot: %v", err)
	}
}
