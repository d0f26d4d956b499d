package templates

import (
	"encoding/json"
	"errors"
	"reflect"
	"strings"
	"testing"

	"github.com/browsertask/browsertask/engine"
)

// secretTemplate is a template that names secrets in its inputs.
type secretTemplate interface {
	SecretValues(json.RawMessage) []string
}

// fuzzInputSeeds are inputs beside each template's own examples: field and
// selector specs in both forms, render modes, steps with selectors.
var fuzzInputSeeds = []string{
	`{"urls":["http://127.0.0.1:1/"],"fields":{"t":"h1","l":{"selector":"a","attr":"href","all":true}},"render":"http"}`,
	`{"urls":["http://127.0.0.1:1/"],"fields":{"":"h1"}}`,
	`{"urls":["http://127.0.0.1:1/"],"fields":{"x":{"selector":"a:contains(b)"}},"render":"http"}`,
	`{"urls":["http://127.0.0.1:1/"],"fields":{"x":{"selector":"  "}},"render":"auto"}`,
	`{"startUrl":"http://127.0.0.1:1/","maxPages":5,"include":["*/a/*"],"fields":{"h":"h1"},"render":"http"}`,
	`{"startUrl":"http://127.0.0.1:1/","steps":[{"action":"type","selector":"#pin","text":"1234","secret":true},{"action":"evaluate","script":"1"}]}`,
	`{"url":"http://127.0.0.1:1/login","username":"u","password":"p","otp":{"secret":"x"}}`,
	`{"urls":["http://127.0.0.1:1/"],"formats":["markdown","html","metadata"],"maxChars":100,"render":"auto"}`,
	`{"startUrl":"http://127.0.0.1:1/","formats":["screenshot","text","pdf"],"render":"http"}`,
	`{"urls":["file:///etc/passwd"]}`, `{"urls":["javascript:alert(1)"]}`, `null`, `[]`, `{"fields":{"a":7}}`,
}

// FuzzTemplateInputs runs any inputs through what a submission does before
// a run exists — the template's input schema, then its Check, and its
// SecretValues — for every template (field specs, selector specs, steps,
// URLs, render modes). Invariants: nothing panics; a refusal is an
// INVALID_PARAMETER or TRUST_LEVEL_NOT_ALLOWED *engine.Error whose message
// names an inputs field; validation and Check are deterministic (one
// input, one message). Trust level local only:
// restricted would resolve host names, and fuzz inputs must not reach a
// network.
func FuzzTemplateInputs(f *testing.F) {
	tpls := All(nil, nil)
	schemas := make([]*engine.Schema, len(tpls))
	for i, tpl := range tpls {
		s, err := engine.CompileSchema(tpl.Info().InputSchema)
		if err != nil {
			f.Fatalf("%s: input schema: %v", tpl.Info().TemplateID, err)
		}
		schemas[i] = s
		for _, ex := range tpl.Info().Examples {
			f.Add(uint8(i), []byte(ex), false)
		}
	}
	for i, s := range fuzzInputSeeds {
		f.Add(uint8(i), []byte(s), i%2 == 0)
	}
	profile := engine.Profile{TrustLevel: "local", MaxURLs: 1000, MaxTabsPerSession: 20}
	f.Fuzz(func(t *testing.T, which uint8, inputs []byte, allowFiles bool) {
		i := int(which) % len(tpls)
		tpl, p := tpls[i], profile
		p.AllowFileURLs = allowFiles
		id := tpl.Info().TemplateID
		if err := schemas[i].Validate(inputs, "inputs"); err != nil {
			checkInputError(t, id, "schema", err)
			if again := schemas[i].Validate(inputs, "inputs"); again == nil || again.Error() != err.Error() {
				t.Fatalf("%s: schema validation not deterministic: %v then %v", id, err, again)
			}
		}
		err := tpl.Check(inputs, p)
		if err != nil {
			checkInputError(t, id, "Check", err)
		}
		if again := tpl.Check(inputs, p); !reflect.DeepEqual(engine.AsError(again), engine.AsError(err)) {
			t.Fatalf("%s: Check not deterministic: %v then %v", id, err, again)
		}
		if st, ok := tpl.(secretTemplate); ok {
			for _, s := range st.SecretValues(inputs) {
				if s == "" {
					t.Fatalf("%s: an empty secret value would mask nothing", id)
				}
			}
		}
	})
}

// checkInputError asserts err is a domain refusal of the inputs that names
// a field.
func checkInputError(t *testing.T, id, stage string, err error) {
	t.Helper()
	var e *engine.Error
	if !errors.As(err, &e) {
		t.Fatalf("%s %s: %T %v is not an *engine.Error", id, stage, err, err)
	}
	if e.Code != engine.InvalidParameter && e.Code != engine.TrustLevelNotAllowed {
		t.Fatalf("%s %s: code %s (%v), want INVALID_PARAMETER or TRUST_LEVEL_NOT_ALLOWED", id, stage, e.Code, err)
	}
	if !strings.Contains(e.Message, "inputs") {
		t.Fatalf("%s %s: message %q names no inputs field", id, stage, e.Message)
	}
}

// FuzzFieldSpec decodes any JSON as one entry of inputs.fields (the short
// string form or {selector, attr, all}) and checks the round trip: a spec
// that decodes encodes to the long form, which decodes to the same spec;
// and checkFields / checkHTTPFields refuse it with INVALID_PARAMETER
// naming inputs.fields.<name> or accept it with a non-blank selector.
func FuzzFieldSpec(f *testing.F) {
	for _, s := range []string{`"h1"`, `  "a[href]"`, `{"selector":"a","attr":"href","all":true}`, `{"selector":""}`,
		`{"selector":"x","all":"yes"}`, `"a:contains(x)"`, `{"SELECTOR":"b"}`, `null`, `7`, `"\u0000"`} {
		f.Add("name", []byte(s))
	}
	f.Fuzz(func(t *testing.T, name string, raw []byte) {
		var spec fieldSpec
		if err := json.Unmarshal(raw, &spec); err != nil {
			return
		}
		long, err := json.Marshal(spec)
		if err != nil {
			t.Fatalf("spec %+v does not encode: %v", spec, err)
		}
		var back fieldSpec
		if err := json.Unmarshal(long, &back); err != nil || back != spec {
			t.Fatalf("round trip of %s: %+v, %v; want %+v", long, back, err, spec)
		}
		fields := map[string]fieldSpec{name: spec}
		for _, check := range []func(map[string]fieldSpec) error{checkFields, checkHTTPFields} {
			err := check(fields)
			if err == nil {
				continue
			}
			e := engine.AsError(err)
			if e.Code != engine.InvalidParameter || !strings.HasPrefix(e.Message, "inputs.fields") {
				t.Fatalf("refusal of %q: %s %q, want INVALID_PARAMETER naming inputs.fields", name, e.Code, e.Message)
			}
		}
		if checkFields(fields) == nil && (strings.TrimSpace(name) == "" || strings.TrimSpace(spec.Selector) == "") {
			t.Fatalf("checkFields accepted the name %q with the selector %q", name, spec.Selector)
		}
	})
}

// FuzzMergeExtracted merges any value as the browser extraction script's
// answer (the page controls much of it: a page can redefine what the
// script reads). It never panics; it succeeds with non-nil fields or
// fails with EXECUTION_ERROR (not the script's shape) or
// INVALID_PARAMETER naming inputs.fields.
func FuzzMergeExtracted(f *testing.F) {
	for _, s := range []string{
		`{"url":"http://a/","title":"T","fields":{"x":"1","y":null,"z":["a",null]},"fieldErrors":{},"text":"t","links":[{"href":"http://a/b","text":"b"}],"meta":{"k":"v"}}`,
		`{"fieldErrors":{"b":"bad","a":"worse"}}`, `{"fields":null}`, `{"links":[null,{"href":7}]}`, `null`, `"x"`, `{`,
	} {
		f.Add([]byte(s), "")
	}
	f.Fuzz(func(t *testing.T, raw []byte, finalURL string) {
		out := &pageOut{FinalURL: finalURL}
		err := mergeExtracted(json.RawMessage(raw), out)
		if err == nil {
			if out.Fields == nil {
				t.Fatal("merged without error but Fields is nil")
			}
			return
		}
		switch e := engine.AsError(err); e.Code {
		case engine.ExecutionError:
		case engine.InvalidParameter:
			if !strings.HasPrefix(e.Message, "inputs.fields.") {
				t.Fatalf("INVALID_PARAMETER %q names no field", e.Message)
			}
		default:
			t.Fatalf("code %s: %v", e.Code, err)
		}
	})
}
