package engine

import (
	"context"
	"encoding/json"
	"log/slog"
)

// SubmitRequest is a run_task_template submission.
type SubmitRequest struct {
	// TemplateID is "id" or "id@N".
	TemplateID string
	// SessionID names an existing live session; empty = a fresh owned session.
	SessionID string
	// Inputs are validated against the template's input schema (nil = {}).
	Inputs json.RawMessage
	// Mode is the requested mode ("" = auto).
	Mode Mode
	// TimeoutMs bounds the running phase; 0 = the mode's default.
	TimeoutMs int64
	// IdempotencyKey deduplicates submissions within the run TTL.
	IdempotencyKey string
	// TaskTTLMs is a task's requested ttl (0 = not a task); capped and floored.
	TaskTTLMs int64
}

// SubmitResult is the run created (or found through the idempotency key).
type SubmitResult struct {
	Run          *Run
	Deduplicated bool
	// InputsMatch, when Deduplicated, says whether the request's inputs
	// (secrets masked, as stored) equal the existing run's: false means an
	// idempotency key was reused for different work.
	InputsMatch bool
}

// ListQuery is list_task_runs' filter and page. Limit 0 means 50.
type ListQuery struct {
	Status     string
	TemplateID string
	SessionID  string
	Limit      int
	Offset     int
	// BeforeCreatedAt and BeforeRunID, when BeforeRunID is set, select only
	// runs strictly after that position in the list order (createdAt desc,
	// runId desc): keyset paging that neither repeats nor skips runs while new
	// ones are created.
	BeforeCreatedAt int64
	BeforeRunID     string
}

// Options wire an Engine.
type Options struct {
	Store     Store
	Templates []Template
	Sessions  SessionCloser    // may be nil when no template needs a browser
	Browser   BrowserDescriber // may be nil
	Config    Config
	Logger    *slog.Logger
	// Now returns the current time in Unix ms; nil = the wall clock.
	Now func() int64
	// Version is the binary's version for the profile.
	Version string
	// ProtocolVersions are the MCP versions served, for the profile.
	ProtocolVersions []string
}

// Submit validates r and creates a queued run, or returns the existing run
// for a live idempotency key. It does not wait. Errors: INVALID_PARAMETER,
// TEMPLATE_NOT_FOUND, TEMPLATE_VERSION_UNSUPPORTED, SESSION_NOT_FOUND,
// TRUST_LEVEL_NOT_ALLOWED.
func (e *Engine) Submit(ctx context.Context, r SubmitRequest) (*SubmitResult, error) {
	return e.submit(ctx, r)
}

// Get returns a run. Errors: RUN_NOT_FOUND (unknown or expired).
func (e *Engine) Get(ctx context.Context, runID string) (*Run, error) { return e.get(ctx, runID) }

// List returns a page of runs newest first. Errors: INVALID_PARAMETER.
func (e *Engine) List(ctx context.Context, q ListQuery) (*RunList, error) { return e.list(ctx, q) }

// Cancel cancels a queued or running run; the final state is written before
// it returns. A terminal run gives Success=false. Errors: RUN_NOT_FOUND.
func (e *Engine) Cancel(ctx context.Context, runID, reason string) (*CancelResult, error) {
	return e.cancel(ctx, runID, reason)
}

// Wait blocks until the run is terminal and returns it. onChange (may be nil)
// is called when status or progress changes. If ctx ends first, Wait returns
// ctx's error; the run goes on.
func (e *Engine) Wait(ctx context.Context, runID string, onChange func(*Run)) (*Run, error) {
	return e.wait(ctx, runID, onChange)
}

// ReadArtifact returns one chunk of an artifact. length <= 0 means
// artifactMaxChunkSize; larger values are clamped. Errors: ARTIFACT_NOT_FOUND,
// ARTIFACT_EXPIRED, INVALID_PARAMETER (offset past the end or inside a
// UTF-8 character).
func (e *Engine) ReadArtifact(ctx context.Context, artifactID string, offset, length int64) (*ArtifactChunk, error) {
	return e.readArtifact(ctx, artifactID, offset, length)
}

// Events returns a run's events after afterSeq. Errors: RUN_NOT_FOUND.
func (e *Engine) Events(ctx context.Context, runID string, afterSeq int64, limit int) ([]Event, error) {
	if _, err := e.get(ctx, runID); err != nil {
		return nil, err
	}
	return e.store.ListEvents(ctx, ListEventsParams{RunID: runID, AfterSeq: afterSeq, Limit: limit})
}
