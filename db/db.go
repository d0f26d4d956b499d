// Package db is the SQLite implementation of engine.Store. Every process
// sharing the database file is a peer: SQLite's write lock is the single point
// of coordination, so each *DB funnels its writes through one connection
// (BEGIN IMMEDIATE) and reads through a separate read-only pool.
package db

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"time"

	"github.com/browsertask/browsertask/db/sqlcommon"
	"github.com/browsertask/browsertask/engine"
	_ "modernc.org/sqlite" // registers the "sqlite" driver
)

var _ engine.Store = (*DB)(nil)

// writerPragmas configure the single writer connection. auto_vacuum is applied
// by the driver before journal_mode, so it takes effect on a fresh file.
const writerPragmas = "_pragma=busy_timeout(10000)&_pragma=journal_mode(WAL)&_pragma=synchronous(NORMAL)" +
	"&_pragma=foreign_keys(1)&_pragma=auto_vacuum(INCREMENTAL)&_txlock=immediate"

// readerPragmas configure the read pool: the same busy timeout, and
// query_only so a stray write through it fails instead of contending.
const readerPragmas = "_pragma=busy_timeout(10000)&_pragma=foreign_keys(1)&_pragma=query_only(1)"

// readPoolSize bounds the read connections; reads in WAL mode never block
// each other or the writer.
const readPoolSize = 4

// openBusyTimeout bounds how long Open retries a busy fresh file.
const openBusyTimeout = 10 * time.Second

// DB is a handle on one SQLite database file. It is safe for concurrent use;
// several DBs (in one or many processes) may share the same file.
type DB struct {
	path string
	w    *sql.DB // exactly one connection: every write transaction
	r    *sql.DB // read-only pool
	ws   *stmtCache
	rs   *stmtCache
}

// Open opens (creating if needed) the database at path, creates its parent
// directory (0700) and applies pending migrations. It is safe for several
// processes to open the same fresh file at once.
func Open(ctx context.Context, path string) (*DB, error) {
	abs, err := filepath.Abs(path)
	if err != nil {
		return nil, fmt.Errorf("db: resolve path %q: %w", path, err)
	}
	if err := os.MkdirAll(filepath.Dir(abs), 0o700); err != nil {
		return nil, fmt.Errorf("db: create directory: %w", err)
	}
	w, err := sql.Open("sqlite", dsn(abs, writerPragmas))
	if err != nil {
		return nil, fmt.Errorf("db: open writer: %w", err)
	}
	w.SetMaxOpenConns(1)
	w.SetMaxIdleConns(1)
	w.SetConnMaxLifetime(0)
	w.SetConnMaxIdleTime(0)
	d := &DB{path: abs, w: w}
	if err := d.migrateRetrying(ctx); err != nil {
		w.Close()
		return nil, err
	}
	r, err := sql.Open("sqlite", dsn(abs, readerPragmas))
	if err != nil {
		w.Close()
		return nil, fmt.Errorf("db: open read pool: %w", err)
	}
	r.SetMaxOpenConns(readPoolSize)
	r.SetMaxIdleConns(readPoolSize)
	if err := r.PingContext(ctx); err != nil {
		w.Close()
		r.Close()
		return nil, fmt.Errorf("db: open read pool: %w", err)
	}
	d.r = r
	d.ws, d.rs = newStmtCache(w), newStmtCache(r)
	return d, nil
}

// migrateRetrying runs migrate, retrying while the file is busy. When
// several processes open a fresh file at once, the connection-time
// journal_mode(WAL) switch needs an exclusive lock and SQLite returns
// SQLITE_BUSY at once (without the busy handler) rather than risk a
// deadlock; the failed connection is discarded and a new one tries again.
func (d *DB) migrateRetrying(ctx context.Context) error {
	deadline := time.Now().Add(openBusyTimeout)
	wait := 5 * time.Millisecond
	for {
		err := d.migrate(ctx)
		if err == nil || !isBusy(err) || time.Now().After(deadline) {
			return err
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("%w (last error: %w)", ctx.Err(), err)
		case <-time.After(wait):
		}
		wait = min(2*wait, 200*time.Millisecond)
	}
}

// dsn builds a file: URI for the driver; the path is escaped so '?', '#' and
// '%' in a directory name cannot be read as URI syntax.
func dsn(absPath, params string) string {
	u := url.URL{Path: absPath}
	return "file:" + u.EscapedPath() + "?" + params
}

// Close closes both pools. Running statements finish first.
func (d *DB) Close() error {
	d.ws.close()
	d.rs.close()
	return errors.Join(d.r.Close(), d.w.Close())
}

// Path returns the absolute path of the database file (shown by doctor).
func (d *DB) Path() string { return d.path }

// SizeBytes is the database file's size with its write-ahead log (shown by
// doctor); a file that is missing counts 0.
func (d *DB) SizeBytes(context.Context) (int64, error) {
	var size int64
	for _, suffix := range []string{"", "-wal"} {
		if st, err := os.Stat(d.path + suffix); err == nil {
			size += st.Size()
		}
	}
	return size, nil
}

// SchemaVersion returns the highest applied migration version.
func (d *DB) SchemaVersion(ctx context.Context) (int, error) {
	var v sql.NullInt64
	err := d.r.QueryRowContext(ctx, `SELECT MAX(version) FROM schema_migrations`).Scan(&v)
	if err != nil {
		return 0, fmt.Errorf("db: schema version: %w", err)
	}
	return int(v.Int64), nil
}

// write runs fn in a write transaction on the single writer connection
// (BEGIN IMMEDIATE through the DSN's _txlock), committing when fn returns nil.
func (d *DB) write(ctx context.Context, fn func(tx *sql.Tx) error) error {
	return d.writeTx(ctx, func(t *txn) error { return fn(t.Tx) })
}

// writeTx is write with the writer's cached statements.
func (d *DB) writeTx(ctx context.Context, fn func(tx *txn) error) error {
	tx, err := d.w.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("db: begin: %w", err)
	}
	if err := fn(&txn{Tx: tx, c: d.ws}); err != nil {
		_ = tx.Rollback()
		return d.mapFull(err)
	}
	if err := tx.Commit(); err != nil {
		return d.mapFull(fmt.Errorf("db: commit: %w", err))
	}
	return nil
}

// readTx runs fn in a read transaction on the read pool (so several
// queries see one snapshot), with the read pool's cached statements.
func (d *DB) readTx(ctx context.Context, fn func(tx *txn) error) error {
	tx, err := d.r.BeginTx(ctx, &sql.TxOptions{ReadOnly: true})
	if err != nil {
		return fmt.Errorf("db: begin read: %w", err)
	}
	defer tx.Rollback() //nolint:errcheck // read-only: nothing to keep
	return fn(&txn{Tx: tx, c: d.rs})
}

// reader runs single queries on the read pool with cached statements.
func (d *DB) reader() pool { return pool{c: d.rs} }

// queryer is what read helpers need; *txn, pool, *sql.Tx and *sql.DB
// satisfy it. It is sqlcommon.Querier, so the helpers fit the shared
// layer's hooks.
type queryer = sqlcommon.Querier
