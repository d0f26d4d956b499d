package mcp

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"strconv"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// The Go SDK (v1.8.0) has no Tasks support: when it decodes tools/call into
// CallToolParamsRaw, the MCP 2025-11-25 field params.task is silently
// dropped. This shim moves params.task into a private _meta key before the
// SDK decodes the request, on both transports: stdio through a wrapped
// Connection.Read, HTTP through a rewrite of the POST body (a single message
// or a batch). The Tasks layer reads the key back (taskParamsFrom).
// TestSDKStillDropsTask fails when a future SDK keeps params.task itself;
// then this file should give way to the SDK's own support.

// taskMetaKey is the private _meta key carrying a lifted params.task.
const taskMetaKey = "dev.browsertask/task"

// methodToolsCall is the only request type this server accepts tasks for.
const methodToolsCall = "tools/call"

// liftTaskParams moves params.task of a tools/call into
// params._meta[taskMetaKey]. It returns the params unchanged (and false)
// when there is nothing to lift or they do not decode as an object; the SDK
// then reports malformed params itself.
func liftTaskParams(params json.RawMessage) (json.RawMessage, bool) {
	if !bytes.Contains(params, []byte(`"task"`)) {
		return params, false
	}
	var obj map[string]json.RawMessage
	if err := json.Unmarshal(params, &obj); err != nil {
		return params, false
	}
	task, ok := obj["task"]
	if !ok {
		return params, false
	}
	delete(obj, "task")
	if bytes.Equal(bytes.TrimSpace(task), []byte("null")) {
		task = nil // "task": null is no task at all
	}
	meta := map[string]json.RawMessage{}
	if raw, ok := obj["_meta"]; ok && len(bytes.TrimSpace(raw)) > 0 && !bytes.Equal(bytes.TrimSpace(raw), []byte("null")) {
		if err := json.Unmarshal(raw, &meta); err != nil {
			return params, false
		}
	}
	if task != nil {
		meta[taskMetaKey] = task
	} else {
		delete(meta, taskMetaKey)
	}
	mb, err := json.Marshal(meta)
	if err != nil {
		return params, false
	}
	obj["_meta"] = mb
	out, err := json.Marshal(obj)
	if err != nil {
		return params, false
	}
	return out, true
}

// liftTaskInRequest applies liftTaskParams to a decoded tools/call request.
func liftTaskInRequest(msg jsonrpc.Message) {
	if req, ok := msg.(*jsonrpc.Request); ok && req.Method == methodToolsCall {
		if p, changed := liftTaskParams(req.Params); changed {
			req.Params = p
		}
	}
}

// liftTaskInBody rewrites an HTTP POST body: one JSON-RPC message or a
// batch. Bodies that are not JSON, or need no change, are returned as is.
func liftTaskInBody(body []byte) []byte {
	if !bytes.Contains(body, []byte(`"task"`)) {
		return body
	}
	trimmed := bytes.TrimSpace(body)
	if len(trimmed) > 0 && trimmed[0] == '[' {
		var batch []json.RawMessage
		if err := json.Unmarshal(trimmed, &batch); err != nil {
			return body
		}
		changed := false
		for i, m := range batch {
			if out, ok := liftTaskInMessage(m); ok {
				batch[i], changed = out, true
			}
		}
		if !changed {
			return body
		}
		out, err := json.Marshal(batch)
		if err != nil {
			return body
		}
		return out
	}
	if out, ok := liftTaskInMessage(trimmed); ok {
		return out
	}
	return body
}

// liftTaskInMessage lifts params.task of one encoded tools/call message.
func liftTaskInMessage(m json.RawMessage) (json.RawMessage, bool) {
	var obj map[string]json.RawMessage
	if err := json.Unmarshal(m, &obj); err != nil {
		return m, false
	}
	var method string
	if err := json.Unmarshal(obj["method"], &method); err != nil || method != methodToolsCall {
		return m, false
	}
	params, changed := liftTaskParams(obj["params"])
	if !changed {
		return m, false
	}
	obj["params"] = params
	out, err := json.Marshal(obj)
	if err != nil {
		return m, false
	}
	return out, true
}

// liftTaskHTTP wraps the Streamable HTTP handler: POST bodies get their
// params.task lifted before the SDK reads them. The body is already capped
// by the caller (MaxBytesReader); a read error is left for the SDK to report.
func liftTaskHTTP(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost || r.Body == nil {
			next.ServeHTTP(w, r)
			return
		}
		body, err := io.ReadAll(r.Body)
		if err != nil {
			r.Body = io.NopCloser(io.MultiReader(bytes.NewReader(body), errReader{err}))
			next.ServeHTTP(w, r)
			return
		}
		body = liftTaskInBody(body)
		r.Body = io.NopCloser(bytes.NewReader(body))
		r.ContentLength = int64(len(body))
		r.Header.Set("Content-Length", strconv.Itoa(len(body)))
		next.ServeHTTP(w, r)
	})
}

// errReader replays a read error (such as http.MaxBytesError) to the SDK.
type errReader struct{ err error }

// Read implements io.Reader.
func (e errReader) Read([]byte) (int, error) { return 0, e.err }

// taskShimTransport wraps a stdio transport so that its connection lifts
// params.task and can send notifications of its own (tasks/status).
type taskShimTransport struct {
	inner sdk.Transport
	conn  *taskShimConn
}

// Connect implements sdk.Transport.
func (t *taskShimTransport) Connect(ctx context.Context) (sdk.Connection, error) {
	c, err := t.inner.Connect(ctx)
	if err != nil {
		return nil, err
	}
	t.conn = &taskShimConn{Connection: c}
	return t.conn, nil
}

// taskShimConn is a Connection whose Read lifts params.task.
type taskShimConn struct {
	sdk.Connection
}

// Read implements sdk.Connection.
func (c *taskShimConn) Read(ctx context.Context) (jsonrpc.Message, error) {
	msg, err := c.Connection.Read(ctx)
	if err == nil {
		liftTaskInRequest(msg)
	}
	return msg, err
}

// notify writes a JSON-RPC notification the SDK has no API for.
func (c *taskShimConn) notify(ctx context.Context, method string, params any) error {
	raw, err := json.Marshal(params)
	if err != nil {
		return err
	}
	return c.Connection.Write(ctx, &jsonrpc.Request{Method: method, Params: raw})
}
