package postgres

import (
	"context"
	"database/sql"
	"testing"

	"github.com/browsertask/browsertask/engine"
	"github.com/browsertask/browsertask/internal/fixture"
	"github.com/jackc/pgx/v5"
)

// TestHeartbeatOutlivesABusyPool takes every connection of the store's main
// pool (as reads, waiters and runs' writes do on a busy machine) and
// heartbeats: the heartbeat goes through on its own connections. Before
// them it queued behind the pool until the test's deadline; in the
// three-daemon test a heartbeat so held let a live run's lease run out, and
// a peer ran the run a second time.
func TestHeartbeatOutlivesABusyPool(t *testing.T) {
	u := testURL(t)
	d := openTest(t, u)
	ctx, cancel := fixture.Context(t)
	defer cancel()
	const owner = "own_busy"
	if err := d.RegisterOwner(ctx, engine.Owner{ID: owner, PID: 1, Host: "h", StartedAt: 1, HeartbeatAt: 1}); err != nil {
		t.Fatal(err)
	}
	max := int(d.pool.Config().MaxConns)
	held := make([]*sql.Tx, 0, max)
	for range max {
		tx, err := d.sql.BeginTx(ctx, nil)
		if err != nil {
			t.Fatal(err)
		}
		held = append(held, tx)
	}
	t.Cleanup(func() {
		for _, tx := range held {
			_ = tx.Rollback()
		}
	})
	if got := int(d.pool.Stat().AcquiredConns()); got != max {
		t.Fatalf("main pool: %d of %d connections taken, want all", got, max)
	}
	if _, err := d.Heartbeat(ctx, engine.HeartbeatParams{OwnerID: owner, Now: 5000, LeaseUntil: 20000}); err != nil {
		t.Fatalf("heartbeat with the main pool taken: %v", err)
	}
	conn, err := pgx.Connect(ctx, u)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(context.Background()) //nolint:errcheck // test cleanup
	var beat int64
	if err := conn.QueryRow(ctx, `SELECT heartbeat_at FROM owners WHERE id = $1`, owner).Scan(&beat); err != nil {
		t.Fatal(err)
	}
	if beat != 5000 {
		t.Fatalf("heartbeat_at = %d, want 5000", beat)
	}
}
