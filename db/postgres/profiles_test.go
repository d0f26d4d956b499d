package postgres

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/browsertask/browsertask/engine"
)

// TestProfilesMigrationUpgrade: a database a daemon without profiles
// created (schema without migration 0009) keeps its runs when a daemon
// with profiles opens it: the migration adds the table and runs.profile,
// the old run reads profile "", and profiles work at once.
func TestProfilesMigrationUpgrade(t *testing.T) {
	u := testURL(t)
	ctx := context.Background()
	old, err := Open(ctx, u)
	if err != nil {
		t.Fatal(err)
	}
	const created int64 = 1_767_225_600_000
	run := &engine.Run{RunID: "run_old", TemplateID: "tpl", TemplateVersion: 1, Mode: engine.ModeAsync,
		CreatedAt: created, UpdatedAt: created, ExpiresAt: created + 60_000, TTLMs: 60_000, Inputs: json.RawMessage(`{}`)}
	if _, _, err := old.CreateRun(ctx, run, nil); err != nil {
		t.Fatal(err)
	}
	// Take the database back to the schema before 0009, with the run in it.
	for _, q := range []string{`DROP TABLE profiles`, `ALTER TABLE runs DROP COLUMN profile`,
		`DELETE FROM schema_migrations WHERE version = 9`} {
		if _, err := old.sql.ExecContext(ctx, q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	if err := old.Close(); err != nil {
		t.Fatal(err)
	}

	d := openTest(t, u)
	var applied int
	if err := d.sql.QueryRowContext(ctx, `SELECT COUNT(*) FROM schema_migrations WHERE version = 9`).Scan(&applied); err != nil || applied != 1 {
		t.Fatalf("migration 9 recorded %d times after the upgrade (%v); want 1", applied, err)
	}
	ms, err := loadMigrations()
	if err != nil {
		t.Fatal(err)
	}
	if v, err := d.SchemaVersion(ctx); err != nil || v != ms[len(ms)-1].version {
		t.Fatalf("SchemaVersion after the upgrade = %d, %v; want %d", v, err, ms[len(ms)-1].version)
	}
	got, err := d.GetRun(ctx, "run_old")
	if err != nil || got.Profile != "" || got.TemplateID != "tpl" {
		t.Fatalf("GetRun(run_old) after the upgrade = %+v, %v; want the run with profile \"\"", got, err)
	}
	if err := d.CreateProfile(ctx, engine.BrowserProfile{Name: "work", CreatedAt: created}); err != nil {
		t.Fatalf("CreateProfile after the upgrade: %v", err)
	}
	if list, err := d.ListProfiles(ctx); err != nil || len(list) != 1 || list[0].Name != "work" {
		t.Fatalf("ListProfiles = %+v, %v; want [work]", list, err)
	}
}

// TestProfileBadSitesReadsEmpty: a sites value that is not a JSON array
// (written by hand, or by a future version) reads as no sites instead of
// making the profile unreadable.
func TestProfileBadSitesReadsEmpty(t *testing.T) {
	d := openTest(t, testURL(t))
	ctx := context.Background()
	if err := d.CreateProfile(ctx, engine.BrowserProfile{Name: "p", CreatedAt: 1}); err != nil {
		t.Fatal(err)
	}
	if _, err := d.sql.ExecContext(ctx, `UPDATE profiles SET sites = 'not json' WHERE name = 'p'`); err != nil {
		t.Fatal(err)
	}
	p, err := d.GetProfile(ctx, "p")
	if err != nil || p.Sites == nil || len(p.Sites) != 0 {
		t.Fatalf("GetProfile = %+v, %v; want the profile with Sites = []", p, err)
	}
}
