//lint:file-ignore SA1019 the conformance fixtures ask through sampling and roots: deprecated by SEP-2577, still part of MCP 2026-07-28 and of the suite's scenarios.

package conformance

import (
	"encoding/json"
	"fmt"
	"sort"
	"strings"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// What the fixtures ask a client (elicitation, sampling, roots, as
// input requests) and how they read its answers.

// text is a CallToolResult of one text block.
func text(format string, args ...any) *sdk.CallToolResult {
	return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: fmt.Sprintf(format, args...)}}}
}

// elicit is an elicitation/create input request for one string field.
func elicit(message string, props map[string]any, required ...string) sdk.InputRequest {
	return &sdk.ElicitParams{Mode: "form", Message: message,
		RequestedSchema: map[string]any{"type": "object", "properties": props, "required": required}}
}

// stringField is a string property of a requested schema.
var stringField = map[string]any{"type": "string"}

// sampling is a sampling/createMessage input request.
func sampling(prompt string, maxTokens int64) sdk.InputRequest {
	return &sdk.CreateMessageParams{MaxTokens: maxTokens,
		Messages: []*sdk.SamplingMessage{{Role: "user", Content: &sdk.TextContent{Text: prompt}}}}
}

// elicitedString is the string field of an accepted elicitation answer.
func elicitedString(raw json.RawMessage, field string) string {
	var r struct {
		Action  string         `json:"action"`
		Content map[string]any `json:"content"`
	}
	if json.Unmarshal(raw, &r) != nil || r.Action != "accept" {
		return ""
	}
	v, _ := r.Content[field].(string)
	return v
}

// sampledText is the text of a sampling answer.
func sampledText(raw json.RawMessage) string {
	var r struct {
		Content struct {
			Text string `json:"text"`
		} `json:"content"`
	}
	_ = json.Unmarshal(raw, &r)
	return r.Content.Text
}

// rootURIs lists the roots of a roots/list answer.
func rootURIs(raw json.RawMessage) []string {
	var r struct {
		Roots []struct {
			URI string `json:"uri"`
		} `json:"roots"`
	}
	_ = json.Unmarshal(raw, &r)
	var out []string
	for _, root := range r.Roots {
		out = append(out, root.URI)
	}
	return out
}

// jsonSchemaFixture is json_schema_2020_12_tool's input schema: 2020-12
// keywords the server must pass through untouched.
var jsonSchemaFixture = map[string]any{
	"$schema": "https://json-schema.org/draft/2020-12/schema",
	"type":    "object",
	"$defs": map[string]any{"address": map[string]any{"$anchor": "addressDef", "type": "object",
		"properties": map[string]any{"street": stringField, "city": stringField}}},
	"properties": map[string]any{
		"name": stringField, "address": map[string]any{"$ref": "#/$defs/address"},
		"contactMethod": map[string]any{"type": "string", "enum": []string{"phone", "email"}},
		"phone":         stringField, "email": stringField,
	},
	"allOf":                []any{map[string]any{"anyOf": []any{map[string]any{"required": []string{"phone"}}, map[string]any{"required": []string{"email"}}}}},
	"if":                   map[string]any{"properties": map[string]any{"contactMethod": map[string]any{"const": "phone"}}, "required": []string{"contactMethod"}},
	"then":                 map[string]any{"required": []string{"phone"}},
	"else":                 map[string]any{"required": []string{"email"}},
	"additionalProperties": false,
}

// sortedKeys lists a map's keys in order (deterministic result texts).
func sortedKeys(m map[string]json.RawMessage) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// joinRoots renders root URIs for a result text.
func joinRoots(uris []string) string {
	if len(uris) == 0 {
		return "(none)"
	}
	return strings.Join(uris, ", ")
}
