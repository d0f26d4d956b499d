package db

import (
	"context"
	"io"

	"github.com/browsertask/browsertask/db/sqlcommon"
	"github.com/browsertask/browsertask/engine"
)

// itemReads is the SQLite store's statements for streaming checkpoints.
var itemReads = sqlcommon.ItemReads{
	At: func(cols string) string { return `SELECT ` + cols + ` FROM run_items WHERE run_id = ? AND idx = ?` },
	After: func(cols string) string {
		return `SELECT ` + cols + ` FROM run_items WHERE run_id = ? AND idx > ? ORDER BY idx LIMIT ?`
	},
	NoLimit: int64(-1), // SQLite: LIMIT -1 is no limit
}

// EachItem calls fn with each checkpoint q selects, one row at a time, in
// one read snapshot: a run of 2000 pages with 1000 links each is read back
// without holding more than one page's output. Errors: fn's error, or the
// query's.
func (d *DB) EachItem(ctx context.Context, q engine.ItemsQuery, fn func(engine.Item) error) error {
	return d.readTx(ctx, func(tx *txn) error { return sqlcommon.EachItemOf(ctx, tx, itemReads, q, fn) })
}

// PutArtifactFrom stores an artifact of a.Size bytes read from r in one
// transaction, one chunk (sqlcommon.ChunkSize) in memory at a time, with
// its "artifact" event: a failure, or r giving other than a.Size bytes,
// leaves neither row nor chunks. Errors: ErrNotFound (unknown run),
// ErrConflict (duplicate id), r's error.
func (d *DB) PutArtifactFrom(ctx context.Context, a engine.Artifact, r io.Reader) error {
	return d.writeTx(ctx, func(tx *txn) error { return sqlcommon.PutArtifactFrom(ctx, tx, artifactWrites, a, r) })
}
