package db

import (
	"context"
	"database/sql"
	"sync"
	"time"

	"github.com/browsertask/browsertask/db/sqlcommon"
	"github.com/browsertask/browsertask/engine"
)

// maxCachedStmts bounds one pool's statement cache; queries past it keep
// running as text.
const maxCachedStmts = 256

// stmtCache keeps a prepared statement per query text for one pool. The
// driver (modernc.org/sqlite) parses and plans every statement it is given
// as text; profiling the scheduler showed that as a quarter of its CPU
// time. A query seen for the first time runs as text and is prepared
// afterwards, in the background, never while the caller holds a connection:
// the writer pool has exactly one, so preparing inside a transaction would
// wait for itself. A *sql.Stmt is prepared again transparently on each
// connection of the pool that runs it (inside the caller's transaction when
// there is one), so a cache hit needs no second connection either.
type stmtCache struct {
	db *sql.DB

	mu       sync.RWMutex
	m        map[string]*sql.Stmt
	pending  map[string]bool
	closed   bool
	prepared sync.WaitGroup
}

func newStmtCache(db *sql.DB) *stmtCache {
	return &stmtCache{db: db, m: map[string]*sql.Stmt{}, pending: map[string]bool{}}
}

// get returns the prepared statement for query, or nil after scheduling
// its preparation.
func (c *stmtCache) get(query string) *sql.Stmt {
	c.mu.RLock()
	st := c.m[query]
	c.mu.RUnlock()
	if st != nil {
		return st
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed || c.pending[query] || len(c.m)+len(c.pending) >= maxCachedStmts {
		return nil
	}
	c.pending[query] = true
	c.prepared.Add(1)
	engine.Go(context.Background(), nil, "db.stmtCache.prepare", func() {
		c.prepare(query)
		c.prepared.Done()
	}, func(*engine.Panic) {
		c.mu.Lock()
		delete(c.pending, query)
		c.mu.Unlock()
		c.prepared.Done()
	})
	return nil
}

// prepare prepares query on the pool (waiting for a free connection) and
// caches it.
func (c *stmtCache) prepare(query string) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	st, err := c.db.PrepareContext(ctx, query)
	c.mu.Lock()
	defer c.mu.Unlock()
	delete(c.pending, query)
	if err != nil {
		return // runs as text, which reports the error to its caller
	}
	if c.closed {
		_ = st.Close()
		return
	}
	c.m[query] = st
}

// close waits for preparations under way and closes every statement.
func (c *stmtCache) close() {
	c.mu.Lock()
	c.closed = true
	c.mu.Unlock()
	c.prepared.Wait()
	c.mu.Lock()
	defer c.mu.Unlock()
	for q, st := range c.m {
		_ = st.Close()
		delete(c.m, q)
	}
}

// sqlTx is what the statement helpers need from a transaction: *txn (cached
// statements) and *sql.Tx both provide it. It is sqlcommon.Tx, so the
// helpers fit the shared layer's hooks.
type sqlTx = sqlcommon.Tx

// txn is a transaction whose queries use the pool's cached statements.
// Within one transaction a statement must not run again while rows it
// returned are still open: every caller reads its rows to the end first.
type txn struct {
	*sql.Tx
	c *stmtCache
}

// ExecContext runs query through its cached statement.
func (t *txn) ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error) {
	if st := t.c.get(query); st != nil {
		return t.Tx.StmtContext(ctx, st).ExecContext(ctx, args...)
	}
	return t.Tx.ExecContext(ctx, query, args...)
}

// QueryContext runs query through its cached statement.
func (t *txn) QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error) {
	if st := t.c.get(query); st != nil {
		return t.Tx.StmtContext(ctx, st).QueryContext(ctx, args...)
	}
	return t.Tx.QueryContext(ctx, query, args...)
}

// QueryRowContext runs query through its cached statement.
func (t *txn) QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row {
	if st := t.c.get(query); st != nil {
		return t.Tx.StmtContext(ctx, st).QueryRowContext(ctx, args...)
	}
	return t.Tx.QueryRowContext(ctx, query, args...)
}

// pool runs single queries outside a transaction through cached statements.
type pool struct {
	c *stmtCache
}

// QueryContext runs query through its cached statement.
func (p pool) QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error) {
	if st := p.c.get(query); st != nil {
		return st.QueryContext(ctx, args...)
	}
	return p.c.db.QueryContext(ctx, query, args...)
}

// QueryRowContext runs query through its cached statement.
func (p pool) QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row {
	if st := p.c.get(query); st != nil {
		return st.QueryRowContext(ctx, args...)
	}
	return p.c.db.QueryRowContext(ctx, query, args...)
}
