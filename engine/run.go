package engine

import "encoding/json"

// Mode is how run_task_template answers: wait for the end, return at once, or
// let the server decide within autoSyncBudgetMs.
type Mode string

// The three submission modes.
const (
	ModeSync  Mode = "sync"
	ModeAsync Mode = "async"
	ModeAuto  Mode = "auto"
)

// Progress is a run's progress counters.
type Progress struct {
	DoneSteps   int    `json:"doneSteps"`
	TotalSteps  int    `json:"totalSteps"`
	FailedSteps int    `json:"failedSteps"`
	Message     string `json:"message,omitempty"`
}

// Metrics are a run's timings in milliseconds and, for a run that asked a
// model (extract_structured), what that cost over all its attempts. The
// model figures are optional fields (v1 adds only optional fields): absent
// while the run asked no model.
type Metrics struct {
	ElapsedMs int64 `json:"elapsedMs"`
	QueuedMs  int64 `json:"queuedMs"`
	// ModelCalls counts the questions answered by a model.
	ModelCalls int64 `json:"modelCalls,omitempty"`
	// PromptTokens and CompletionTokens are the token counts the model
	// reported (a client's sampling answer reports none: its calls are
	// counted, its tokens are not).
	PromptTokens     int64 `json:"promptTokens,omitempty"`
	CompletionTokens int64 `json:"completionTokens,omitempty"`
}

// ModelUsage is what a run's questions to a model cost.
type ModelUsage struct {
	Calls, PromptTokens, CompletionTokens int64
}

// Run is the contract's Run object plus the bookkeeping fields the engine and
// the store need (those are not serialised).
type Run struct {
	RunID           string `json:"runId"`
	TemplateID      string `json:"templateId"`
	TemplateVersion int    `json:"templateVersion"`
	SessionID       string `json:"sessionId"`
	OwnsSession     bool   `json:"ownsSession"`
	// Profile names the persistent browser profile the run uses ("" =
	// none: an incognito session).
	Profile     string          `json:"profile,omitempty"`
	Status      RunStatus       `json:"status"`
	Mode        Mode            `json:"mode"`
	Progress    Progress        `json:"progress"`
	Metrics     Metrics         `json:"metrics"`
	Result      json.RawMessage `json:"result"`
	Error       *Error          `json:"error"`
	ArtifactIDs []string        `json:"artifactIds"`
	CreatedAt   int64           `json:"createdAt"`
	UpdatedAt   int64           `json:"updatedAt"`
	StartedAt   *int64          `json:"startedAt"`
	FinishedAt  *int64          `json:"finishedAt"`
	ExpiresAt   int64           `json:"expiresAt"`
	// Question is the question a running run waits on (nil otherwise):
	// the run stays "running" while it waits (input.go).
	Question *WaitingQuestion `json:"inputRequest"`

	// Inputs are the validated template inputs, secrets already masked only
	// in what is shown (the stored copy keeps what the template needs).
	Inputs json.RawMessage `json:"-"`
	// OutputSchema is options.outputSchema, kept only for templates that
	// use it (TemplateInfo.UsesOutputSchema); nil otherwise.
	OutputSchema json.RawMessage `json:"-"`
	// ClientSampling records that the client that submitted the run
	// declared MCP sampling: a template may ask its model
	// (sampling/createMessage), as an input request of the run.
	ClientSampling bool `json:"-"`
	// ModelUsage adds up the run's questions to a model (Metrics shows it).
	ModelUsage ModelUsage `json:"-"`
	// TimeoutMs bounds the running phase.
	TimeoutMs int64 `json:"-"`
	// TTLMs is the retention counted from creation (runTtlMs or a task's ttl).
	TTLMs int64 `json:"-"`
	// OwnerID is the process currently running it ("" when queued).
	OwnerID string `json:"-"`
	// SessionOwnerID restricts claiming to the process owning the session.
	SessionOwnerID string `json:"-"`
	// LeaseExpiresAt is when the owner's lease ends unless heartbeated.
	LeaseExpiresAt int64 `json:"-"`
	// Attempt counts executions (1 on first claim, +1 per recovery).
	Attempt int `json:"-"`
	// Crashes counts executions that ended with their process gone (the
	// lease expired and another process recovered the run).
	Crashes int `json:"-"`
	// IdempotencyKey is the submission's key, if any.
	IdempotencyKey string `json:"-"`
	// CancelReason is the reason given to cancel_task_run.
	CancelReason string `json:"-"`
}

// Item is a checkpoint of one unit of work inside a run (a URL, a step). A
// resumable template skips items already checkpointed by an earlier attempt.
type Item struct {
	Index  int             `json:"index"`
	Key    string          `json:"key"`
	Status string          `json:"status"` // "succeeded" or "failed"
	Output json.RawMessage `json:"output,omitempty"`
	Error  *Error          `json:"error,omitempty"`
}

// Item statuses.
const (
	ItemSucceeded = "succeeded"
	ItemFailed    = "failed"
)

// Event is one entry of a run's event log.
type Event struct {
	RunID string          `json:"runId"`
	Seq   int64           `json:"seq"`
	At    int64           `json:"at"`
	Type  string          `json:"type"`
	Data  json.RawMessage `json:"data,omitempty"`
}

// CancelResult is cancel_task_run's answer.
type CancelResult struct {
	Success bool      `json:"success"`
	RunID   string    `json:"runId"`
	Status  RunStatus `json:"status"`
	Reason  string    `json:"reason,omitempty"`
}

// RunList is list_task_runs' answer.
type RunList struct {
	Runs   []*Run `json:"runs"`
	Total  int    `json:"total"`
	Limit  int    `json:"limit"`
	Offset int    `json:"offset"`
}
