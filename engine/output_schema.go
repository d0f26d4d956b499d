package engine

import (
	"bytes"
	"encoding/json"
	"errors"
)

// OutputSchemaChecker is implemented by a template that uses
// options.outputSchema (TemplateInfo.UsesOutputSchema) and holds it to
// rules of its own, stricter than a valid JSON Schema (extract_structured:
// an object with properties, no remote $ref, no '.' in property names…).
// Submit calls it with the same rules the template's Run compiles the
// schema by, so a schema the run would refuse is refused before any run
// exists instead of being queued to fail.
type OutputSchemaChecker interface {
	// CheckOutputSchema returns nil for a schema the template's Run
	// accepts, or an error saying what is wrong and how to fix it. Submit
	// answers it as INVALID_PARAMETER naming options.outputSchema.
	CheckOutputSchema(schema json.RawMessage) error
}

// checkOutputSchema returns options.outputSchema as a run of tpl keeps it:
// compacted for a template that uses it, nil for the others, which ignore
// it (the v1 contract). A template that uses it requires it; its own
// OutputSchemaChecker decides what it accepts, and a template without one
// accepts any valid JSON Schema (2020-12). Errors: INVALID_PARAMETER
// naming options.outputSchema.
func checkOutputSchema(tpl Template, raw json.RawMessage) (json.RawMessage, error) {
	info := tpl.Info()
	if !info.UsesOutputSchema {
		return nil, nil
	}
	trimmed := bytes.TrimSpace(raw)
	if len(trimmed) == 0 || bytes.Equal(trimmed, []byte("null")) {
		return nil, Errorf(InvalidParameter, "options.outputSchema is required by %s: pass the JSON Schema each item must match, e.g. {\"type\":\"object\",\"properties\":{\"name\":{\"type\":\"string\"}}}", info.TemplateID).
			WithDetails(map[string]any{"field": "options.outputSchema"})
	}
	if c, ok := tpl.(OutputSchemaChecker); ok {
		if err := c.CheckOutputSchema(trimmed); err != nil {
			return nil, outputSchemaError(err)
		}
		return compactJSON(trimmed), nil
	}
	if _, err := CompileSchema(trimmed); err != nil {
		return nil, Errorf(InvalidParameter, "options.outputSchema is not a valid JSON Schema (2020-12): %v", err).
			WithDetails(map[string]any{"field": "options.outputSchema"})
	}
	return compactJSON(trimmed), nil
}

// outputSchemaError is a template's refusal of options.outputSchema as
// the INVALID_PARAMETER *Error Submit returns, its message kept and the
// field named in its details.
func outputSchemaError(err error) *Error {
	var e *Error
	if !errors.As(err, &e) {
		return Errorf(InvalidParameter, "%v", err).WithDetails(map[string]any{"field": "options.outputSchema"})
	}
	return Errorf(InvalidParameter, "%s", e.Message).WithDetails(e.Details).
		WithDetails(map[string]any{"field": "options.outputSchema"})
}
