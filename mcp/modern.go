package mcp

import (
	"encoding/json"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// A request of MCP 2026-07-28 or later carries its protocol version and
// the client's capabilities in params._meta (the SDK has checked both
// before any handler runs). These helpers read them from a request's meta,
// so the same server answers each request in its own generation's dialect,
// on stdio as well as over HTTP.

// tasksExtension is the identifier of the Tasks extension (SEP-2663).
const tasksExtension = "io.modelcontextprotocol/tasks"

// modernMeta reports whether meta belongs to a 2026-07-28 (or later)
// request.
func modernMeta(meta sdk.Meta) bool {
	v, _ := meta[sdk.MetaKeyProtocolVersion].(string)
	return v >= modernVersion
}

// modernRequest reports whether req follows MCP 2026-07-28 or later.
func modernRequest(req sdk.Request) bool {
	return modernMeta(paramsMeta(req.GetParams()))
}

// paramsMeta is the _meta of params, nil when there are none.
func paramsMeta(p sdk.Params) sdk.Meta {
	if p == nil {
		return nil
	}
	return p.GetMeta()
}

// clientCapabilities decodes the per-request client capabilities of a
// modern request's meta ({} when absent or malformed, which the SDK has
// already refused).
func clientCapabilities(meta sdk.Meta) map[string]any {
	raw, ok := meta[sdk.MetaKeyClientCapabilities]
	if !ok {
		return map[string]any{}
	}
	if m, ok := raw.(map[string]any); ok {
		return m
	}
	// Set in-process as a typed value: go through JSON.
	b, err := json.Marshal(raw)
	if err != nil {
		return map[string]any{}
	}
	var m map[string]any
	if json.Unmarshal(b, &m) != nil || m == nil {
		return map[string]any{}
	}
	return m
}

// declaresTasks reports whether a modern request's client declared the
// Tasks extension in its per-request capabilities.
func declaresTasks(meta sdk.Meta) bool {
	ext, _ := clientCapabilities(meta)["extensions"].(map[string]any)
	_, ok := ext[tasksExtension]
	return ok
}
