package db

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"sync"
	"testing"

	"github.com/browsertask/browsertask/engine"
)

// openTest opens a DB at path and closes it when the test ends.
func openTest(t testing.TB, path string) *DB {
	t.Helper()
	d, err := Open(context.Background(), path)
	if err != nil {
		t.Fatalf("Open(%s): %v", path, err)
	}
	t.Cleanup(func() {
		if err := d.Close(); err != nil {
			t.Errorf("Close: %v", err)
		}
	})
	return d
}

// newDB opens a fresh database in a temporary directory.
func newDB(t testing.TB) *DB {
	t.Helper()
	return openTest(t, filepath.Join(t.TempDir(), "bt.db"))
}

// queuedRun returns a minimal run to insert.
func queuedRun(id string, createdAt int64) *engine.Run {
	return &engine.Run{
		RunID: id, TemplateID: "tpl", TemplateVersion: 1, SessionID: "sess_" + id,
		Mode: engine.ModeAsync, CreatedAt: createdAt, UpdatedAt: createdAt,
		ExpiresAt: createdAt + 1000, TTLMs: 1000, TimeoutMs: 5000,
		Inputs: json.RawMessage(`{"x":1}`),
	}
}

// mustCreate inserts a run without idempotency.
func mustCreate(t testing.TB, d *DB, r *engine.Run) *engine.Run {
	t.Helper()
	got, dedup, err := d.CreateRun(context.Background(), r, nil)
	if err != nil || dedup {
		t.Fatalf("CreateRun(%s) = dedup %v, err %v", r.RunID, dedup, err)
	}
	return got
}

// mustClaimOne claims exactly one run for owner.
func mustClaimOne(t testing.TB, d *DB, owner string, now int64) *engine.Run {
	t.Helper()
	runs, err := d.ClaimRuns(context.Background(), engine.Claim{
		OwnerID: owner, Now: now, LeaseUntil: now + 15000, MaxRunning: 100, Max: 1})
	if err != nil || len(runs) != 1 {
		t.Fatalf("ClaimRuns: %d runs, err %v", len(runs), err)
	}
	return runs[0]
}

func TestOpenPragmasAndSchema(t *testing.T) {
	ctx := context.Background()
	dir := filepath.Join(t.TempDir(), "nested", "dir")
	d := openTest(t, filepath.Join(dir, "bt.db"))
	st, err := os.Stat(dir)
	if err != nil {
		t.Fatal(err)
	}
	if st.Mode().Perm() != 0o700 {
		t.Errorf("dir mode = %v, want 0700", st.Mode().Perm())
	}
	if d.Path() != filepath.Join(dir, "bt.db") {
		t.Errorf("Path() = %q", d.Path())
	}
	var autoVacuum int
	var journal string
	if err := d.r.QueryRowContext(ctx, `PRAGMA auto_vacuum`).Scan(&autoVacuum); err != nil {
		t.Fatal(err)
	}
	if autoVacuum != 2 {
		t.Errorf("auto_vacuum = %d, want 2 (INCREMENTAL)", autoVacuum)
	}
	if err := d.w.QueryRowContext(ctx, `PRAGMA journal_mode`).Scan(&journal); err != nil {
		t.Fatal(err)
	}
	if journal != "wal" {
		t.Errorf("journal_mode = %q, want wal", journal)
	}
	var fk int
	if err := d.w.QueryRowContext(ctx, `PRAGMA foreign_keys`).Scan(&fk); err != nil || fk != 1 {
		t.Errorf("foreign_keys = %d, %v; want 1", fk, err)
	}
	if _, err := d.r.ExecContext(ctx, `DELETE FROM owners`); err == nil {
		t.Error("write through the read pool succeeded; want query_only error")
	}
	v, err := d.SchemaVersion(ctx)
	if err != nil || v != latestVersion() || v < 1 {
		t.Errorf("SchemaVersion = %d, %v; want %d", v, err, latestVersion())
	}
	// The status CHECK mirrors engine.AllStatuses.
	_, err = d.w.ExecContext(ctx, `INSERT INTO runs (id, template_id, template_version, status,
		created_at, updated_at, expires_at) VALUES ('r', 't', 1, 'bogus', 0, 0, 0)`)
	if err == nil {
		t.Error("insert with status 'bogus' succeeded; want CHECK failure")
	}
}

func TestMigrationsConcurrentOpenAndReopen(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "fresh.db")
	const n = 4
	var wg sync.WaitGroup
	errs := make([]error, n)
	dbs := make([]*DB, n)
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			dbs[i], errs[i] = Open(ctx, path)
		}()
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Fatalf("concurrent Open %d: %v", i, err)
		}
		defer dbs[i].Close()
	}
	var rows int
	if err := dbs[0].r.QueryRowContext(ctx, `SELECT COUNT(*) FROM schema_migrations`).Scan(&rows); err != nil {
		t.Fatal(err)
	}
	// One row a migration (the numbers may skip: a number is kept free
	// for a branch that adds its own migration).
	ms, err := loadMigrations()
	if err != nil {
		t.Fatal(err)
	}
	if rows != len(ms) {
		t.Errorf("schema_migrations rows = %d, want %d", rows, len(ms))
	}
	mustCreate(t, dbs[1], queuedRun("run_a", 1))

	// Reopening is a no-op: same version, same rows, data kept.
	d := openTest(t, path)
	if v, err := d.SchemaVersion(ctx); err != nil || v != latestVersion() {
		t.Errorf("SchemaVersion after reopen = %d, %v", v, err)
	}
	var again int
	if err := d.r.QueryRowContext(ctx, `SELECT COUNT(*) FROM schema_migrations`).Scan(&again); err != nil || again != rows {
		t.Errorf("schema_migrations rows after reopen = %d, %v; want %d", again, err, rows)
	}
	if _, err := d.GetRun(ctx, "run_a"); err != nil {
		t.Errorf("GetRun after reopen: %v", err)
	}
}

func TestPathWithURISyntax(t *testing.T) {
	d := openTest(t, filepath.Join(t.TempDir(), "a?b#c%20d", "bt.db"))
	mustCreate(t, d, queuedRun("run_x", 1))
	if _, err := os.Stat(d.Path()); err != nil {
		t.Errorf("database not at its path: %v", err)
	}
}

// TestLoadMigrationsOrdered: the migrations start at 1 and come in strictly
// increasing order. A number may be skipped (as the PostgreSQL store's
// are): branches working at once each take their own number, and the
// migrator applies each version it has not recorded, whatever its place.
func TestLoadMigrationsOrdered(t *testing.T) {
	ms, err := loadMigrations()
	if err != nil {
		t.Fatal(err)
	}
	if len(ms) == 0 || ms[0].version != 1 {
		t.Fatalf("migrations %v; want the first to be version 1", ms)
	}
	for i := 1; i < len(ms); i++ {
		if ms[i].version <= ms[i-1].version {
			t.Errorf("migration %s (version %d) follows version %d; want strictly increasing", ms[i].name, ms[i].version, ms[i-1].version)
		}
	}
}
