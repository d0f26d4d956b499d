package mcp

import (
	"context"
	"encoding/json"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

func (s *Server) getRuntimeProfileTool() toolDef {
	return toolDef{
		name:  "get_runtime_profile",
		title: "Get the runtime profile",
		description: "Returns this server's limits and settings: maxConcurrentRuns (more submissions wait queued), " +
			"maxUrls per run, maxTabsPerSession, syncTimeoutMs and asyncTimeoutMs (default timeoutMs per mode), " +
			"autoSyncBudgetMs (how long auto mode waits), artifactMaxChunkSize and the artifact encoding rule, " +
			"artifactTtlMs and runTtlMs (retention), supportedModes, trustLevel, isRemote, the browser, version and " +
			"MCP protocol versions. Call it once to size batches and timeouts before running templates.",
		annotations: &sdk.ToolAnnotations{ReadOnlyHint: true, IdempotentHint: true},
		input:       object(map[string]any{}),
		output:      outputOf(profileSchema()),
		handle:      s.getRuntimeProfile,
	}
}

// profileSchema describes the runtime profile.
func profileSchema() map[string]any {
	strs := map[string]any{"type": "array", "items": map[string]any{"type": "string"}}
	return object(map[string]any{
		"maxConcurrentRuns":     integer("Runs executing at once; more wait queued."),
		"maxUrls":               integer("URLs per run."),
		"maxTabsPerSession":     integer("Tabs per browser session."),
		"syncTimeoutMs":         integer("Default and maximum timeoutMs in sync mode."),
		"asyncTimeoutMs":        integer("Default timeoutMs in async and auto mode."),
		"artifactMaxChunkSize":  integer("Largest get_artifact chunk in bytes."),
		"artifactTtlMs":         integer("Artifact retention."),
		"runTtlMs":              integer("Run retention after it ends; also the idempotencyKey window."),
		"supportedModes":        map[string]any{"type": "array", "items": map[string]any{"type": "string", "enum": []string{"sync", "async", "auto"}}},
		"trustLevel":            str("local or restricted."),
		"isRemote":              map[string]any{"type": "boolean", "description": "True when bound beyond loopback."},
		"version":               str("Server version."),
		"protocolVersions":      strs,
		"autoSyncBudgetMs":      integer("How long auto mode waits before answering async."),
		"taskPollIntervalMs":    integer("Suggested poll interval."),
		"maxTaskTtlMs":          integer("Largest task ttl granted."),
		"browser":               nullable(map[string]any{"type": "object"}, "{mode: local|remote, product} once known."),
		"artifactTextMimeTypes": strs,
		"artifactEncodingRule":  str("How get_artifact encodes data."),
		"allowFileUrls":         map[string]any{"type": "boolean"},
		"sessionIdleTtlMs":      integer("A browser session unused this long is closed."),
		"maxAttempts":           integer("Crashed executions a run survives before it fails."),
		"inputTimeoutMs":        integer("How long a run waits for a person's answer."),
		"maxInlineBytes":        integer("The budget of a tool answer in bytes: larger results are cut to whole items."),
		"historyTtlMs":          integer("How long the history of a forgotten run is kept."),
	}, "maxConcurrentRuns", "maxUrls", "maxTabsPerSession", "syncTimeoutMs", "asyncTimeoutMs",
		"artifactMaxChunkSize", "artifactTtlMs", "runTtlMs", "supportedModes", "trustLevel", "isRemote")
}

// getRuntimeProfile answers the engine's profile.
func (s *Server) getRuntimeProfile(_ context.Context, _ *sdk.CallToolRequest, _ json.RawMessage) *sdk.CallToolResult {
	return jsonResult(s.eng.Profile(), false)
}
