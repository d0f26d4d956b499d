package engine

import "time"

// Config holds every limit of the runtime profile plus internal timings.
// Zero values are replaced by the defaults of DefaultConfig.
type Config struct {
	MaxConcurrentRuns    int
	MaxURLs              int
	MaxTabsPerSession    int
	SyncTimeoutMs        int64
	AsyncTimeoutMs       int64
	ArtifactMaxChunkSize int64
	ArtifactTTLMs        int64
	RunTTLMs             int64
	AutoSyncBudgetMs     int64
	TaskPollIntervalMs   int64
	MaxTaskTTLMs         int64
	// SessionIdleTTLMs closes a named browser session after this long
	// without use (default 30 min).
	SessionIdleTTLMs int64
	TrustLevel       string // "local" or "restricted"
	IsRemote         bool
	AllowFileURLs    bool
	// MaxAttempts is how many executions of a run may end with their
	// process gone (crash, kill -9, out of memory) before the run fails
	// with EXECUTION_ERROR "interrupted N times" instead of being
	// recovered again (default 3).
	MaxAttempts int
	// InputTimeoutMs is how long a run waits for an answer to a question
	// it asked (default 10 min) before failing with RUN_TIMEOUT, details
	// reason "no answer".
	InputTimeoutMs int64
	// MaxInlineBytes is the budget of a tool answer (default 64 KiB): an
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

// DefaultConfig returns the contract defaults.
func DefaultConfig() Config {
	return Config{
		MaxConcurrentRuns:    5,
		MaxURLs:              1000,
		MaxTabsPerSession:    20,
		SyncTimeoutMs:        300000,
		AsyncTimeoutMs:       600000,
		ArtifactMaxChunkSize: 262144,
		ArtifactTTLMs:        86400000,
		RunTTLMs:             1800000,
		AutoSyncBudgetMs:     20000,
		TaskPollIntervalMs:   1000,
		MaxTaskTTLMs:         86400000,
		SessionIdleTTLMs:     1800000,
		TrustLevel:           "local",
		MaxAttempts:          3,
		InputTimeoutMs:       DefaultInputTimeoutMs,
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
	orDefault(&c.SyncTimeoutMs, d.SyncTimeoutMs)
	orDefault(&c.AsyncTimeoutMs, d.AsyncTimeoutMs)
	orDefault(&c.ArtifactMaxChunkSize, d.ArtifactMaxChunkSize)
	orDefault(&c.ArtifactTTLMs, d.ArtifactTTLMs)
	orDefault(&c.RunTTLMs, d.RunTTLMs)
	orDefault(&c.AutoSyncBudgetMs, d.AutoSyncBudgetMs)
	orDefault(&c.TaskPollIntervalMs, d.TaskPollIntervalMs)
	orDefault(&c.MaxTaskTTLMs, d.MaxTaskTTLMs)
	orDefault(&c.SessionIdleTTLMs, d.SessionIdleTTLMs)
	orDefault(&c.InputTimeoutMs, d.InputTimeoutMs)
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
	// MaxInlineBytes is the budget of a tool answer (v1.1).
	MaxInlineBytes int64 `json:"maxInlineBytes"`
	// HistoryTTLMs is how long the history of a forgotten run is kept
	// (v1.1).
	HistoryTTLMs int64 `json:"historyTtlMs"`
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
