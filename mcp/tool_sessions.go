package mcp

import (
	"context"
	"encoding/json"

	"github.com/browsertask/browsertask/engine"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// sessionSchema is a browser session as the session tools return it.
func sessionSchema() map[string]any {
	return object(map[string]any{
		"sessionId":  str(`"sess_" + UUID; pass it as run_task_template's sessionId.`),
		"createdAt":  integer("Unix ms."),
		"lastUsedAt": integer("Unix ms of the last run or export in it."),
		"expiresAt":  integer("Unix ms when it closes unless used again (sessionIdleTtlMs after the last use)."),
		"closedAt":   nullableInt("Unix ms when it was closed, or null."),
	}, "sessionId", "createdAt", "expiresAt")
}

func (s *Server) createBrowserSessionTool() toolDef {
	return toolDef{
		name:  "create_browser_session",
		title: "Create a browser session",
		description: "Creates an isolated browser session (own cookies and storage) that outlives runs: pass its " +
			"sessionId to run_task_template so several runs share a login (run the login template in it first) or " +
			"state. Optionally restores a saved login: storageStateArtifactId (the artifactId export_session_state " +
			"returned) or storageState (that artifact's JSON: {cookies, origins}). Answers {sessionId, createdAt, " +
			"expiresAt}. A session closes after sessionIdleTtlMs (default 30 min) without use, or with " +
			"close_browser_session. Runs in a session are executed by the server process that created it. " +
			"Errors: INVALID_PARAMETER (bad storageState), ARTIFACT_NOT_FOUND, ARTIFACT_EXPIRED, EXECUTION_ERROR " +
			"(no browser available).",
		annotations: &sdk.ToolAnnotations{},
		input: object(map[string]any{
			"storageState": map[string]any{"type": "object", "description": "Cookies and localStorage to restore, as export_session_state wrote them."},
			"storageStateArtifactId": map[string]any{"type": "string", "minLength": 1,
				"description": "Restore the state saved in this export_session_state artifact instead."},
		}),
		output: outputOf(sessionSchema()),
		handle: s.createBrowserSession,
	}
}

func (s *Server) createBrowserSession(ctx context.Context, _ *sdk.CallToolRequest, raw json.RawMessage) *sdk.CallToolResult {
	var a struct {
		StorageState json.RawMessage `json:"storageState"`
		ArtifactID   string          `json:"storageStateArtifactId"`
	}
	if err := decodeArgs(raw, &a); err != nil {
		return errorResult(err)
	}
	sess, err := s.eng.CreateSession(ctx, engine.CreateSessionRequest{StorageState: a.StorageState, ArtifactID: a.ArtifactID})
	return s.answer("create_browser_session", sess, err)
}

func (s *Server) listBrowserSessionsTool() toolDef {
	return toolDef{
		name:  "list_browser_sessions",
		title: "List browser sessions",
		description: "Lists the open browser sessions (newest first) of every server process sharing the database: " +
			"{sessions: [{sessionId, createdAt, lastUsedAt, expiresAt, closedAt}]}. Use it to find a session to " +
			"reuse or to close. Expired and closed sessions are not listed.",
		annotations: &sdk.ToolAnnotations{ReadOnlyHint: true, IdempotentHint: true},
		input:       object(map[string]any{}),
		output: outputOf(object(map[string]any{
			"sessions": map[string]any{"type": "array", "items": sessionSchema()},
		}, "sessions")),
		handle: s.listBrowserSessions,
	}
}

func (s *Server) listBrowserSessions(ctx context.Context, _ *sdk.CallToolRequest, _ json.RawMessage) *sdk.CallToolResult {
	list, err := s.eng.ListSessions(ctx)
	return s.answer("list_browser_sessions", map[string]any{"sessions": list}, err)
}

func (s *Server) closeBrowserSessionTool() toolDef {
	return toolDef{
		name:  "close_browser_session",
		title: "Close a browser session",
		description: "Closes a browser session: its cookies and storage are discarded (save them first with " +
			"export_session_state if needed) and runs still using it fail. Answers the closed session " +
			"{sessionId, createdAt, expiresAt, closedAt}. Errors: SESSION_NOT_FOUND (unknown, already closed or expired).",
		annotations: destructiveIdempotent(),
		input:       object(map[string]any{"sessionId": str("The session to close.")}, "sessionId"),
		output:      outputOf(sessionSchema()),
		handle:      s.closeBrowserSession,
	}
}

func (s *Server) closeBrowserSession(ctx context.Context, _ *sdk.CallToolRequest, raw json.RawMessage) *sdk.CallToolResult {
	id, err := sessionIDArg(raw)
	if err != nil {
		return errorResult(err)
	}
	sess, err := s.eng.CloseSession(context.WithoutCancel(ctx), id)
	return s.answer("close_browser_session", sess, err)
}

// sessionIDArg decodes the {sessionId} arguments of close_browser_session
// and export_session_state.
func sessionIDArg(raw json.RawMessage) (string, error) {
	var a struct {
		SessionID string `json:"sessionId"`
	}
	err := decodeArgs(raw, &a)
	return a.SessionID, err
}

func (s *Server) exportSessionStateTool() toolDef {
	return toolDef{
		name:  "export_session_state",
		title: "Save a session's login state",
		description: "Saves a browser session's cookies and localStorage as a JSON artifact " +
			"({cookies: [...], origins: [{origin, localStorage: [{name, value}]}]}) kept artifactTtlMs, so a login " +
			"can be restored later: create_browser_session {storageStateArtifactId}. Answers {sessionId, " +
			"artifactId, mimeType, size, expiresAt}; read the JSON with get_artifact. The artifact holds live " +
			"credentials (cookies): treat it as a secret. Errors: SESSION_NOT_FOUND, EXECUTION_ERROR (the session " +
			"belongs to another server process).",
		annotations: &sdk.ToolAnnotations{ReadOnlyHint: true},
		input:       object(map[string]any{"sessionId": str("The session to save.")}, "sessionId"),
		output: outputOf(object(map[string]any{
			"sessionId":  str("The session."),
			"artifactId": str("The saved state (application/json)."),
			"mimeType":   str("application/json"),
			"size":       integer("Bytes."),
			"expiresAt":  integer("Unix ms when the artifact expires."),
		}, "sessionId", "artifactId", "mimeType", "size", "expiresAt")),
		handle: s.exportSessionState,
	}
}

func (s *Server) exportSessionState(ctx context.Context, _ *sdk.CallToolRequest, raw json.RawMessage) *sdk.CallToolResult {
	id, err := sessionIDArg(raw)
	if err != nil {
		return errorResult(err)
	}
	exp, err := s.eng.ExportSessionState(ctx, id)
	return s.answer("export_session_state", exp, err)
}
