package cli

import (
	"fmt"
	"time"

	"github.com/browsertask/browsertask/engine"
)

// msValues are the …-ms flags as given on the command line or in
// BROWSERTASK_* variables. The contract and the README name these flags in
// milliseconds; engine.Config holds time.Durations, so the unit changes
// here and nowhere else.
type msValues struct {
	syncTimeout, asyncTimeout, artifactTTL, runTTL, autoSyncBudget int64
	taskPollInterval, maxTaskTTL, sessionIdleTTL, inputTimeout     int64
	lease, heartbeat, grace, poll, recovery, janitor               int64
}

// msFlag ties one …-ms flag to the engine.Config duration it sets.
// positive means the flag refuses 0; the others take 0 as "the default"
// (engine.Config fills zero fields), which is what they did when the
// engine held milliseconds.
type msFlag struct {
	name     string
	v        int64
	dst      *time.Duration
	positive bool
}

// flags lists every …-ms flag with its destination in e.
func (m *msValues) flags(e *engine.Config) []msFlag {
	return []msFlag{
		{"sync-timeout-ms", m.syncTimeout, &e.SyncTimeout, false},
		{"async-timeout-ms", m.asyncTimeout, &e.AsyncTimeout, false},
		{"artifact-ttl-ms", m.artifactTTL, &e.ArtifactTTL, false},
		{"run-ttl-ms", m.runTTL, &e.RunTTL, false},
		{"auto-sync-budget-ms", m.autoSyncBudget, &e.AutoSyncBudget, false},
		{"task-poll-interval-ms", m.taskPollInterval, &e.TaskPollInterval, false},
		{"max-task-ttl-ms", m.maxTaskTTL, &e.MaxTaskTTL, false},
		{"session-idle-ttl-ms", m.sessionIdleTTL, &e.SessionIdleTTL, false},
		{"input-timeout-ms", m.inputTimeout, &e.QuestionTimeout, true},
		{"lease-ms", m.lease, &e.LeaseDuration, true},
		{"heartbeat-ms", m.heartbeat, &e.HeartbeatInterval, true},
		{"shutdown-grace-ms", m.grace, &e.ShutdownGrace, true},
		{"poll-ms", m.poll, &e.PollInterval, true},
		{"recovery-interval-ms", m.recovery, &e.RecoveryInterval, true},
		{"janitor-interval-ms", m.janitor, &e.JanitorInterval, true},
	}
}

// into converts every …-ms flag into its engine.Config duration. A
// negative value is refused for every flag (a negative time would make
// every run time out, or expire everything at once, instead of meaning
// anything); the flags that need a positive value also refuse 0. Errors
// name the flag and the fix.
func (m *msValues) into(e *engine.Config) error {
	for _, f := range m.flags(e) {
		switch {
		case f.positive && f.v < 1:
			return fmt.Errorf("--%s must be >= 1 (milliseconds), got %d", f.name, f.v)
		case f.v < 0:
			return fmt.Errorf("--%s must be >= 0 (milliseconds; 0 keeps the default), got %d", f.name, f.v)
		}
		*f.dst = time.Duration(f.v) * time.Millisecond
	}
	return nil
}
