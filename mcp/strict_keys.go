package mcp

import (
	"bytes"
	"encoding/json"
	"fmt"
	"reflect"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
)

// A check that compares a header with the body and the handler that acts
// on the body must read the same key. They need not use the same decoder:
// encoding/json matches object keys to struct fields case-insensitively
// and keeps the last of duplicate keys; the SDK's decoder matches exactly.
// So {"taskId": "A", "TASKID": "B"} read B here and A in the SDK, and a
// check of Mcp-Name: B let a tasks/cancel of A through. Requests whose
// header must match the body are therefore refused when a key appears
// twice or differs from a known field by case only: no decoder can then
// read another value than the one checked. Other keys are left alone
// (a later protocol version may add fields).

// keyClash is a key of a JSON object that two decoders could read apart.
type keyClash struct {
	// Key is the key as sent.
	Key string
	// Want is the known field it spells differently ("" for a duplicate).
	Want string
}

// message says what is wrong with the key at path (its parent's path,
// "params" or "" for the message itself) and how to fix it.
func (c *keyClash) message(path string) string {
	name := c.Key
	if path != "" {
		name = path + "." + c.Key
	}
	if c.Want == "" {
		return fmt.Sprintf("%s appears more than once: send each key once", name)
	}
	return fmt.Sprintf("%s is not a field (keys are case-sensitive): send it once, spelled %q", name, c.Want)
}

// findKeyClash scans the top-level keys of the JSON object raw for the
// first one that appears twice or equals one of known case-insensitively
// without being it. Keys are compared unescaped, as decoders see them.
// It returns nil for anything that is not an object (decoding reports
// that) and for an object without such a key.
func findKeyClash(raw []byte, known ...string) *keyClash {
	dec := json.NewDecoder(bytes.NewReader(raw))
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		return nil
	}
	seen := map[string]bool{}
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return nil
		}
		key, _ := tok.(string)
		if seen[key] {
			return &keyClash{Key: key}
		}
		seen[key] = true
		for _, k := range known {
			if key != k && strings.EqualFold(key, k) {
				return &keyClash{Key: key, Want: k}
			}
		}
		var skip json.RawMessage
		if err := dec.Decode(&skip); err != nil {
			return nil
		}
	}
	return nil
}

// envelopeKeys are the members of a JSON-RPC message.
var envelopeKeys = []string{"jsonrpc", "id", "method", "params", "result", "error"}

// namedParamKeys are the known params of the requests whose Mcp-Name
// header names something in the body (the SDK checks the first three, the
// task methods are checked in taskNameMismatch).
var namedParamKeys = map[string][]string{
	"tools/call":     {"name", "arguments", "_meta", "task"},
	"resources/read": {"uri", "_meta"},
	"prompts/get":    {"name", "arguments", "_meta"},
	"tasks/get":      {"taskId", "_meta"},
	"tasks/cancel":   {"taskId", "_meta"},
	"tasks/update":   {"taskId", "inputResponses", "_meta"},
}

// requestKeyClash checks one JSON-RPC message of an HTTP body before any
// header is compared with it: a clash in the message itself is -32600
// (invalid request), one in the params of a request with an Mcp-Name
// header is -32602 (invalid params); both name the key. It returns the
// message's id with the error, or nil when the keys are sound (or the
// body is not one object: a batch is not a 2026-07-28 message, and
// malformed JSON is the SDK's to report).
func requestKeyClash(body []byte) (json.RawMessage, *jsonrpc.Error) {
	var msg map[string]json.RawMessage
	if json.Unmarshal(body, &msg) != nil {
		return nil, nil
	}
	if c := findKeyClash(body, envelopeKeys...); c != nil {
		return msg["id"], &jsonrpc.Error{Code: jsonrpc.CodeInvalidRequest, Message: "invalid request: " + c.message("")}
	}
	var method string
	if json.Unmarshal(msg["method"], &method) != nil {
		return nil, nil
	}
	known, ok := namedParamKeys[method]
	if !ok {
		return nil, nil
	}
	if c := findKeyClash(msg["params"], known...); c != nil {
		return msg["id"], &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: "invalid params: " + c.message("params")}
	}
	return nil, nil
}

// jsonFieldNames returns the JSON names of the fields of the struct v
// points to, embedded structs' included: the keys encoding/json would
// match case-insensitively when it decodes into v.
func jsonFieldNames(v any) []string {
	t := reflect.TypeOf(v)
	for t != nil && t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if t == nil || t.Kind() != reflect.Struct {
		return nil
	}
	var names []string
	for f := range t.Fields() {
		tag, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		switch {
		case tag == "-" || (!f.IsExported() && !f.Anonymous):
		case f.Anonymous && tag == "":
			names = append(names, jsonFieldNames(reflect.New(f.Type).Interface())...)
		case tag != "":
			names = append(names, tag)
		default:
			names = append(names, f.Name)
		}
	}
	return names
}
