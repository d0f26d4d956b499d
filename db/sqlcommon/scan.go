// Package sqlcommon is the layer the SQLite store (package db) and the
// PostgreSQL store (package db/postgres) share: the column lists, the
// scanning of rows into engine types, the JSON columns, the row loops and
// the chunking of artifact bytes. Both stores run through database/sql, so
// one *sql.Row or *sql.Rows scanner serves both.
//
// The SQL itself stays hand-written in each store (placeholders, LIMIT
// forms, list parameters and functions such as MAX/GREATEST differ): every
// helper that runs a statement takes its text from the store, most through
// a statements struct per area (FinishStatements, ClaimStatements, …)
// whose fields say the arguments' order. Arguments are positional, so a
// statement that uses one twice numbers it ($N in PostgreSQL, ?N in
// SQLite). What is here is the Go control flow the two stores had written
// twice; what really differs (PostgreSQL's advisory locks for idempotency
// keys and migrations, SQLite's changes() and PRAGMAs) stays in the store.
package sqlcommon

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"

	"github.com/browsertask/browsertask/engine"
)

// Scanner is *sql.Row or *sql.Rows: what a scan function reads one row from.
type Scanner interface {
	Scan(dest ...any) error
}

// Querier is what read helpers need; both stores' transactions, *sql.Tx
// and *sql.DB satisfy it.
type Querier interface {
	QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error)
	QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row
}

// Execer is what write helpers need of a transaction.
type Execer interface {
	ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error)
}

// Tx is a transaction that both reads and writes: both stores' txn and
// *sql.Tx.
type Tx interface {
	Querier
	Execer
}

// Collect reads every row of rows with scan and closes rows, so the caller
// may run its next statement at once (the SQLite store's cached statements
// must not run again while their rows are open). what names the query in
// errors ("db: what: ..."). The result is never nil.
func Collect[T any](rows *sql.Rows, what string, scan func(Scanner) (T, error)) ([]T, error) {
	out := []T{}
	err := Each(rows, what, scan, func(v T) error {
		out = append(out, v)
		return nil
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// Each calls fn with each row of rows as scan reads it, one row in memory
// at a time, and closes rows. A scan or rows error comes back as "db:
// what: ..."; fn's error comes back as it is.
func Each[T any](rows *sql.Rows, what string, scan func(Scanner) (T, error), fn func(T) error) error {
	defer rows.Close()
	for rows.Next() {
		v, err := scan(rows)
		if err != nil {
			return fmt.Errorf("db: %s: %w", what, err)
		}
		if err := fn(v); err != nil {
			return err
		}
	}
	if err := rows.Err(); err != nil {
		return fmt.Errorf("db: %s: %w", what, err)
	}
	return nil
}

// RawOrNil turns a nullable JSON column into a RawMessage (nil for NULL).
func RawOrNil(s sql.NullString) json.RawMessage {
	if !s.Valid {
		return nil
	}
	return json.RawMessage(s.String)
}

// NullJSON stores a RawMessage as text, or NULL when empty.
func NullJSON(b json.RawMessage) any {
	if len(b) == 0 {
		return nil
	}
	return string(b)
}

// EncodeError stores a domain error as its contract JSON, or NULL.
func EncodeError(e *engine.Error) (any, error) {
	if e == nil {
		return nil, nil
	}
	b, err := json.Marshal(e)
	if err != nil {
		return nil, fmt.Errorf("db: encode error: %w", err)
	}
	return string(b), nil
}

// DecodeError reads a domain error column (nil for NULL).
func DecodeError(s sql.NullString) (*engine.Error, error) {
	if !s.Valid {
		return nil, nil
	}
	var e engine.Error
	if err := json.Unmarshal([]byte(s.String), &e); err != nil {
		return nil, fmt.Errorf("decode error column: %w", err)
	}
	return &e, nil
}

// BoolInt stores a bool as 0/1: both schemas keep flags in integer
// columns, so one encoding serves both stores.
func BoolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}

// nullInt64Ptr turns a nullable integer column into a pointer (nil for
// NULL).
func nullInt64Ptr(n sql.NullInt64) *int64 {
	if !n.Valid {
		return nil
	}
	v := n.Int64
	return &v
}
