package mcp

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"sort"

	"github.com/browsertask/browsertask/engine"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// addTool registers t with the SDK's low-level AddTool, which hands over raw
// arguments: the SDK's own schema validation would answer bad arguments with
// a JSON-RPC error, while the contract wants INVALID_PARAMETER tool results
// naming the field. Arguments are validated here against the same input
// schema tools/list advertises.
func (s *Server) addTool(t toolDef) {
	inRaw, err := json.Marshal(t.input)
	if err != nil {
		s.log.Error("tool input schema does not encode", "tool", t.name, "error", err)
		return
	}
	outRaw, err := json.Marshal(t.output)
	if err != nil {
		s.log.Error("tool output schema does not encode", "tool", t.name, "error", err)
		return
	}
	validator, err := engine.CompileSchema(inRaw)
	if err != nil {
		// A broken built-in schema is a programming error caught by the
		// tests; the tool stays listed and answers EXECUTION_ERROR.
		s.log.Error("tool input schema does not compile", "tool", t.name, "error", err)
	}
	s.sdk.AddTool(&sdk.Tool{
		Name:         t.name,
		Title:        t.title,
		Description:  t.description,
		Annotations:  t.annotations,
		InputSchema:  json.RawMessage(inRaw),
		OutputSchema: json.RawMessage(outRaw),
	}, func(ctx context.Context, req *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
		args, perr := objectArguments(req.Params.Arguments)
		if perr != nil {
			return nil, perr
		}
		if validator == nil {
			return errorResult(engine.Errorf(engine.ExecutionError, "tool %s has a broken input schema", t.name)), nil
		}
		if verr := checkArgs(t.input, validator, args); verr != nil {
			return errorResult(verr), nil
		}
		return t.handle(ctx, req, args), nil
	})
}

// objectArguments returns the call's arguments as a JSON object ({} when
// absent or null). Arguments that are not an object are a protocol problem
// (JSON-RPC -32602), not a tool error.
func objectArguments(raw json.RawMessage) (json.RawMessage, error) {
	trimmed := bytes.TrimSpace(raw)
	if len(trimmed) == 0 || bytes.Equal(trimmed, []byte("null")) {
		return json.RawMessage("{}"), nil
	}
	if trimmed[0] != '{' {
		return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: "tools/call arguments must be a JSON object"}
	}
	return trimmed, nil
}

// decodeArgs unmarshals validated arguments into v. A failure here means a
// value the schema admits but Go cannot hold (for example 1e400), or a key
// the schema and this decoder would read apart (a duplicate, or a field
// spelled in another case: strict_keys.go); it is reported as
// INVALID_PARAMETER.
func decodeArgs(args json.RawMessage, v any) error {
	if c := findKeyClash(args, jsonFieldNames(v)...); c != nil {
		return engine.Errorf(engine.InvalidParameter, "%s", c.message("arguments")).WithDetails(map[string]any{"field": c.Key})
	}
	if err := json.Unmarshal(args, v); err != nil {
		return engine.Errorf(engine.InvalidParameter, "arguments: %v", err)
	}
	return nil
}

// invalidField builds the INVALID_PARAMETER error for one argument.
func invalidField(field, format string, args ...any) *engine.Error {
	return engine.Errorf(engine.InvalidParameter, "%s %s", field, fmt.Sprintf(format, args...)).
		WithDetails(map[string]any{"field": field})
}

// jsonResult answers with v as structuredContent, after a one-line summary
// (answers.go) and the same JSON as a text block, for clients that ignore
// structured content.
func jsonResult(v any, isError bool) *sdk.CallToolResult {
	b, err := json.Marshal(v)
	if err != nil {
		e := engine.Wrap(engine.ExecutionError, err, "encode result: %v", err)
		b, _ = json.Marshal(e)
		v, isError = e, true
	}
	return &sdk.CallToolResult{
		Content:           []sdk.Content{&sdk.TextContent{Text: summaryLine(v, isError)}, &sdk.TextContent{Text: string(b)}},
		StructuredContent: json.RawMessage(b),
		IsError:           isError,
	}
}

// errorResult turns any error into the contract's error result: isError
// true, structuredContent {errorCode, message, recovery, details?}.
func errorResult(err error) *sdk.CallToolResult {
	return jsonResult(engine.AsError(err), true)
}

// answer is a handler's result: v as the answer, or err as the contract's
// error result (logged when unexpected, see errorResultLogged).
func (s *Server) answer(tool string, v any, err error) *sdk.CallToolResult {
	if err != nil {
		return s.errorResultLogged(tool, err)
	}
	return jsonResult(v, false)
}

// errorResultLogged is errorResult that also logs unexpected failures, so an
// EXECUTION_ERROR leaves a trace on stderr.
func (s *Server) errorResultLogged(tool string, err error) *sdk.CallToolResult {
	e := engine.AsError(err)
	if e.Code == engine.ExecutionError {
		s.log.Error("tool failed", "tool", tool, "error", err)
	}
	return jsonResult(e, true)
}

// unknownArguments lists the argument names args carries that schema does
// not declare, as dotted paths ("futureField", "options.futureOption"),
// sorted. Only objects whose schema lists properties are looked into: free
// objects (a template's inputs, options.outputSchema) have their own rules.
// The contract ignores such fields for forward compatibility;
// tools report them back so a typo is not silent.
func unknownArguments(schema map[string]any, args json.RawMessage) []string {
	var doc map[string]any
	if json.Unmarshal(args, &doc) != nil {
		return nil
	}
	var out []string
	var walk func(s map[string]any, v map[string]any, prefix string)
	walk = func(s map[string]any, v map[string]any, prefix string) {
		props, ok := s["properties"].(map[string]any)
		if !ok {
			return
		}
		for k, val := range v {
			p, known := props[k].(map[string]any)
			if !known {
				out = append(out, prefix+k)
				continue
			}
			if m, ok := val.(map[string]any); ok {
				walk(p, m, prefix+k+".")
			}
		}
	}
	walk(schema, doc, "")
	sort.Strings(out)
	return out
}
