package engine

import (
	"strings"
	"testing"
)

func TestSchemaValidateNamesField(t *testing.T) {
	s, err := CompileSchema([]byte(`{"type":"object","additionalProperties":false,"required":["urls"],
	  "properties":{"urls":{"type":"array","minItems":1,"items":{"type":"string","minLength":1}},"n":{"type":"integer","minimum":1}}}`))
	if err != nil {
		t.Fatal(err)
	}
	cases := map[string]string{
		`{"urls":[""]}`:           "inputs.urls[0]",
		`{"urls":["a"],"n":0}`:    "inputs.n",
		`{"urls":["a"],"typo":1}`: "typo",
		`{}`:                      "urls",
		`{"urls":"x"}`:            "inputs.urls",
	}
	for doc, want := range cases {
		e := AsError(s.Validate([]byte(doc), "inputs"))
		if e == nil {
			t.Fatalf("%s: no error", doc)
		}
		if e.Code != InvalidParameter || !strings.Contains(e.Message, want) {
			t.Errorf("%s: got %s %q, want mention of %q", doc, e.Code, e.Message, want)
		}
	}
	if e := AsError(s.Validate([]byte(`{"urls":["a"],"n":3}`), "inputs")); e != nil {
		t.Fatalf("valid doc rejected: %v", e)
	}
}

func TestTextChunkBoundaries(t *testing.T) {
	s := []byte("aé€😀")
	// "a"=1, "é"=2, "€"=3, "😀"=4 bytes
	if got := string(textChunk(s, 2)); got != "a" {
		t.Errorf("want a, got %q", got)
	}
	if got := string(textChunk(s[1:], 1)); got != "é" {
		t.Errorf("at least one char: got %q", got)
	}
	if got := string(textChunk(s[6:], 2)); got != "😀" {
		t.Errorf("4-byte char kept whole: got %q", got)
	}
}
