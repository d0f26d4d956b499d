package cli

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/browsertask/browsertask/db"
	"github.com/browsertask/browsertask/engine"
)

// profileOf is the runtime profile an engine built from c reports.
func profileOf(t *testing.T, c engine.Config) engine.Profile {
	t.Helper()
	store, err := db.Open(context.Background(), filepath.Join(t.TempDir(), "p.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { store.Close() })
	eng, err := engine.New(engine.Options{Store: store, Config: c})
	if err != nil {
		t.Fatal(err)
	}
	return eng.Profile()
}

// TestMsFlagsBecomeDurations: every …-ms flag keeps its name and its
// millisecond value at the command line and in BROWSERTASK_* variables,
// and lands in engine.Config as the same length of time; the profile
// reports it in milliseconds again, unchanged.
func TestMsFlagsBecomeDurations(t *testing.T) {
	env := func(k string) string {
		if k == "BROWSERTASK_RUN_TTL_MS" {
			return "90000"
		}
		return ""
	}
	args := []string{"--sync-timeout-ms", "1234", "--async-timeout-ms", "2345", "--artifact-ttl-ms", "3456",
		"--auto-sync-budget-ms", "1500", "--task-poll-interval-ms", "250", "--max-task-ttl-ms", "7200000",
		"--session-idle-ttl-ms", "60000", "--input-timeout-ms", "5000", "--lease-ms", "4000",
		"--heartbeat-ms", "700", "--shutdown-grace-ms", "800", "--poll-ms", "90",
		"--recovery-interval-ms", "1100", "--janitor-interval-ms", "120000"}
	c, err := parseFlags("serve", args, env, nil)
	if err != nil {
		t.Fatal(err)
	}
	ms := time.Millisecond
	got := c.engine
	want := map[string][2]time.Duration{
		"SyncTimeout":       {got.SyncTimeout, 1234 * ms},
		"AsyncTimeout":      {got.AsyncTimeout, 2345 * ms},
		"ArtifactTTL":       {got.ArtifactTTL, 3456 * ms},
		"RunTTL":            {got.RunTTL, 90 * time.Second},
		"AutoSyncBudget":    {got.AutoSyncBudget, 1500 * ms},
		"TaskPollInterval":  {got.TaskPollInterval, 250 * ms},
		"MaxTaskTTL":        {got.MaxTaskTTL, 2 * time.Hour},
		"SessionIdleTTL":    {got.SessionIdleTTL, time.Minute},
		"InputTimeout":      {got.QuestionTimeout, 5 * time.Second},
		"LeaseDuration":     {got.LeaseDuration, 4 * time.Second},
		"HeartbeatInterval": {got.HeartbeatInterval, 700 * ms},
		"ShutdownGrace":     {got.ShutdownGrace, 800 * ms},
		"PollInterval":      {got.PollInterval, 90 * ms},
		"RecoveryInterval":  {got.RecoveryInterval, 1100 * ms},
		"JanitorInterval":   {got.JanitorInterval, 2 * time.Minute},
	}
	for name, gw := range want {
		if gw[0] != gw[1] {
			t.Errorf("%s = %v, want %v", name, gw[0], gw[1])
		}
	}
	p := profileOf(t, c.engine)
	if p.SyncTimeoutMs != 1234 || p.AsyncTimeoutMs != 2345 || p.ArtifactTTLMs != 3456 || p.RunTTLMs != 90000 ||
		p.AutoSyncBudgetMs != 1500 || p.TaskPollIntervalMs != 250 || p.MaxTaskTTLMs != 7200000 ||
		p.SessionIdleTTLMs != 60000 || p.InputTimeoutMs != 5000 {
		t.Errorf("profile does not report the flags' milliseconds: %+v", p)
	}
}

// TestMsFlagsDefaultsAndRefusals: without flags the profile states the
// contract's defaults in milliseconds; 0 keeps a default where it always
// did; a negative value is refused naming the flag.
func TestMsFlagsDefaultsAndRefusals(t *testing.T) {
	env := func(string) string { return "" }
	c, err := parseFlags("serve", []string{"--auto-sync-budget-ms", "0"}, env, nil)
	if err != nil {
		t.Fatal(err)
	}
	p := profileOf(t, c.engine)
	if p.SyncTimeoutMs != 300000 || p.AsyncTimeoutMs != 600000 || p.ArtifactTTLMs != 86400000 || p.RunTTLMs != 1800000 ||
		p.AutoSyncBudgetMs != 20000 || p.TaskPollIntervalMs != 1000 || p.MaxTaskTTLMs != 86400000 ||
		p.SessionIdleTTLMs != 1800000 || p.InputTimeoutMs != 600000 {
		t.Errorf("default profile: %+v", p)
	}
	for _, bad := range []struct{ flag, want string }{
		{"--auto-sync-budget-ms", "--auto-sync-budget-ms must be >= 0 (milliseconds; 0 keeps the default), got -1"},
		{"--run-ttl-ms", "--run-ttl-ms must be >= 0 (milliseconds; 0 keeps the default), got -1"},
		{"--lease-ms", "--lease-ms must be >= 1 (milliseconds), got -1"},
	} {
		_, err := parseFlags("serve", []string{bad.flag, "-1"}, env, nil)
		if err == nil || !strings.Contains(err.Error(), bad.want) {
			t.Errorf("%s -1: %v, want %q", bad.flag, err, bad.want)
		}
	}
	if _, err := parseFlags("serve", []string{"--poll-ms", "0"}, env, nil); err == nil || !strings.Contains(err.Error(), "--poll-ms must be >= 1") {
		t.Errorf("--poll-ms 0: %v", err)
	}
}
