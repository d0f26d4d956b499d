// Package postgres is the PostgreSQL implementation of engine.Store, the
// sibling of package db (SQLite) for daemons on several machines sharing
// one queue (issue 33). It passes the same db/storetest suite.
//
// Connections come from a pgxpool.Pool; the SQL is hand-written and runs
// through database/sql on top of that pool (stdlib.OpenDBFromPool), so the
// store's statements read like the SQLite store's beside it. Notifications
// (LISTEN/NOTIFY, notify.go) use a connection of their own from the pool.
//
// Concurrency: writes run at READ COMMITTED, each a transaction retried on
// a deadlock or serialization failure. Where SQLite's single write lock made
// a read-then-write atomic, a transaction-scoped advisory lock does here:
// one for claims (the global limit is counted and taken under it, so
// concurrent claimers can never exceed it) and one per idempotency key.
package postgres

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"net/url"
	"strings"
	"sync/atomic"
	"time"

	"github.com/browsertask/browsertask/db/sqlcommon"
	"github.com/browsertask/browsertask/engine"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/jackc/pgx/v5/stdlib"
)

var _ engine.Store = (*DB)(nil)

// maxTxAttempts bounds the retries of a write transaction that PostgreSQL
// aborted for a deadlock or a serialization failure.
const maxTxAttempts = 8

// DB is a handle on one PostgreSQL database (or one schema of it). It is
// safe for concurrent use; any number of DBs in any number of processes
// may share the database.
type DB struct {
	pool *pgxpool.Pool
	sql  *sql.DB
	// leasePool and leases carry the heartbeats (owner and leases) on
	// connections of their own: on a busy machine every connection of the
	// main pool can be taken by reads, waiters and runs' writes, and a
	// heartbeat queued behind them for a lease's length let the lease run
	// out under a live run, which a peer then recovered and ran again
	// (TestHeartbeatOutlivesABusyPool).
	leasePool *pgxpool.Pool
	leases    *sql.DB
	schema    string
	url       string
	// connCfg opens the LISTEN connection (notify.go), outside the pool.
	connCfg   *pgx.ConnConfig
	notes     *notifier
	listening atomic.Bool
	// noClaimLock leaves out the claim lock: only the test measuring what
	// the lock is for sets it.
	noClaimLock bool
}

// Open connects to the database at rawURL (postgres:// or postgresql://),
// applies pending migrations (under an advisory lock, so daemons starting
// together do not race) and returns the store. A "search_path" query
// parameter of the URL selects the schema (created when missing), which is
// how the tests give each case a fresh database.
func Open(ctx context.Context, rawURL string) (*DB, error) {
	cfg, schema, err := parseConfig(rawURL)
	if err != nil {
		return nil, err
	}
	if schema != "" {
		if err := createSchema(ctx, cfg.ConnConfig.Copy(), schema); err != nil {
			return nil, err
		}
	}
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		return nil, fmt.Errorf("postgres: connect: %w", err)
	}
	pingCtx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	if err := pool.Ping(pingCtx); err != nil {
		pool.Close()
		return nil, fmt.Errorf("postgres: connect to %s: %w", Redact(rawURL), err)
	}
	leaseCfg := cfg.Copy()
	leaseCfg.MaxConns = leaseConns
	leaseCfg.MinConns = 0
	leasePool, err := pgxpool.NewWithConfig(ctx, leaseCfg)
	if err != nil {
		pool.Close()
		return nil, fmt.Errorf("postgres: connect: %w", err)
	}
	d := &DB{pool: pool, sql: stdlib.OpenDBFromPool(pool), leasePool: leasePool, leases: stdlib.OpenDBFromPool(leasePool),
		schema: schema, url: rawURL, connCfg: cfg.ConnConfig.Copy()}
	if err := d.migrate(ctx); err != nil {
		d.closePools()
		return nil, err
	}
	d.startNotifier()
	return d, nil
}

// parseConfig reads the URL into a pool configuration. The pool is sized
// for a daemon: claims, heartbeats, waiters and the dashboard share it.
func parseConfig(rawURL string) (*pgxpool.Config, string, error) {
	u, err := url.Parse(rawURL)
	if err != nil || (u.Scheme != "postgres" && u.Scheme != "postgresql") {
		return nil, "", fmt.Errorf("postgres: %q is not a postgres:// URL (postgres://user:password@host:5432/dbname)", Redact(rawURL))
	}
	schema := u.Query().Get("search_path")
	if strings.ContainsAny(schema, ",\"") {
		return nil, "", fmt.Errorf("postgres: search_path %q: name one schema, without quotes or commas", schema)
	}
	cfg, err := pgxpool.ParseConfig(rawURL)
	if err != nil {
		return nil, "", fmt.Errorf("postgres: parse URL %s: %w", Redact(rawURL), err)
	}
	if u.Query().Get("pool_max_conns") == "" {
		cfg.MaxConns = 16
	}
	return cfg, schema, nil
}

// Redact returns rawURL with its password replaced, for messages and logs.
func Redact(rawURL string) string {
	u, err := url.Parse(rawURL)
	if err != nil {
		return "(unparsable URL)"
	}
	return u.Redacted()
}

// leaseConns is the size of the heartbeats' own pool: one heartbeat at a
// time per process, and one spare for a heartbeat that a shutdown's grace
// period sends beside the loop's.
const leaseConns = 2

// Close closes the pools. Running statements finish first.
func (d *DB) Close() error {
	d.closeNotifier()
	return d.closePools()
}

// closePools closes both pools and their database/sql handles.
func (d *DB) closePools() error {
	err := d.sql.Close()
	if lerr := d.leases.Close(); err == nil {
		err = lerr
	}
	d.pool.Close()
	d.leasePool.Close()
	return err
}

// Path returns the database URL without its password (shown by doctor).
func (d *DB) Path() string { return Redact(d.url) }

// write runs fn in a write transaction (READ COMMITTED), committing when fn
// returns nil and running it again, from the start, when PostgreSQL aborted
// it for a deadlock or a serialization failure: fn must set its results
// afresh on each call.
func (d *DB) write(ctx context.Context, fn func(tx *sql.Tx) error) error {
	return d.writeTx(ctx, func(t *txn) error { return fn(t.Tx) })
}

// writeTx is write with the txn wrapper the store's helpers take.
func (d *DB) writeTx(ctx context.Context, fn func(tx *txn) error) error {
	return d.writeTxOn(ctx, d.sql, fn)
}

// writeTxOn is writeTx on the connections of db (d.sql, or d.leases for
// heartbeats).
func (d *DB) writeTxOn(ctx context.Context, db *sql.DB, fn func(tx *txn) error) error {
	var err error
	for attempt := 0; attempt < maxTxAttempts; attempt++ {
		err = writeOnce(ctx, db, fn)
		if err == nil || !retryable(err) || ctx.Err() != nil {
			return err
		}
	}
	return err
}

// writeOnce is one try of writeTxOn.
func writeOnce(ctx context.Context, db *sql.DB, fn func(tx *txn) error) error {
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("postgres: begin: %w", err)
	}
	if err := fn(&txn{Tx: tx}); err != nil {
		_ = tx.Rollback()
		return err
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("postgres: commit: %w", err)
	}
	return nil
}

// readTx runs fn in a read-only REPEATABLE READ transaction, so its queries
// see one snapshot, as the SQLite store's read transactions do.
func (d *DB) readTx(ctx context.Context, fn func(tx *txn) error) error {
	tx, err := d.sql.BeginTx(ctx, &sql.TxOptions{ReadOnly: true, Isolation: sql.LevelRepeatableRead})
	if err != nil {
		return fmt.Errorf("postgres: begin read: %w", err)
	}
	defer tx.Rollback() //nolint:errcheck // read-only: nothing to keep
	return fn(&txn{Tx: tx})
}

// reader runs single queries outside a transaction.
func (d *DB) reader() *sql.DB { return d.sql }

// txn is a transaction as the store's helpers take it.
type txn struct{ *sql.Tx }

// sqlTx is what write helpers need; *txn and *sql.Tx satisfy it. It is
// sqlcommon.Tx, so the helpers fit the shared layer's hooks.
type sqlTx = sqlcommon.Tx

// queryer is what read helpers need; *txn, *sql.Tx and *sql.DB satisfy it.
// It is sqlcommon.Querier, so the helpers fit the shared layer's hooks.
type queryer = sqlcommon.Querier

// retryable reports whether PostgreSQL aborted the transaction in a way
// that running it again can cure: a deadlock (40P01) or a serialization
// failure (40001).
func retryable(err error) bool {
	var pe *pgconn.PgError
	return errors.As(err, &pe) && (pe.Code == "40P01" || pe.Code == "40001")
}

// mapConstraint turns a unique violation (a row with that id already
// exists) into engine.ErrConflict, keeping PostgreSQL's error as context.
func mapConstraint(err error) error {
	var pe *pgconn.PgError
	if errors.As(err, &pe) && pe.Code == "23505" {
		return fmt.Errorf("%w: %w", engine.ErrConflict, err)
	}
	return err
}
