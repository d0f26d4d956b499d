package engine

import "time"

// Config holds every limit of the runtime profile plus internal timings.
// Zero values are replaced by the defaults of DefaultConfig. Every length
// of time is a time.Duration: milliseconds exist only at the wire (the
// profile's …Ms fields, the CLI's …-ms flags), converted where they are
// read or written, so no caller multiplies by time.Millisecond.
type Config struct {
	MaxConcurrentRuns int
	MaxURLs           int
	MaxTabsPerSession int
	// SyncTimeout is the default and largest running time of a sync run
	// (syncTimeoutMs in the profile).
	SyncTimeout time.Duration
	// AsyncTimeout is the default running time of an async or auto run
	// (asyncTimeoutMs).
	AsyncTimeout         time.Duration
	ArtifactMaxChunkSize int64
	// ArtifactTTL is how long an artifact is kept (artifactTtlMs).
	ArtifactTTL time.Duration
	// RunTTL is how long a finished run and its idempotency key are kept
	// (runTtlMs).
	RunTTL time.Duration
	// AutoSyncBudget is how long mode auto waits for the end before
	// answering async (autoSyncBudgetMs; DefaultAutoSyncBudget).
	AutoSyncBudget time.Duration
	// TaskPollInterval is the pollInterval suggested to task clients
	// (taskPollIntervalMs).
	TaskPollInterval time.Duration
	// MaxTaskTTL is the largest task ttl granted (maxTaskTtlMs).
	MaxTaskTTL time.Duration
	// SessionIdleTTL closes a named browser session after this long
	// without use (default 30 min; sessionIdleTtlMs).
	SessionIdleTTL time.Duration
	TrustLevel     string // "local" or "restricted"
	// UserAgent is the User-Agent page-visiting runs send when their
	// inputs name none (--user-agent; empty: the browser's own, and
	// browsertask's over HTTP).
	UserAgent     string
	IsRemote      bool
	AllowFileURLs bool
	// ProfilesDir holds the browser profiles' directories (the database's
	// directory + /profiles; empty = profiles unavailable).
	ProfilesDir string
	// AllowProfilesRestricted lets runs use a profile under trust
	// restricted (--allow-profiles-restricted): a profile carries a
	// person's signed-in sites, which restricted refuses by default.
	AllowProfilesRestricted bool
	// MaxAttempts is how many executions of a run may end with their
	// process gone (crash, kill -9, out of memory) before the run fails
	// with EXECUTION_ERROR "interrupted N times" instead of being
	// recovered again (default 3).
	MaxAttempts int
	// QuestionTimeout is how long a run waits for an answer to a question
	// it asked (default 10 min) before failing with RUN_TIMEOUT, details
	// reason "no answer" (inputTimeoutMs).
	QuestionTimeout time.Duration
	// MaxInlineBytes is the budget of a tool reply (default 64 KiB): an
	// inline result larger than it is cut to whole items (answers.go), a
	// longer result with no artifact of its own is also kept whole as
	// result.json.
	MaxInlineBytes int64
	// HistoryTTL is how long a history row of a forgotten run is kept
	// (default 7 days; history.go).
	HistoryTTL time.Duration

	// HeartbeatInterval is how often leases are extended and remote cancels
	// noticed.
	HeartbeatInterval time.Duration
	// LeaseDuration is how long a lease lives without a heartbeat.
	LeaseDuration time.Duration
	// PollInterval is how often queued runs are looked for when nothing woke
	// the scheduler.
	PollInterval time.Duration
	// RecoveryInterval is how often expired leases are recovered.
	RecoveryInterval time.Duration
	// JanitorInterval is how often expired rows are purged.
	JanitorInterval time.Duration
	// ShutdownGrace is how long running runs may continue after shutdown starts.
	ShutdownGrace time.Duration
	// TombstoneTTL is how long expired artifacts stay distinguishable.
	TombstoneTTL time.Duration
}

// DefaultAutoSyncBudget is how long mode auto waits for a run to end
// before answering with the async handle, when --auto-sync-budget-ms does
// not say (the contract's 20 s). The profile's autoSyncBudgetMs reports
// the effective value; mcp reads that, never a number of its own.
const DefaultAutoSyncBudget = 20 * time.Second

// DefaultConfig returns the contract defaults.
func DefaultConfig() Config {
	return Config{
		MaxConcurrentRuns:    5,
		MaxURLs:              1000,
		MaxTabsPerSession:    20,
		SyncTimeout:          5 * time.Minute,
		AsyncTimeout:         10 * time.Minute,
		ArtifactMaxChunkSize: 262144,
		ArtifactTTL:          24 * time.Hour,
		RunTTL:               30 * time.Minute,
		AutoSyncBudget:       DefaultAutoSyncBudget,
		TaskPollInterval:     time.Second,
		MaxTaskTTL:           24 * time.Hour,
		SessionIdleTTL:       30 * time.Minute,
		TrustLevel:           "local",
		MaxAttempts:          3,
		QuestionTimeout:      DefaultQuestionTimeout,
		MaxInlineBytes:       DefaultMaxInlineBytes,
		HistoryTTL:           7 * 24 * time.Hour,
		HeartbeatInterval:    time.Second,
		LeaseDuration:        15 * time.Second,
		PollInterval:         500 * time.Millisecond,
		RecoveryInterval:     2 * time.Second,
		JanitorInterval:      time.Minute,
		ShutdownGrace:        10 * time.Second,
		TombstoneTTL:         7 * 24 * time.Hour,
	}
}

// withDefaults fills zero fields from DefaultConfig (MaxAttempts also
// when negative).
func (c Config) withDefaults() Config {
	d := DefaultConfig()
	orDefault(&c.MaxConcurrentRuns, d.MaxConcurrentRuns)
	orDefault(&c.MaxURLs, d.MaxURLs)
	if c.MaxAttempts <= 0 {
		c.MaxAttempts = d.MaxAttempts
	}
	orDefault(&c.MaxTabsPerSession, d.MaxTabsPerSession)
	orDefault(&c.SyncTimeout, d.SyncTimeout)
	orDefault(&c.AsyncTimeout, d.AsyncTimeout)
	orDefault(&c.ArtifactMaxChunkSize, d.ArtifactMaxChunkSize)
	orDefault(&c.ArtifactTTL, d.ArtifactTTL)
	orDefault(&c.RunTTL, d.RunTTL)
	orDefault(&c.AutoSyncBudget, d.AutoSyncBudget)
	orDefault(&c.TaskPollInterval, d.TaskPollInterval)
	orDefault(&c.MaxTaskTTL, d.MaxTaskTTL)
	orDefault(&c.SessionIdleTTL, d.SessionIdleTTL)
	orDefault(&c.QuestionTimeout, d.QuestionTimeout)
	orDefault(&c.MaxInlineBytes, d.MaxInlineBytes)
	orDefault(&c.HistoryTTL, d.HistoryTTL)
	orDefault(&c.TrustLevel, d.TrustLevel)
	orDefault(&c.HeartbeatInterval, d.HeartbeatInterval)
	orDefault(&c.LeaseDuration, d.LeaseDuration)
	orDefault(&c.PollInterval, d.PollInterval)
	orDefault(&c.RecoveryInterval, d.RecoveryInterval)
	orDefault(&c.JanitorInterval, d.JanitorInterval)
	orDefault(&c.ShutdownGrace, d.ShutdownGrace)
	orDefault(&c.TombstoneTTL, d.TombstoneTTL)
	return c
}

// orDefault sets *v to def when it is the zero value.
func orDefault[T comparable](v *T, def T) {
	var zero T
	if *v == zero {
		*v = def
	}
}

// Profile is get_runtime_profile's answer.
type Profile struct {
	MaxConcurrentRuns     int          `json:"maxConcurrentRuns"`
	MaxURLs               int          `json:"maxUrls"`
	MaxTabsPerSession     int          `json:"maxTabsPerSession"`
	SyncTimeoutMs         int64        `json:"syncTimeoutMs"`
	AsyncTimeoutMs        int64        `json:"asyncTimeoutMs"`
	ArtifactMaxChunkSize  int64        `json:"artifactMaxChunkSize"`
	ArtifactTTLMs         int64        `json:"artifactTtlMs"`
	RunTTLMs              int64        `json:"runTtlMs"`
	SupportedModes        []Mode       `json:"supportedModes"`
	TrustLevel            string       `json:"trustLevel"`
	IsRemote              bool         `json:"isRemote"`
	Version               string       `json:"version"`
	ProtocolVersions      []string     `json:"protocolVersions"`
	AutoSyncBudgetMs      int64        `json:"autoSyncBudgetMs"`
	TaskPollIntervalMs    int64        `json:"taskPollIntervalMs"`
	MaxTaskTTLMs          int64        `json:"maxTaskTtlMs"`
	Browser               *BrowserInfo `json:"browser"`
	ArtifactTextMimeTypes []string     `json:"artifactTextMimeTypes"`
	ArtifactEncodingRule  string       `json:"artifactEncodingRule"`
	AllowFileURLs         bool         `json:"allowFileUrls"`
	SessionIdleTTLMs      int64        `json:"sessionIdleTtlMs"`
	// MaxAttempts is how many crashed executions a run survives (v1.1).
	MaxAttempts int `json:"maxAttempts"`
	// InputTimeoutMs is how long a run waits for an answer (v1.1).
	InputTimeoutMs int64 `json:"inputTimeoutMs"`
	// MaxInlineBytes is the budget of a tool reply (v1.1).
	MaxInlineBytes int64 `json:"maxInlineBytes"`
	// HistoryTTLMs is how long the history of a forgotten run is kept
	// (v1.1).
	HistoryTTLMs int64 `json:"historyTtlMs"`
	// UserAgent is the server's default User-Agent for page requests
	// (--user-agent), absent when the clients' own are sent (v1.1).
	UserAgent string `json:"userAgent,omitempty"`
}

// BrowserInfo describes the browser in the profile.
type BrowserInfo struct {
	Mode    string `json:"mode"` // "local" or "remote"
	Product string `json:"product,omitempty"`
	Error   string `json:"error,omitempty"`
}

// BrowserDescriber reports the browser for the profile without launching it.
type BrowserDescriber interface {
	Describe() BrowserInfo
}
