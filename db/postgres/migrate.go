package postgres

import (
	"context"
	"embed"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/browsertask/browsertask/db/sqlcommon"
)

//go:embed migrations/*.sql
var migrationFS embed.FS

// migrateLockKey is the advisory lock every daemon takes while it migrates:
// two daemons starting together on a fresh database take turns, and the
// second finds the versions recorded. The key is fixed; the lock is
// transaction-scoped, so it goes with the migration's transaction.
const migrateLockKey = 0x62745f6d6967 // "bt_mig"

// migration is one forward-only schema step, named NNNN_description.sql.
type migration struct {
	version int
	name    string
	sql     string
}

// loadMigrations returns the embedded migrations in version order
// (sqlcommon.LoadMigrations).
func loadMigrations() ([]migration, error) {
	read, err := sqlcommon.LoadMigrations(migrationFS, "migrations", "postgres")
	if err != nil {
		return nil, err
	}
	ms := make([]migration, len(read))
	for i, m := range read {
		ms[i] = migration{version: m.Version, name: m.Name, sql: m.SQL}
	}
	return ms, nil
}

// migrate applies the pending migrations in one transaction that holds the
// migration advisory lock: all of them or none, and never two daemons at
// once.
func (d *DB) migrate(ctx context.Context) error {
	ms, err := loadMigrations()
	if err != nil {
		return err
	}
	tx, err := d.pool.Begin(ctx)
	if err != nil {
		return fmt.Errorf("postgres: migrate: begin: %w", err)
	}
	defer tx.Rollback(ctx) //nolint:errcheck // a no-op after Commit
	if _, err := tx.Exec(ctx, `SELECT pg_advisory_xact_lock($1)`, int64(migrateLockKey)); err != nil {
		return fmt.Errorf("postgres: migrate: lock: %w", err)
	}
	if _, err := tx.Exec(ctx, `CREATE TABLE IF NOT EXISTS schema_migrations (
		version    INTEGER PRIMARY KEY,
		name       TEXT    NOT NULL,
		applied_at BIGINT  NOT NULL)`); err != nil {
		return fmt.Errorf("postgres: create schema_migrations: %w", err)
	}
	for _, m := range ms {
		var n int
		if err := tx.QueryRow(ctx, `SELECT COUNT(*) FROM schema_migrations WHERE version = $1`, m.version).Scan(&n); err != nil {
			return fmt.Errorf("postgres: migration %s: %w", m.name, err)
		}
		if n > 0 {
			continue
		}
		if _, err := tx.Exec(ctx, m.sql); err != nil {
			return fmt.Errorf("postgres: migration %s: %w", m.name, err)
		}
		// applied_at is bookkeeping for humans, so the server's clock is fine.
		if _, err := tx.Exec(ctx, `INSERT INTO schema_migrations (version, name, applied_at)
			VALUES ($1, $2, (extract(epoch FROM clock_timestamp()) * 1000)::bigint)`, m.version, m.name); err != nil {
			return fmt.Errorf("postgres: migration %s: %w", m.name, err)
		}
	}
	if err := tx.Commit(ctx); err != nil {
		return fmt.Errorf("postgres: migrate: commit: %w", err)
	}
	return nil
}

// SizeBytes is what the store's tables take on disk, indexes and TOAST
// included (shown by doctor): the tables of the schema the URL's
// search_path names, not the whole database, which other schemas or
// applications may share.
func (d *DB) SizeBytes(ctx context.Context) (int64, error) {
	var size int64
	err := d.pool.QueryRow(ctx, `SELECT COALESCE(SUM(pg_total_relation_size(c.oid)), 0)::bigint
		FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
		WHERE n.nspname = current_schema() AND c.relkind IN ('r', 'm', 'p')`).Scan(&size)
	if err != nil {
		return 0, fmt.Errorf("postgres: size: %w", err)
	}
	return size, nil
}

// SchemaVersion returns the highest applied migration version.
func (d *DB) SchemaVersion(ctx context.Context) (int, error) {
	var v *int
	if err := d.pool.QueryRow(ctx, `SELECT MAX(version) FROM schema_migrations`).Scan(&v); err != nil {
		return 0, fmt.Errorf("postgres: schema version: %w", err)
	}
	if v == nil {
		return 0, nil
	}
	return *v, nil
}

// createSchema creates the schema the URL's search_path names, when it is
// missing, on a connection of its own (the pool's connections already use
// it as their search path). Two daemons creating it together is not an
// error.
func createSchema(ctx context.Context, cfg *pgx.ConnConfig, schema string) error {
	conn, err := pgx.ConnectConfig(ctx, cfg)
	if err != nil {
		return fmt.Errorf("postgres: connect: %w", err)
	}
	defer conn.Close(ctx) //nolint:errcheck // closing a connection we only read from
	_, err = conn.Exec(ctx, `CREATE SCHEMA IF NOT EXISTS `+pgx.Identifier{schema}.Sanitize())
	var pe *pgconn.PgError
	if err != nil && !(errors.As(err, &pe) && (pe.Code == "23505" || pe.Code == "42P06")) {
		return fmt.Errorf("postgres: create schema %q: %w", schema, err)
	}
	return nil
}
