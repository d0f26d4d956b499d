package mcp

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/browsertask/browsertask/engine"
)

// The schema library's messages name the field but speak its own jargon
// ("minimum: got 0, want 1"). These helpers restate a violation from the
// tool's own input schema, the way the contract phrases it:
// "options.timeoutMs must be 1..600000, got 0".

// checkArgs validates args against the tool's input schema and returns nil
// or an INVALID_PARAMETER error naming the field.
func checkArgs(input map[string]any, v *engine.Schema, args json.RawMessage) error {
	var doc map[string]any
	if err := json.Unmarshal(args, &doc); err != nil {
		return engine.Errorf(engine.InvalidParameter, "arguments: %v", err)
	}
	if req, _ := input["required"].([]string); len(req) > 0 {
		for _, name := range req {
			if _, ok := doc[name]; !ok {
				return invalidField(name, "is required")
			}
		}
	}
	verr := engine.AsError(v.Validate(args, ""))
	if verr == nil {
		return nil
	}
	field, _ := verr.Details["field"].(string)
	sub := schemaAt(input, field)
	val, ok := valueAt(doc, field)
	if sub == nil || !ok {
		return verr
	}
	e := invalidField(field, "%s, got %s", describeSchema(sub), describeValue(val))
	if strings.Contains(verr.Message, "; ") {
		e.Message += " (all problems: " + verr.Message + ")"
	}
	return e
}

// schemaAt returns the sub-schema of a dotted field path ("options.mode").
func schemaAt(s map[string]any, field string) map[string]any {
	if field == "" {
		return nil
	}
	cur := s
	for _, part := range strings.Split(field, ".") {
		props, _ := cur["properties"].(map[string]any)
		next, _ := props[part].(map[string]any)
		if next == nil {
			return nil
		}
		cur = next
	}
	return cur
}

// valueAt returns the argument value at a dotted field path.
func valueAt(doc map[string]any, field string) (any, bool) {
	var cur any = doc
	for _, part := range strings.Split(field, ".") {
		m, ok := cur.(map[string]any)
		if !ok {
			return nil, false
		}
		if cur, ok = m[part]; !ok {
			return nil, false
		}
	}
	return cur, true
}

// describeSchema states what a field must be: "must be an integer in 1..600000".
func describeSchema(s map[string]any) string {
	if enum, ok := s["enum"].([]string); ok {
		return "must be one of " + strings.Join(enum, ", ")
	}
	typ := fmt.Sprint(s["type"])
	if list, ok := s["type"].([]string); ok {
		typ = strings.Join(list, " or ")
	}
	min, hasMin := s["minimum"]
	max, hasMax := s["maximum"]
	minLen, hasMinLen := s["minLength"]
	maxLen, hasMaxLen := s["maxLength"]
	switch {
	case typ == "integer" && hasMin && hasMax:
		return fmt.Sprintf("must be an integer in %v..%v", min, max)
	case typ == "integer" && hasMin:
		return fmt.Sprintf("must be an integer >= %v", min)
	case typ == "string" && hasMinLen && hasMaxLen:
		return fmt.Sprintf("must be a string of %v..%v characters", minLen, maxLen)
	case typ == "string" && hasMinLen:
		return "must be a non-empty string"
	case typ == "string" && hasMaxLen:
		return fmt.Sprintf("must be a string of at most %v characters", maxLen)
	case typ == "integer" || typ == "object":
		return "must be an " + typ
	default:
		return "must be a " + typ
	}
}

// describeValue renders the offending value briefly.
func describeValue(v any) string {
	switch x := v.(type) {
	case string:
		if n := len([]rune(x)); n > 40 {
			return fmt.Sprintf("a string of %d characters", n)
		}
		return fmt.Sprintf("%q", x)
	case float64:
		return string(numberJSON(x))
	case nil:
		return "null"
	case bool:
		return fmt.Sprint(x)
	case []any:
		return "an array"
	case map[string]any:
		return "an object"
	}
	return fmt.Sprint(v)
}

// numberJSON encodes a number as JSON (no exponent for ordinary integers);
// encoding a finite float64 cannot fail.
func numberJSON(f float64) []byte {
	b, _ := json.Marshal(f)
	return b
}
