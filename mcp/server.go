// Package mcp exposes the engine as an MCP server: the seven v1 tools of the
// frozen v1 contract (README, "Tools"), served over stdio and Streamable HTTP
// by one server definition.
package mcp

import (
	"context"
	"encoding/json"
	"log/slog"
	"time"

	"github.com/browsertask/browsertask/engine"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// Engine is what the MCP layer needs from the domain: runs, artifacts,
// the event log and browser sessions. *engine.Engine implements it. Every
// method returns domain errors (*engine.Error inside the error) that the
// tools turn into isError results; the engine makes every check and
// normalisation, the tools only translate.
type Engine interface {
	Submit(ctx context.Context, r engine.SubmitRequest) (*engine.SubmitResult, error)
	Get(ctx context.Context, runID string) (*engine.Run, error)
	List(ctx context.Context, q engine.ListQuery) (*engine.RunList, error)
	Cancel(ctx context.Context, runID, reason string) (*engine.CancelResult, error)
	Wait(ctx context.Context, runID string, onChange func(*engine.Run)) (*engine.Run, error)
	WaitSettled(ctx context.Context, runID string, onChange func(*engine.Run)) (*engine.Run, error)
	ReadArtifact(ctx context.Context, artifactID string, offset, length int64) (*engine.ArtifactChunk, error)
	Artifact(ctx context.Context, artifactID string) (*engine.Artifact, error)
	ArtifactBytes(ctx context.Context, artifactID string, offset, length int64) ([]byte, error)
	Templates() []engine.TemplateInfo
	Profile() engine.Profile

	PendingQuestions(ctx context.Context, runID string) ([]engine.Question, error)
	AnswerQuestionMCP(ctx context.Context, runID, requestID string, response json.RawMessage) (bool, error)
	AnswerQuestion(ctx context.Context, runID, requestID string, a engine.Answer) (*engine.WaitingQuestion, error)

	EventsAfter(ctx context.Context, runID string, afterSeq int64, limit int) ([]engine.Event, int64, bool, error)
	WaitEvents(ctx context.Context, runID string, afterSeq int64, wait time.Duration) ([]engine.Event, int64, bool, error)

	CreateSession(ctx context.Context, r engine.CreateSessionRequest) (*engine.Session, error)
	ListSessions(ctx context.Context) ([]*engine.Session, error)
	CloseSession(ctx context.Context, sessionID string) (*engine.Session, error)
	ExportSessionState(ctx context.Context, sessionID string) (*engine.SessionExport, error)
}

// The real engine must keep satisfying the interface.
var _ Engine = (*engine.Engine)(nil)

// ServerOptions configure NewServer.
type ServerOptions struct {
	// Version is the binary's version, reported in serverInfo.
	Version string
	// Logger receives the server's logs (stderr); nil discards them.
	Logger *slog.Logger
	// Plugin, when set, adds its own tools, prompts and resources and
	// answers for the runs they start (plugin.go); with --dev-templates
	// the cli plugs in the conformance suite's fixtures
	// (internal/conformance). nil serves the product's tools only.
	Plugin Plugin
	// Extra are plugins of the product itself that live outside this
	// package because they need more than the engine (the interactive
	// page tools need the browser: internal/pagetools). They only add
	// tools: their Capabilities and RunAnswer are not consulted.
	Extra []Plugin
}

// Server is the browsertask MCP server: one SDK server carrying the seven
// tools, reachable through ServeStdio and HTTPHandler. It is safe for
// concurrent use by any number of sessions.
type Server struct {
	eng   Engine
	log   *slog.Logger
	sdk   *sdk.Server
	tasks *taskLayer
	// plugin is ServerOptions.Plugin (nil without one).
	plugin Plugin
	// servesPrompts is whether the declared capabilities include prompts
	// (only a plugin adds any); without them prompts/* is -32601.
	servesPrompts bool
	// resourceMax is the largest artifact served whole as a resource
	// (MaxResourceArtifactBytes; tests lower it).
	resourceMax int64
	// watchers follow subscribed runs (resource_subscribe.go).
	watchers runWatchers
}

// serverName is the implementation name announced in initialize.
const serverName = "browsertask"

// instructions tell a model how the tools fit together.
const instructions = "browsertask runs browser automation as durable runs. " +
	"Call list_task_templates to see what can be run, run_task_template to start a run " +
	"(mode auto answers with the finished run when it ends quickly, otherwise with a runId to poll), " +
	"get_task_run to poll, cancel_task_run to stop, get_artifact to read large outputs in chunks, " +
	"and get_runtime_profile for the limits. A running run with inputRequest set waits for a person: " +
	"ask your user and pass their answer with answer_task_run; never make one up."

// supportedProtocolVersions are the MCP versions served, newest first.
// 2026-07-28 is stateless (per-request _meta, server/discover) and gets
// the Tasks extension; the older ones keep sessions, initialize and the
// 2025-11-25 Tasks (README, "Protocol versions").
var supportedProtocolVersions = []string{modernVersion, "2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05"}

// ProtocolVersions returns the MCP protocol versions the server negotiates,
// newest first, for the runtime profile.
func ProtocolVersions() []string {
	return append([]string(nil), supportedProtocolVersions...)
}

// NewServer builds the MCP server around eng. It is the one function that
// defines the server for every transport, so stdio and HTTP clients see the
// same tools.
func NewServer(eng Engine, opts ServerOptions) *Server {
	log := opts.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	version := opts.Version
	if version == "" {
		version = "dev"
	}
	s := &Server{eng: eng, log: log, plugin: opts.Plugin, resourceMax: MaxResourceArtifactBytes}
	caps := &sdk.ServerCapabilities{Tools: &sdk.ToolCapabilities{}, Resources: &sdk.ResourceCapabilities{},
		// The Tasks extension; 2025-11-25 clients get capabilities.tasks
		// in initialize instead (tasksMiddleware).
		Extensions: map[string]any{tasksExtension: map[string]any{}}}
	if s.plugin != nil {
		s.plugin.Capabilities(caps)
	}
	s.servesPrompts = caps.Prompts != nil
	s.sdk = sdk.NewServer(
		&sdk.Implementation{Name: serverName, Title: "browsertask", Version: version},
		&sdk.ServerOptions{
			Instructions:              instructions,
			Logger:                    log,
			Capabilities:              caps,
			SupportedProtocolVersions: servedVersions(),
			SubscribeHandler:          func(ctx context.Context, r *sdk.SubscribeRequest) error { return s.subscribe(ctx, r) },
			UnsubscribeHandler:        func(ctx context.Context, r *sdk.UnsubscribeRequest) error { return s.unsubscribe(ctx, r) },
		},
	)
	tools := s.tools()
	for _, t := range tools {
		s.addTool(t)
	}
	s.addResources()
	if s.plugin != nil {
		s.plugin.Install(s.sdk, &PluginHost{s: s})
	}
	for _, p := range opts.Extra {
		p.Install(s.sdk, &PluginHost{s: s})
	}
	if err := s.installTasks(tools); err != nil {
		// Only a broken built-in schema gets here (caught by the tests);
		// the server still serves the tools without Tasks.
		log.Error("tasks layer not installed", "error", err)
	}
	// Added last, so it wraps every other middleware too.
	s.sdk.AddReceivingMiddleware(s.recoverPanics)
	return s
}

// servedVersions intersects our list with what the SDK supports, so a
// future SDK that drops an old version cannot make NewServer panic.
func servedVersions() []string {
	sdkVersions := map[string]bool{}
	for _, v := range sdk.SupportedProtocolVersions() {
		sdkVersions[v] = true
	}
	var out []string
	for _, v := range supportedProtocolVersions {
		if sdkVersions[v] {
			out = append(out, v)
		}
	}
	return out
}

// tools lists the seven v1 tools in contract order.
func (s *Server) tools() []toolDef {
	return []toolDef{
		s.listTaskTemplatesTool(),
		s.runTaskTemplateTool(),
		s.getTaskRunTool(),
		s.listTaskRunsTool(),
		s.cancelTaskRunTool(),
		s.getArtifactTool(),
		s.getRuntimeProfileTool(),
		s.getTaskRunEventsTool(), s.subscribeTaskRunEventsTool(), // v1.1 event log (tool_events.go)
		s.createBrowserSessionTool(), s.listBrowserSessionsTool(), // browser sessions (tool_sessions.go)
		s.closeBrowserSessionTool(), s.exportSessionStateTool(),
		s.answerTaskRunTool(),                       // runs that wait for a person (tool_answer_run.go)
		s.listProfilesTool(), s.signInProfileTool(), // persistent browser profiles (tool_profiles.go)
	}
}

// toolDef is one tool: its metadata, hand-written schemas and handler. The
// handler receives arguments already validated against input.
type toolDef struct {
	name        string
	title       string
	description string
	annotations *sdk.ToolAnnotations
	input       map[string]any
	output      map[string]any
	handle      func(ctx context.Context, req *sdk.CallToolRequest, args json.RawMessage) *sdk.CallToolResult
}
