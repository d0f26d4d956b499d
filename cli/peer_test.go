package cli

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/browsertask/browsertask/db"
	"github.com/browsertask/browsertask/engine"
)

// TestCLIAsyncAsksTheEngineWhetherAPeerIsAlive: `run --async` warns that
// the run stays queued exactly when the engine's liveness rule
// (Engine.PeerAlive) finds no live process on the database. A daemon on
// this machine whose heartbeat is 5 s late (a loaded machine) is alive, so
// no warning; one whose PID is gone is dead at once, even with a fresh
// heartbeat, so the warning comes.
func TestCLIAsyncAsksTheEngineWhetherAPeerIsAlive(t *testing.T) {
	host, _ := os.Hostname()
	gone := exec.Command("true")
	if err := gone.Run(); err != nil {
		t.Skipf("cannot start a process to get a dead PID: %v", err)
	}
	for _, c := range []struct {
		name string
		peer engine.Owner
		warn bool
	}{
		{"live PID, heartbeat 5 s late", engine.Owner{ID: "busy", Host: host, PID: os.Getpid()}, false},
		{"PID gone, fresh heartbeat", engine.Owner{ID: "killed", Host: host, PID: gone.Process.Pid}, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "bt.db")
			store, err := db.Open(context.Background(), path)
			if err != nil {
				t.Fatal(err)
			}
			now := time.Now().UnixMilli()
			c.peer.StartedAt, c.peer.HeartbeatAt = now-60_000, now
			if !c.warn {
				c.peer.HeartbeatAt = now - 5000
			}
			if err := store.RegisterOwner(context.Background(), c.peer); err != nil {
				t.Fatal(err)
			}
			store.Close()
			out, errs, code := cli(t, "", "run", "dev_echo", "--dev-templates", "--db", path, "--async")
			if code != 0 || !strings.HasPrefix(out, "run_") {
				t.Fatalf("exit %d, stdout %q, stderr %q", code, out, errs)
			}
			if warned := strings.Contains(errs, "no other browsertask process is running"); warned != c.warn {
				t.Fatalf("warning shown %v, want %v; stderr %q", warned, c.warn, errs)
			}
		})
	}
}
