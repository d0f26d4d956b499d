package mcp

import (
	"context"

	"github.com/browsertask/browsertask/engine"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// Plugin adds tools, prompts and resources of its own to a Server and
// answers for the runs its tools start. The server knows nothing of what
// they are, so code that is not part of the product stays out of this
// package: the MCP conformance suite's fixtures (internal/conformance)
// plug in this way with --dev-templates, as the go-sdk keeps its
// conformance server outside the SDK.
type Plugin interface {
	// Capabilities amends the capabilities the server declares, once,
	// before the SDK server is built: a plugin whose tools or prompts come
	// and go sets their listChanged. The server answers prompts/list and
	// prompts/get only when the capabilities then declare prompts.
	Capabilities(caps *sdk.ServerCapabilities)
	// Install registers the plugin's tools, prompts and resources on srv,
	// once, after the server's own tools and resources; host is what the
	// server lends those tools (see PluginHost).
	Install(srv *sdk.Server, host *PluginHost)
	// RunAnswer is the answer a plugin tool gives for a finished run it
	// started (through PluginHost.Run): its CallToolResult, or the
	// JSON-RPC error the run ended with. Both nil for any other run, which
	// the server answers as run_task_template does in sync mode. The
	// server asks it for every finished run it shows as a task.
	RunAnswer(run *engine.Run) (*sdk.CallToolResult, *jsonrpc.Error)
}

// PluginHost is what a Server lends the tools of its Plugin: the Tasks
// machinery of run_task_template, for tool calls whose work is a durable
// run. It is safe for concurrent use.
type PluginHost struct {
	s *Server
}

// TaskAllowed reports whether the tool call of ctx may answer with a task:
// its client declared the Tasks extension (MCP 2026-07-28). A tool that
// only works as a task checks it first and answers ErrTaskRequired.
func (h *PluginHost) TaskAllowed(ctx context.Context) bool {
	return taskSlotFrom(ctx) != nil
}

// ErrTaskRequired is the -32021 error of a tool that only works as a task,
// called by a client that did not declare the Tasks extension; its data
// names the capability to declare.
func (h *PluginHost) ErrTaskRequired() error {
	return errMissingTasksCapability()
}

// Run submits req (always in async mode) as the work of the tool call of
// ctx and answers the call: with the run as its task when TaskAllowed,
// otherwise with the finished run's answer (Plugin.RunAnswer, or
// run_task_template's sync reply) once the run ends. Errors: -32602
// carrying the contract's error object when the engine refuses req,
// -32603 when waiting fails, or the JSON-RPC error the run ended with.
func (h *PluginHost) Run(ctx context.Context, req engine.SubmitRequest) (*sdk.CallToolResult, error) {
	req.Mode = engine.ModeAsync
	sub, err := h.s.eng.Submit(ctx, req)
	if err != nil {
		return nil, errDomainParams(err)
	}
	if offerTask(ctx, sub.Run, false) {
		// callModern answers CreateTaskResult instead of this result.
		return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: "task " + sub.Run.RunID}}}, nil
	}
	run, err := h.s.eng.Wait(ctx, sub.Run.RunID, nil)
	if err != nil {
		return nil, errInternal(err)
	}
	if _, rpcErr := h.s.pluginAnswer(run); rpcErr != nil {
		return nil, rpcErr
	}
	return h.s.toolResultOf(ctx, run), nil
}

// pluginAnswer is the plugin's answer for a finished run, both nil
// without a plugin or for a run that is not the plugin's.
func (s *Server) pluginAnswer(run *engine.Run) (*sdk.CallToolResult, *jsonrpc.Error) {
	if s.plugin == nil || !run.Status.Terminal() {
		return nil, nil
	}
	return s.plugin.RunAnswer(run)
}
