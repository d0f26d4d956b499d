package engine

import (
	"context"
	"encoding/json"
	"log/slog"
)

// Template is one kind of browser job. Adding a template means a type in
// templates/ implementing this interface (its schema, check and run may
// each take a file named after it, as batch_extract_*.go do), listed in
// templates.All, plus its tests and fixture pages.
type Template interface {
	// Info describes the template for list_task_templates and validation.
	Info() TemplateInfo
	// Check validates inputs beyond the JSON Schema (URL policy, limits that
	// depend on the profile). It returns an INVALID_PARAMETER or
	// TRUST_LEVEL_NOT_ALLOWED *Error naming the field. Inputs already passed
	// the schema.
	Check(inputs json.RawMessage, p Profile) error
	// Run does the work. It must return promptly once ctx is done. A returned
	// *Error fails the run with that code; any other error is EXECUTION_ERROR.
	Run(ctx context.Context, env Env) (*Outcome, error)
}

// TemplateInfo is the description list_task_templates returns.
type TemplateInfo struct {
	TemplateID         string            `json:"templateId"`
	Version            int               `json:"version"`
	Versions           []int             `json:"versions"`
	Title              string            `json:"title"`
	Description        string            `json:"description"`
	InputSchema        json.RawMessage   `json:"inputSchema,omitempty"`
	ResultSchema       json.RawMessage   `json:"resultSchema,omitempty"`
	TrustLevel         string            `json:"trustLevel"` // "local" or "any"
	Resumable          bool              `json:"resumable"`
	EstimatedStepsHint string            `json:"estimatedStepsHint"`
	Examples           []json.RawMessage `json:"examples"`
	// NeedsBrowser is false for templates that never touch the browser.
	NeedsBrowser bool `json:"-"`
	// ContinuesEarlierRuns says a resubmission continues from the
	// checkpoints of the latest run with the same inputs that stopped
	// early (adopt.go): a resumable template whose item outputs hold
	// everything it reports (no artifacts of their own).
	ContinuesEarlierRuns bool `json:"-"`
	// UsesOutputSchema says the template needs options.outputSchema (the
	// agent path of the v1 contract): submitting without one is
	// INVALID_PARAMETER naming it, and the schema must be one the template
	// accepts (its OutputSchemaChecker, else any valid JSON Schema
	// 2020-12). Other templates accept and ignore it.
	UsesOutputSchema bool `json:"usesOutputSchema,omitempty"`
	// RequiresSession mirrors SessionRequirer for those who only see the
	// info (the CLI's example command line opens a session for it).
	RequiresSession bool `json:"-"`
	// RequiresProfile mirrors ProfileRequirer for those who only see the
	// info (the CLI's example command line).
	RequiresProfile bool `json:"-"`
}

// Outcome is what a template's Run returns on success.
type Outcome struct {
	// Result is the run's result (any JSON-encodable value).
	Result any
	// Partial marks partial_success: some items failed, the result lists them.
	Partial bool
}

// Env is what the engine gives a running template.
type Env interface {
	// ItemStreamer reads the run's checkpoints back one at a time and
	// writes an artifact as it is produced (artifact_stream.go).
	ItemStreamer
	// RunID is the run being executed.
	RunID() string
	// SessionID names the browser session the run uses.
	SessionID() string
	// BrowserProfile names the persistent browser profile the run uses
	// ("" = none): its browser, not an incognito context, loads the pages.
	BrowserProfile() string
	// Inputs are the validated inputs.
	Inputs() json.RawMessage
	// OutputSchema is the run's options.outputSchema, compacted, when the
	// template uses it (TemplateInfo.UsesOutputSchema); nil otherwise.
	OutputSchema() json.RawMessage
	// Profile is the server's runtime profile.
	Profile() Profile
	// FinishedItems returns the item checkpoints of earlier attempts, by Item.Key.
	FinishedItems() map[string]Item
	// Checkpoint records a finished item together with the run's progress.
	// An error means the run is no longer ours (cancelled elsewhere); stop.
	Checkpoint(ctx context.Context, it Item, p Progress) error
	// SetProgress records progress without an item (throttled by the engine).
	SetProgress(p Progress)
	// PutArtifact stores a file for the run and returns its artifactId.
	PutArtifact(ctx context.Context, name, mimeType string, data []byte) (string, error)
	// Logger logs to stderr with the run id attached.
	Logger() *slog.Logger
	// Ask stores a question for a person or the calling client and waits
	// for the answer (engine/ask.go).
	Ask(ctx context.Context, q Question) (json.RawMessage, error)
	// ClientCanSample reports whether the client that submitted the run
	// declared MCP sampling: a QuestionMCP question whose request is
	// sampling/createMessage reaches its model.
	ClientCanSample() bool
	// CountModelUsage adds what one question to a model cost to the run's
	// metrics (kept over all attempts).
	CountModelUsage(u ModelUsage)
}

// SessionCloser closes a browser session when a run that owns it ends.
type SessionCloser interface {
	CloseSession(ctx context.Context, sessionID string) error
}
