package engine

import (
	"context"
	"encoding/json"
)

// Store is the persistence the engine needs. The SQLite implementation lives
// in package db; the interface is written so another database could pass the
// same tests. Times are Unix milliseconds supplied by the engine's clock.
// A run's times never go backwards: a writer whose "now" reads earlier than
// the row (taken before it waited for the write lock, or another process's
// clock) writes startedAt, updatedAt and finishedAt no earlier than
// createdAt and the run's previous updatedAt (storetest
// Runs/TimesNeverGoBackwards).
//
// Methods return ErrNotFound for a missing row and ErrConflict when a
// compare-and-set write finds the row in another state.
type Store interface {
	// StreamStore reads checkpoints and writes artifacts a piece at a
	// time (artifact_stream.go).
	StreamStore
	// SessionEventStore keeps the interactive calls on browser sessions
	// (session_events.go).
	SessionEventStore
	// RegisterOwner inserts or replaces this process's owner row.
	RegisterOwner(ctx context.Context, o Owner) error
	// ListOwners returns all owner rows.
	ListOwners(ctx context.Context) ([]Owner, error)
	// ReleaseOwner deletes the owner row and sets lease_expires_at = now on
	// every run it still holds as running, so any process recovers them at once.
	ReleaseOwner(ctx context.Context, ownerID string, now int64) error
	// FailOrphanedSessionRuns fails (with p.Error, terminal timestamps as
	// FinishRun, a "status" event each) the queued runs created before
	// p.OlderThan that are bound to a session whose owner row is gone — its
	// process stopped, and the session's browser context with it, so no
	// process can ever claim them — and closes such sessions created before
	// p.OlderThan. It returns the ids of the failed runs.
	FailOrphanedSessionRuns(ctx context.Context, p FailOrphansParams) ([]string, error)
	// Heartbeat sets the owner's heartbeat_at = p.Now and extends to
	// p.LeaseUntil the lease of each run in p.Held that is still running
	// under p.OwnerID in that attempt — only those: a row the engine no
	// longer executes (its final write failed) must lose its lease. It
	// returns the ids extended; a run the engine executes that is missing
	// from the list was cancelled or recovered elsewhere and must stop.
	Heartbeat(ctx context.Context, p HeartbeatParams) ([]string, error)

	// CreateRun inserts run (status queued) and appends a "created" event.
	// With idem != nil it claims (TemplateID, Key) in the same transaction,
	// race-free: if a live entry (expires_at > idem.Now) holds the key, nothing
	// is inserted and the existing run is returned with deduplicated = true.
	CreateRun(ctx context.Context, run *Run, idem *IdempotencyClaim) (stored *Run, deduplicated bool, err error)
	// GetRun returns the run (expired or not; the engine checks expiry).
	GetRun(ctx context.Context, runID string) (*Run, error)
	// ListRuns returns one page of runs, newest first by createdAt then runId
	// descending, and the filtered total. Terminal runs whose expires_at <= f.Now
	// are excluded.
	ListRuns(ctx context.Context, f RunFilter) ([]*Run, int, error)
	// ClaimRuns, in one write transaction, counts running runs with a live lease
	// (lease_expires_at > c.Now) across all owners and claims up to
	// min(c.Max, c.MaxRunning - count) queued runs, oldest first, that are not
	// bound to another owner's session: status running, owner_id, lease,
	// attempt+1, started_at (first time only), a "status" event.
	ClaimRuns(ctx context.Context, c Claim) ([]*Run, error)
	// SaveProgress updates progress of a run held by h (CAS on status
	// running, owner and attempt). ErrConflict otherwise.
	SaveProgress(ctx context.Context, runID string, h Holder, p Progress, now int64) error
	// AddModelUsage adds u to the model usage of a run held by h (CAS as
	// SaveProgress).
	AddModelUsage(ctx context.Context, runID string, h Holder, u ModelUsage, now int64) error
	// SaveItem upserts an item checkpoint and the run's progress in one
	// transaction (CAS as SaveProgress) and appends an "item" event.
	SaveItem(ctx context.Context, runID string, h Holder, it Item, p Progress, now int64) error
	// ArchiveRuns writes a history row (HistoryRun) for every terminal run
	// with expires_at <= p.Now that has none yet (the runs Purge with the
	// same Now deletes), at most p.Batch (<= 0: 500) per call, and returns
	// how many it wrote.
	ArchiveRuns(ctx context.Context, p ArchiveParams) (int, error)
	// ListHistory returns history rows newest first (createdAt, runId)
	// that have not expired, and how many match before paging.
	ListHistory(ctx context.Context, q HistoryQuery) ([]HistoryRun, int, error)
	// StoppedRuns returns the newest runs (at most 20) of a template
	// version that ended failed or canceled and have not expired, with
	// their inputs, session and count of succeeded items, newest first.
	StoppedRuns(ctx context.Context, q StoppedRunsQuery) ([]StoppedRun, error)
	// AdoptItems copies the succeeded items of run from into run to, held
	// by h (compare-and-set as SaveItem), keeping their indexes, appends an
	// "adopted" event {fromRunId, items} and returns the items copied.
	// Failed items are not copied: the new run does them again.
	AdoptItems(ctx context.Context, from, to string, h Holder, now int64) ([]Item, error)
	// ListItems returns a run's item checkpoints ordered by index.
	ListItems(ctx context.Context, runID string) ([]Item, error)

	// AddQuestion stores a question a run asks; one already stored
	// under the same (runId, requestId) is kept with its answer.
	AddQuestion(ctx context.Context, q Question) error
	// Questions returns a run's questions in the order asked (empty
	// for an unknown run).
	Questions(ctx context.Context, runID string) ([]Question, error)
	// OutstandingQuestions returns every run's unanswered questions that have
	// not expired at now, oldest first.
	OutstandingQuestions(ctx context.Context, now int64) ([]Question, error)
	// SaveAnswer stores the response of an outstanding, unexpired
	// question and reports true; false when it was answered already or
	// has expired. Errors: ErrNotFound for a question never asked.
	SaveAnswer(ctx context.Context, p SaveAnswerParams) (bool, error)
	// FinishRun writes a terminal state for a run held by f.OwnerID in
	// execution f.Attempt (CAS on status running, owner and attempt), sets finished_at and
	// expires_at = max(created_at + ttl_ms, now + f.RunTTLMs), and appends a
	// "status" event. ErrConflict when the CAS fails.
	FinishRun(ctx context.Context, f Finish) error
	// CancelRun moves a queued or running run to canceled with p.Error as its
	// error (CAS), sets cancel_reason, finished_at, expires_at as FinishRun,
	// appends an event, and returns the run as stored after the write.
	// changed is false when the run was already terminal (the run is
	// returned unchanged).
	CancelRun(ctx context.Context, p CancelRunParams) (run *Run, changed bool, err error)
	// KeepCanceled records what a canceled run kept (keep.go) once its
	// execution h stopped: the error's message gets p.Note appended and its
	// details gain p.Details, and a "kept" event is appended. Only a run
	// still canceled and last held by h is changed; otherwise ErrConflict.
	KeepCanceled(ctx context.Context, p KeepParams) error
	// RequeueRun moves a running run held by h back to queued (graceful
	// shutdown of a resumable run): owner cleared, lease cleared.
	RequeueRun(ctx context.Context, runID string, h Holder, now int64) error
	// ExpiredLeases returns running runs whose lease_expires_at <= now.
	ExpiredLeases(ctx context.Context, now int64) ([]*Run, error)
	// RecoverRun applies r to a running run whose owner is r.OwnerID and whose
	// lease expired (CAS); To is queued (resumable), failed or canceled. The
	// run's Crashes count grows by one.
	RecoverRun(ctx context.Context, r Recovery) error

	// PutArtifact stores an artifact and its bytes in one transaction, in
	// chunk rows of at most 256 KiB, and appends an "artifact" event.
	PutArtifact(ctx context.Context, a Artifact, data []byte) error
	// GetArtifact returns an artifact's metadata, including tombstones
	// (Expired = true, no bytes left).
	GetArtifact(ctx context.Context, artifactID string) (*Artifact, error)
	// ReadArtifact returns up to p.Length bytes starting at p.Offset.
	ReadArtifact(ctx context.Context, p ReadArtifactParams) ([]byte, error)

	// AppendEvent appends an event with the next seq of the run.
	AppendEvent(ctx context.Context, runID, typ string, data json.RawMessage, now int64) error
	// ListEvents returns events with seq > p.AfterSeq, at most p.Limit
	// (all when p.Limit <= 0).
	ListEvents(ctx context.Context, p ListEventsParams) ([]Event, error)

	// GetSession returns a live browser session row.
	GetSession(ctx context.Context, sessionID string) (*Session, error)
	// PutSession inserts or replaces a browser session row.
	PutSession(ctx context.Context, s Session) error
	// CloseSession marks a session closed at now (idempotent: a closed
	// session keeps its closedAt) and returns it as stored after the write.
	// ErrNotFound for an unknown session.
	CloseSession(ctx context.Context, sessionID string, now int64) (*Session, error)
	// ListSessions returns the open sessions (closed_at unset), newest
	// first; ownerID "" lists every owner's.
	ListSessions(ctx context.Context, ownerID string) ([]*Session, error)
	// TouchSession sets last_used_at = p.Now and expires_at = p.ExpiresAt of
	// an open session. ErrNotFound when it is unknown or closed.
	TouchSession(ctx context.Context, p TouchSessionParams) error
	// PutLooseArtifact stores an artifact that belongs to no run (a session
	// export) and its bytes, like PutArtifact but without a run event.
	PutLooseArtifact(ctx context.Context, a Artifact, data []byte) error

	// Purge deletes, at most p.Batch rows per transaction: terminal runs
	// with expires_at <= p.Now (with items, events, idempotency keys);
	// artifact bytes past expires_at (the row becomes a tombstone);
	// tombstones older than p.TombstoneBefore. It returns the number of rows
	// removed.
	Purge(ctx context.Context, p PurgeParams) (int, error)
	// Compact runs incremental_vacuum and wal_checkpoint(TRUNCATE).
	Compact(ctx context.Context) error
}

// Owner is a process sharing the database.
type Owner struct {
	ID          string `json:"ownerId"`
	PID         int    `json:"pid"`
	Host        string `json:"host"`
	StartedAt   int64  `json:"startedAt"`
	HeartbeatAt int64  `json:"heartbeatAt"`
	// LiveURL is the base URL of the process's dashboard, where the live
	// views of the runs it executes are served ("" = none).
	LiveURL string `json:"liveUrl,omitempty"`
}

// IdempotencyClaim asks CreateRun to hold (TemplateID, Key) until ExpiresAt.
type IdempotencyClaim struct {
	TemplateID string
	Key        string
	Now        int64
	ExpiresAt  int64
}

// RunFilter selects runs for ListRuns. Empty fields do not filter.
type RunFilter struct {
	Status     RunStatus
	TemplateID string
	SessionID  string
	// Profile keeps the runs on that persistent browser profile.
	Profile string
	Limit   int
	Offset  int
	Now     int64
	// BeforeCreatedAt/BeforeRunID (when BeforeRunID != "") keep only runs
	// with (created_at, id) < (BeforeCreatedAt, BeforeRunID); total still
	// counts every run matching the other filters.
	BeforeCreatedAt int64
	BeforeRunID     string
}

// Claim parameters for ClaimRuns.
type Claim struct {
	OwnerID    string
	Now        int64
	LeaseUntil int64
	MaxRunning int
	Max        int
}

// Holder names one execution of a run: the owner process and the attempt
// number its claim gave the run. Every write an execution makes is a
// compare-and-set on both, so a stale execution (its process was paused
// past the lease and the run was claimed again, even by the same process)
// can write nothing.
type Holder struct {
	OwnerID string
	Attempt int
}

// HeldRun is a run a process executes, in a given attempt (for Heartbeat).
type HeldRun struct {
	RunID   string
	Attempt int
}

// Finish is a terminal write for FinishRun.
type Finish struct {
	RunID    string
	OwnerID  string
	Attempt  int
	Status   RunStatus
	Result   json.RawMessage
	Error    *Error
	Now      int64
	RunTTLMs int64
	// Progress, when set, is written with the final state: the last
	// progress the run recorded, which SetProgress's throttle may not
	// have stored yet.
	Progress *Progress
}

// Recovery is a RecoverRun request.
type Recovery struct {
	RunID    string
	OwnerID  string
	To       RunStatus
	Error    *Error
	Now      int64
	RunTTLMs int64
}

// Artifact is a stored file produced by a run.
type Artifact struct {
	ID        string `json:"artifactId"`
	RunID     string `json:"runId"`
	Name      string `json:"name"`
	MimeType  string `json:"mimeType"`
	Size      int64  `json:"size"`
	CreatedAt int64  `json:"createdAt"`
	ExpiresAt int64  `json:"expiresAt"`
	// Expired marks a tombstone: the bytes are gone.
	Expired bool `json:"expired"`
}

// Session is a browser session row.
type Session struct {
	ID         string `json:"sessionId"`
	OwnerID    string `json:"-"`
	CreatedAt  int64  `json:"createdAt"`
	LastUsedAt int64  `json:"lastUsedAt"`
	ExpiresAt  int64  `json:"expiresAt"`
	ClosedAt   *int64 `json:"closedAt"`
}

// FailOrphansParams is a FailOrphanedSessionRuns request.
type FailOrphansParams struct {
	// Error is the error the failed runs get.
	Error *Error
	Now   int64
	// OlderThan spares runs and sessions created at or after it: a process
	// that is starting may hold a session a moment before its owner row
	// exists.
	OlderThan int64
	// RunTTLMs is the retention after finishing, as in Finish.
	RunTTLMs int64
}

// HeartbeatParams is a Heartbeat request.
type HeartbeatParams struct {
	OwnerID    string
	Now        int64
	LeaseUntil int64
	// Held lists the runs the process executes, each in its attempt.
	Held []HeldRun
}

// CancelRunParams is a CancelRun request.
type CancelRunParams struct {
	RunID  string
	Reason string
	// Error is the canceled run's error.
	Error    *Error
	Now      int64
	RunTTLMs int64
}

// ArchiveParams is an ArchiveRuns request.
type ArchiveParams struct {
	Now int64
	// HistoryTTLMs is how long a history row is kept after the run was
	// forgotten.
	HistoryTTLMs int64
	// Summarize is the one-line summary of a run's stored inputs.
	Summarize func(templateID string, inputs json.RawMessage) string
	Batch     int
}

// HistoryQuery selects ListHistory rows.
type HistoryQuery struct {
	Now           int64
	Limit, Offset int
}

// HistoryRun is what is kept of a run after it was forgotten.
type HistoryRun struct {
	RunID           string    `json:"runId"`
	TemplateID      string    `json:"templateId"`
	TemplateVersion int       `json:"templateVersion"`
	SessionID       string    `json:"sessionId"`
	Status          RunStatus `json:"status"`
	CreatedAt       int64     `json:"createdAt"`
	StartedAt       *int64    `json:"startedAt"`
	FinishedAt      *int64    `json:"finishedAt"`
	// ForgottenAt is when the run itself was deleted (get_task_run has
	// answered RUN_NOT_FOUND since).
	ForgottenAt   int64    `json:"forgottenAt"`
	Progress      Progress `json:"progress"`
	ErrorCode     string   `json:"errorCode,omitempty"`
	ErrorMessage  string   `json:"errorMessage,omitempty"`
	InputsSummary string   `json:"inputsSummary"`
	ArtifactIDs   []string `json:"artifactIds"`
	ExpiresAt     int64    `json:"expiresAt"`
}

// StoppedRunsQuery selects StoppedRuns.
type StoppedRunsQuery struct {
	TemplateID string
	Version    int
	Now        int64
	// Before excludes runs created at or after it (the new run itself).
	Before int64
}

// StoppedRun is one run StoppedRuns found.
type StoppedRun struct {
	RunID       string
	SessionID   string
	OwnsSession bool
	Inputs      json.RawMessage
	// OutputSchema is the run's options.outputSchema (nil when none).
	OutputSchema json.RawMessage
	// Items counts its succeeded items, the ones a new run adopts.
	Items int
}

// KeepParams is a KeepCanceled request.
type KeepParams struct {
	RunID   string
	Holder  Holder
	Note    string
	Details map[string]any
	Now     int64
}

// ReadArtifactParams selects the bytes ReadArtifact returns.
type ReadArtifactParams struct {
	ArtifactID string
	Offset     int64
	// Length is the most bytes returned; <= 0 returns none.
	Length int64
}

// ListEventsParams selects the events ListEvents returns.
type ListEventsParams struct {
	RunID    string
	AfterSeq int64
	// Limit is the most events returned; <= 0 returns all.
	Limit int
}

// TouchSessionParams is a TouchSession request.
type TouchSessionParams struct {
	SessionID string
	Now       int64
	ExpiresAt int64
}

// PurgeParams is a Purge request.
type PurgeParams struct {
	Now int64
	// HistoryBefore removes history rows whose expires_at is before it
	// (0: none).
	HistoryBefore int64
	// ArchivedOnly deletes only the expired runs that have a history row
	// (ArchiveRuns), with their items, events and idempotency keys.
	ArchivedOnly bool
	// TombstoneBefore is the expiry before which artifact tombstones go.
	TombstoneBefore int64
	// Batch is the most rows deleted per transaction; <= 0 means the
	// store's default.
	Batch int
}
