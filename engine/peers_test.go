package engine_test

import (
	"context"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"testing"
	"time"

	"github.com/browsertask/browsertask/engine"
)

// deadPID is the PID of a process that has exited and been reaped.
func deadPID(t *testing.T) int {
	t.Helper()
	cmd := exec.Command("true")
	if err := cmd.Run(); err != nil {
		t.Skipf("cannot start a process to get a dead PID: %v", err)
	}
	return cmd.Process.Pid
}

// TestPeerAlive pins the one liveness rule on a fixed clock: a process
// on another host is alive while its heartbeat is at most 3 × lease old;
// on this host a PID that is gone is dead at once, whatever its heartbeat.
func TestPeerAlive(t *testing.T) {
	const now = int64(1_767_225_600_000)
	lease := 15 * time.Second
	eng, err := engine.New(engine.Options{Store: openStore(t), Templates: []engine.Template{newSleep()},
		Config: engine.Config{LeaseDuration: lease, HeartbeatInterval: time.Second}, Now: func() int64 { return now },
		Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		t.Fatal(err)
	}
	host, _ := os.Hostname()
	stale := 3 * lease.Milliseconds()
	for _, c := range []struct {
		name  string
		owner engine.Owner
		alive bool
	}{
		{"this process's own row", engine.Owner{ID: eng.OwnerID(), HeartbeatAt: 0}, true},
		{"other host, heartbeat now", engine.Owner{ID: "a", Host: "elsewhere.test", PID: 1, HeartbeatAt: now}, true},
		{"other host, 4 s late (more than 3 heartbeats)", engine.Owner{ID: "b", Host: "elsewhere.test", PID: 1, HeartbeatAt: now - 4000}, true},
		{"other host, exactly 3 leases", engine.Owner{ID: "c", Host: "elsewhere.test", PID: 1, HeartbeatAt: now - stale}, true},
		{"other host, 3 leases and 1 ms", engine.Owner{ID: "d", Host: "elsewhere.test", PID: 1, HeartbeatAt: now - stale - 1}, false},
		{"this host, live PID, fresh", engine.Owner{ID: "e", Host: host, PID: os.Getpid(), HeartbeatAt: now}, true},
		{"this host, live PID, silent", engine.Owner{ID: "f", Host: host, PID: os.Getpid(), HeartbeatAt: now - stale - 1}, false},
		{"this host, PID gone, fresh", engine.Owner{ID: "g", Host: host, PID: deadPID(t), HeartbeatAt: now}, false},
	} {
		if got := eng.PeerAlive(c.owner); got != c.alive {
			t.Errorf("%s: PeerAlive = %v, want %v", c.name, got, c.alive)
		}
	}
}

// TestRecoveryAndAnyPeerAliveShareTheRule: recovery releases exactly the
// owners PeerAlive calls dead, and AnyPeerAlive (the CLI's question)
// answers from the same rule, ignoring this process's own row.
func TestRecoveryAndAnyPeerAliveShareTheRule(t *testing.T) {
	const now = int64(1_767_225_600_000)
	ctx := context.Background()
	store := openStore(t)
	cfg := engine.Config{LeaseDuration: 15 * time.Second, HeartbeatInterval: time.Second}
	clock := func() int64 { return now }
	asker, err := engine.New(engine.Options{Store: store, Templates: []engine.Template{newSleep()}, Config: cfg, Now: clock,
		Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		t.Fatal(err)
	}
	if alive, err := asker.AnyPeerAlive(ctx); err != nil || alive {
		t.Fatalf("no owners: AnyPeerAlive = %v, %v; want false", alive, err)
	}
	busy := engine.Owner{ID: "busy", Host: "elsewhere.test", PID: 1, StartedAt: now - 60_000, HeartbeatAt: now - 44_000}
	gone := engine.Owner{ID: "gone", Host: "elsewhere.test", PID: 1, StartedAt: now - 60_000, HeartbeatAt: now - 45_001}
	if err := store.RegisterOwner(ctx, gone); err != nil {
		t.Fatal(err)
	}
	if alive, err := asker.AnyPeerAlive(ctx); err != nil || alive {
		t.Fatalf("only a silent owner: AnyPeerAlive = %v, %v; want false", alive, err)
	}
	if err := store.RegisterOwner(ctx, busy); err != nil {
		t.Fatal(err)
	}
	if alive, err := asker.AnyPeerAlive(ctx); err != nil || !alive {
		t.Fatalf("a busy owner 44 s late: AnyPeerAlive = %v, %v; want true", alive, err)
	}

	// An engine starting on the database recovers before it claims: once
	// a run it executed has finished, its first recovery pass has judged
	// both owners (every later pass, on the same clock, judges alike).
	eng := startEngine(t, store, newSleep(), cfg, clock)
	if r := waitRun(t, eng, submitAsync(t, eng, "test_sleep", `{"ms":0}`)); r.Status != engine.StatusSucceeded {
		t.Fatalf("run: %s", r.Status)
	}
	owners, err := store.ListOwners(ctx)
	if err != nil {
		t.Fatal(err)
	}
	ids := map[string]bool{}
	for _, o := range owners {
		ids[o.ID] = true
	}
	if len(owners) != 2 || !ids["busy"] || !ids[eng.OwnerID()] {
		t.Fatalf("owners after recovery: %+v, want busy and the engine's own (gone released)", owners)
	}
}
