package postgres

import (
	"context"
	"io"

	"github.com/browsertask/browsertask/db/sqlcommon"
	"github.com/browsertask/browsertask/engine"
)

// EachItem calls fn with each checkpoint q selects, one row at a time, in
// one read snapshot: a run of 2000 pages with 1000 links each is read back
// without holding more than one page's output. Errors: fn's error, or the
// query's.
func (d *DB) EachItem(ctx context.Context, q engine.ItemsQuery, fn func(engine.Item) error) error {
	cols := sqlcommon.ItemColumnsFor(q.NoOutput)
	return d.readTx(ctx, func(tx *txn) error {
		if q.Indexes != nil {
			return sqlcommon.EachItemAt(ctx, tx, `SELECT `+cols+` FROM run_items WHERE run_id = $1 AND idx = $2`,
				q.RunID, q.Indexes, fn)
		}
		var limit any // NULL: no limit
		if q.Limit > 0 {
			limit = int64(q.Limit)
		}
		return sqlcommon.EachItem(ctx, tx, q.RunID, fn, `SELECT `+cols+` FROM run_items
			WHERE run_id = $1 AND idx > $2 ORDER BY idx LIMIT $3::bigint`, q.RunID, q.After, limit)
	})
}

// PutArtifactFrom stores an artifact of a.Size bytes read from r in one
// transaction, one chunk (sqlcommon.ChunkSize) in memory at a time, with
// its "artifact" event: a failure, or r giving other than a.Size bytes,
// leaves neither row nor chunks. Errors: ErrNotFound (unknown run),
// ErrConflict (duplicate id), r's error.
func (d *DB) PutArtifactFrom(ctx context.Context, a engine.Artifact, r io.Reader) error {
	return d.writeTx(ctx, func(tx *txn) error {
		if err := insertArtifact(ctx, tx, a, nil); err != nil {
			return err
		}
		if err := sqlcommon.CopyChunks(ctx, tx, insertChunkSQL, a.ID, r, a.Size); err != nil {
			return err
		}
		return appendJSONEvent(ctx, tx, a.RunID, sqlcommon.EventArtifact, sqlcommon.EventOf(a), a.CreatedAt)
	})
}
