package db

import (
	"context"
	"database/sql"
	"embed"
	"fmt"

	"github.com/browsertask/browsertask/db/sqlcommon"
)

//go:embed migrations/*.sql
var migrationFS embed.FS

// migration is one forward-only schema step, named NNNN_description.sql.
type migration struct {
	version int
	name    string
	sql     string
}

// loadMigrations returns the embedded migrations in version order
// (sqlcommon.LoadMigrations).
func loadMigrations() ([]migration, error) {
	read, err := sqlcommon.LoadMigrations(migrationFS, "migrations", "db")
	if err != nil {
		return nil, err
	}
	ms := make([]migration, len(read))
	for i, m := range read {
		ms[i] = migration{version: m.Version, name: m.Name, sql: m.SQL}
	}
	return ms, nil
}

// latestVersion is the version the embedded migrations bring a database to.
func latestVersion() int {
	ms, err := loadMigrations()
	if err != nil || len(ms) == 0 {
		return 0
	}
	return ms[len(ms)-1].version
}

// migrate applies the pending migrations, each in its own IMMEDIATE
// transaction that first re-checks schema_migrations: when two processes open
// a fresh file together, the second one waits for the write lock, sees the
// version recorded and skips it.
func (d *DB) migrate(ctx context.Context) error {
	ms, err := loadMigrations()
	if err != nil {
		return err
	}
	err = d.write(ctx, func(tx *sql.Tx) error {
		_, err := tx.ExecContext(ctx, `CREATE TABLE IF NOT EXISTS schema_migrations (
			version    INTEGER PRIMARY KEY,
			name       TEXT    NOT NULL,
			applied_at INTEGER NOT NULL
		) STRICT`)
		return err
	})
	if err != nil {
		return fmt.Errorf("db: create schema_migrations: %w", err)
	}
	for _, m := range ms {
		err := d.write(ctx, func(tx *sql.Tx) error {
			var n int
			if err := tx.QueryRowContext(ctx,
				`SELECT COUNT(*) FROM schema_migrations WHERE version = ?`, m.version).Scan(&n); err != nil {
				return err
			}
			if n > 0 {
				return nil
			}
			if _, err := tx.ExecContext(ctx, m.sql); err != nil {
				return err
			}
			// applied_at is bookkeeping for humans, so SQLite's clock is fine.
			_, err := tx.ExecContext(ctx, `INSERT INTO schema_migrations (version, name, applied_at)
				VALUES (?, ?, CAST(unixepoch('subsec') * 1000 AS INTEGER))`, m.version, m.name)
			return err
		})
		if err != nil {
			return fmt.Errorf("db: migration %s: %w", m.name, err)
		}
	}
	return nil
}
