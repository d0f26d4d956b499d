package mcp

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// MCP 2026-07-28 is stateless: no initialize, no Mcp-Session-Id, the
// version and the client's capabilities in every request's _meta. The SDK
// serves it only from a handler in stateless mode, and serves the older
// versions (sessions, initialize, notifications on a GET stream) only from
// a stateful one. One endpoint serves both: versionRouter sends each
// request to the handler of its generation. Both handlers wrap the same
// *sdk.Server, so both generations see the same tools, resources and
// engine.

// modernVersion is the first stateless protocol version.
const modernVersion = "2026-07-28"

// protocolVersionHeader carries the request's protocol version over HTTP.
const protocolVersionHeader = "Mcp-Protocol-Version"

// Headers of SEP-2243 that name what a request is about.
const (
	methodHeader = "Mcp-Method"
	nameHeader   = "Mcp-Name"
)

// versionRouter picks the handler of a request's protocol generation:
// modern (>= 2026-07-28) when the MCP-Protocol-Version header says so, or,
// for a POST without header and session, when its body's _meta names such
// a version (the stateless handler then answers the missing header
// itself); legacy for everything else.
type versionRouter struct {
	legacy, modern http.Handler
}

// ServeHTTP implements http.Handler.
func (v versionRouter) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	version := strings.TrimSpace(r.Header.Get(protocolVersionHeader))
	if version != "" {
		if version >= modernVersion {
			v.serveModern(w, r)
			return
		}
		v.legacy.ServeHTTP(w, r)
		return
	}
	if r.Method != http.MethodPost || r.Header.Get(sessionIDHeader) != "" || r.Body == nil {
		v.legacy.ServeHTTP(w, r)
		return
	}
	body, err := io.ReadAll(r.Body)
	r.Body = replayBody(body, err)
	if err == nil && bodyVersion(body) >= modernVersion {
		v.serveModern(w, r)
		return
	}
	v.legacy.ServeHTTP(w, r)
}

// serveModern refuses a message with keys decoders could read apart
// (strict_keys.go), checks the Mcp-Name header of the task methods (the
// SDK checks it for tools/call, resources/read and prompts/get) and passes
// the request to the stateless handler.
func (v versionRouter) serveModern(w http.ResponseWriter, r *http.Request) {
	if r.Method == http.MethodPost && r.Body != nil {
		body, err := io.ReadAll(r.Body)
		r.Body = replayBody(body, err)
		if err == nil {
			if id, e := requestKeyClash(body); e != nil {
				writeRPCError(w, http.StatusBadRequest, id, e)
				return
			}
			if id, msg := taskNameMismatch(r.Header, body); msg != "" {
				writeRPCError(w, http.StatusBadRequest, id, &jsonrpc.Error{Code: sdk.CodeHeaderMismatch, Message: msg})
				return
			}
		}
	}
	v.modern.ServeHTTP(w, r)
}

// replayBody gives a handler the body read so far, then the read error.
func replayBody(body []byte, err error) io.ReadCloser {
	if err != nil {
		return io.NopCloser(io.MultiReader(bytes.NewReader(body), errReader{err}))
	}
	return io.NopCloser(bytes.NewReader(body))
}

// bodyVersion is params._meta's protocol version of a single request, ""
// for anything else (a batch, a notification, no _meta).
func bodyVersion(body []byte) string {
	var msg struct {
		Params struct {
			Meta map[string]json.RawMessage `json:"_meta"`
		} `json:"params"`
	}
	if json.Unmarshal(body, &msg) != nil {
		return ""
	}
	var v string
	if json.Unmarshal(msg.Params.Meta[sdk.MetaKeyProtocolVersion], &v) != nil {
		return ""
	}
	return v
}

// taskMethods are the Tasks-extension methods whose Mcp-Name header must
// be the task id.
var taskMethods = map[string]bool{"tasks/get": true, "tasks/update": true, "tasks/cancel": true}

// taskNameMismatch checks Mcp-Name of a tasks/get, tasks/update or
// tasks/cancel request against params.taskId (header names are
// case-insensitive, the value is compared exactly after trimming). It
// returns the request id and a message when they differ. Keys are read
// exactly, as the SDK reads them for the handler (maps, not structs:
// encoding/json matches struct fields case-insensitively), and
// requestKeyClash has refused duplicates and case variants before.
func taskNameMismatch(h http.Header, body []byte) (json.RawMessage, string) {
	var msg map[string]json.RawMessage
	var method string
	if json.Unmarshal(body, &msg) != nil || json.Unmarshal(msg["method"], &method) != nil || !taskMethods[method] {
		return nil, ""
	}
	var params map[string]json.RawMessage
	var taskID string
	if json.Unmarshal(msg["params"], &params) != nil || params["taskId"] == nil ||
		string(bytes.TrimSpace(params["taskId"])) == "null" || json.Unmarshal(params["taskId"], &taskID) != nil {
		return nil, ""
	}
	name := strings.TrimSpace(h.Get(nameHeader))
	switch {
	case len(h.Values(nameHeader)) == 0:
		return msg["id"], fmt.Sprintf("missing required %s header for method %q: set it to params.taskId", nameHeader, method)
	case name != taskID:
		return msg["id"], fmt.Sprintf("header mismatch: %s header value %q does not match params.taskId %q", nameHeader, name, taskID)
	}
	return nil, ""
}

// writeRPCError answers a JSON-RPC error with an HTTP status.
func writeRPCError(w http.ResponseWriter, status int, id json.RawMessage, e *jsonrpc.Error) {
	if len(id) == 0 {
		id = json.RawMessage("null")
	}
	b, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": id, "error": e})
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_, _ = w.Write(b)
}
