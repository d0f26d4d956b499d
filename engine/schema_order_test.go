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
	const want = "INVALID_PARAMETER: inputs: alpha, bravo, delta, echo, golf, kilo, mike, zulu: not inputs here; the inputs here are url"
	for range 20 {
		err := s.Validate(in, "inputs")
		if err == nil || err.Error() != want {
			t.Fatalf("Validate = %v\nwant %s", err, want)
		}
	}
}

// TestValidateNamesAnUnknownInputAndTheNearest: an input the schema does
// not have is named with its path, the nearest input when one is close,
// and the inputs there are; details.field is the unknown input itself.
// Under a composed schema (oneOf, if/then) the library's words stay.
func TestValidateNamesAnUnknownInputAndTheNearest(t *testing.T) {
	s, err := CompileSchema(json.RawMessage(`{"type":"object","additionalProperties":false,"properties":{
		"startUrl":{"type":"string"},"maxPages":{"type":"integer"},
		"fields":{"type":"object","additionalProperties":false,"properties":{"title":{"type":"string"}}},
		"steps":{"type":"array","items":{"type":"object","properties":{"action":{"type":"string"}},"additionalProperties":false,
			"oneOf":[{"properties":{"action":{"const":"a"}}},{"properties":{"action":{"const":"b"}}}]}}}}`))
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ in, msg, field string }{
		{`{"startUrl":"x","maxPage":3}`, "inputs.maxPage: not an input here (did you mean maxPages?); the inputs here are fields, maxPages, startUrl, steps", "inputs.maxPage"},
		{`{"startUrl":"x","colour":3}`, "inputs.colour: not an input here; the inputs here are fields, maxPages, startUrl, steps", "inputs.colour"},
		{`{"fields":{"title":"h1","titel":"h2"}}`, "inputs.fields.titel: not a property here (did you mean title?); the properties here are title", "inputs.fields.titel"},
		{`{"steps":[{"action":"a","selector":"#x"}]}`, "inputs.steps[0]: additional properties 'selector' not allowed", "inputs.steps[0].selector"},
	} {
		e := AsError(s.Validate(json.RawMessage(c.in), "inputs"))
		if e == nil || e.Code != InvalidParameter || e.Message != c.msg || e.Details["field"] != c.field {
			t.Errorf("Validate(%s) = %+v\nwant %q on %s", c.in, e, c.msg, c.field)
		}
	}
}
