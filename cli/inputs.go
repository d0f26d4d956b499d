package cli

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
)

// inputFlags collects repeated --input key=value flags in order.
type inputFlags []string

func (f *inputFlags) String() string { return strings.Join(*f, " ") }

// Set accepts one key=value.
func (f *inputFlags) Set(v string) error {
	if k, _, ok := strings.Cut(v, "="); !ok || k == "" {
		return fmt.Errorf("want key=value, got %q", v)
	}
	*f = append(*f, v)
	return nil
}

// buildInputs merges --inputs (a JSON object from a file, or stdin for
// "-") with --input key=value pairs, which win. Values are typed by the
// template's input schema: an array property takes comma-separated values
// (and repeated flags append), numbers and booleans are parsed, objects are
// JSON; a property the schema does not know is JSON when it parses, else a
// string. The engine validates the result like any submission.
func buildInputs(pairs []string, file string, stdin io.Reader, schema json.RawMessage) (json.RawMessage, error) {
	doc := map[string]any{}
	if file != "" {
		var b []byte
		var err error
		if file == "-" {
			b, err = io.ReadAll(stdin)
		} else {
			b, err = os.ReadFile(file)
		}
		if err != nil {
			return nil, fmt.Errorf("--inputs: %w", err)
		}
		if err := json.Unmarshal(b, &doc); err != nil {
			return nil, fmt.Errorf("--inputs %s: want a JSON object: %s", file, jsonProblem(b, err))
		}
	}
	var sch struct {
		Properties map[string]struct {
			Type  any `json:"type"`
			Items struct {
				Type any `json:"type"`
			} `json:"items"`
		} `json:"properties"`
	}
	_ = json.Unmarshal(schema, &sch)
	seen := map[string]bool{}
	for _, p := range pairs {
		k, v, _ := strings.Cut(p, "=")
		prop, known := sch.Properties[k]
		typ := typeName(prop.Type)
		if err := jsonShaped(k, v); err != nil && typ != "string" {
			return nil, err
		}
		if t := strings.TrimSpace(v); typ == "object" && !strings.HasPrefix(t, "{") {
			return nil, fmt.Errorf("--input %s=: %s takes a JSON object, e.g. --input '%s={\"heading\":\"h1\"}' (see browsertask templates TEMPLATE), got %q", k, k, k, v)
		}
		if !known {
			doc[k] = looseValue(v)
			continue
		}
		if typ == "array" {
			var list []any
			if err := json.Unmarshal([]byte(v), &list); err != nil || !strings.HasPrefix(strings.TrimSpace(v), "[") {
				list = nil
				for _, part := range strings.Split(v, ",") {
					if part = strings.TrimSpace(part); part != "" {
						list = append(list, typedValue(part, typeName(prop.Items.Type)))
					}
				}
			}
			if prev, ok := doc[k].([]any); ok && seen[k] {
				list = append(prev, list...)
			}
			doc[k], seen[k] = list, true
			continue
		}
		doc[k] = typedValue(v, typ)
	}
	return json.Marshal(doc)
}

// jsonShaped reports a value that looks like JSON (it starts with { or
// [) and does not parse, saying where it is malformed: a broken object
// must not reach the engine as a string and come back as "got string,
// want object".
func jsonShaped(key, v string) error {
	t := strings.TrimSpace(v)
	if !strings.HasPrefix(t, "{") && !strings.HasPrefix(t, "[") {
		return nil
	}
	var x any
	if err := json.Unmarshal([]byte(t), &x); err != nil {
		return fmt.Errorf("--input %s=: the value is not valid JSON: %s", key, jsonProblem([]byte(t), err))
	}
	return nil
}

// typeName reads a schema "type" that may be a string or a list.
func typeName(t any) string {
	switch x := t.(type) {
	case string:
		return x
	case []any:
		for _, e := range x {
			if s, ok := e.(string); ok && s != "null" {
				return s
			}
		}
	}
	return ""
}

// typedValue converts v to the schema type, leaving it a string when it
// does not parse (the engine then reports the type error by field).
func typedValue(v, typ string) any {
	switch typ {
	case "integer":
		if n, err := strconv.ParseInt(v, 10, 64); err == nil {
			return n
		}
	case "number":
		if f, err := strconv.ParseFloat(v, 64); err == nil {
			return f
		}
	case "boolean":
		if b, err := strconv.ParseBool(v); err == nil {
			return b
		}
	case "object", "":
		return looseValue(v)
	}
	return v
}

// looseValue is v as JSON when it parses, else the string itself.
func looseValue(v string) any {
	var x any
	if err := json.Unmarshal([]byte(v), &x); err == nil {
		return x
	}
	return v
}
