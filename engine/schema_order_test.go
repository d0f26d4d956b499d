package engine

import (
	"encoding/json"
	"testing"
)

// TestValidateMessageIsTheSameForTheSameInput: extra properties refused by
// additionalProperties: false are named in sorted order, so one input
// always gets one message (the library lists them in map order; found by
// templates' FuzzTemplateInputs: two validations of one login input gave
// "'render', 'startUrl', …" then "'startUrl', …, 'render'").
func TestValidateMessageIsTheSameForTheSameInput(t *testing.T) {
	s, err := CompileSchema(json.RawMessage(`{"type":"object","properties":{"url":{"type":"string"}},"additionalProperties":false}`))
	if err != nil {
		t.Fatal(err)
	}
	in := json.RawMessage(`{"url":"x","kilo":1,"alpha":2,"mike":3,"echo":4,"bravo":5,"zulu":6,"delta":7,"golf":8}`)
	const want = "INVALID_PARAMETER: inputs: additional properties 'alpha', 'bravo', 'delta', 'echo', 'golf', 'kilo', 'mike', 'zulu' not allowed"
	for range 20 {
		err := s.Validate(in, "inputs")
		if err == nil || err.Error() != want {
			t.Fatalf("Validate = %v\nwant %s", err, want)
		}
	}
}
