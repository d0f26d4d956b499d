package postgres

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io"

	"github.com/browsertask/browsertask/engine"
)

// EachItem calls fn with each checkpoint q selects, one row at a time, in
// one read snapshot: a run of 2000 pages with 1000 links each is read back
// without holding more than one page's output. Errors: fn's error, or the
// query's.
func (d *DB) EachItem(ctx context.Context, q engine.ItemsQuery, fn func(engine.Item) error) error {
	out := "output"
	if q.NoOutput {
		out = "NULL"
	}
	return d.readTx(ctx, func(tx *txn) error {
		if q.Indexes != nil {
			for _, idx := range q.Indexes {
				it, err := scanItem(tx.QueryRowContext(ctx, `SELECT idx, key, status, `+out+`, error
					FROM run_items WHERE run_id = $1 AND idx = $2`, q.RunID, idx), q.RunID)
				if errors.Is(err, sql.ErrNoRows) {
					continue
				}
				if err != nil {
					return err
				}
				if err := fn(it); err != nil {
					return err
				}
			}
			return nil
		}
		var limit any // NULL: no limit
		if q.Limit > 0 {
			limit = int64(q.Limit)
		}
		rows, err := tx.QueryContext(ctx, `SELECT idx, key, status, `+out+`, error FROM run_items
			WHERE run_id = $1 AND idx > $2 ORDER BY idx LIMIT $3::bigint`, q.RunID, q.After, limit)
		if err != nil {
			return fmt.Errorf("db: read items: %w", err)
		}
		defer rows.Close()
		for rows.Next() {
			it, err := scanItem(rows, q.RunID)
			if err != nil {
				return err
			}
			if err := fn(it); err != nil {
				return err
			}
		}
		if err := rows.Err(); err != nil {
			return fmt.Errorf("db: read items: %w", err)
		}
		return nil
	})
}

// scanner is a *sql.Row or *sql.Rows.
type scanner interface{ Scan(dest ...any) error }

// scanItem reads one run_items row (idx, key, status, output, error).
func scanItem(s scanner, runID string) (engine.Item, error) {
	var (
		it              engine.Item
		output, errJSON sql.NullString
	)
	if err := s.Scan(&it.Index, &it.Key, &it.Status, &output, &errJSON); err != nil {
		if errors.Is(err, sql.ErrNoRows) {
			return it, err
		}
		return it, fmt.Errorf("db: read items: %w", err)
	}
	it.Output = rawOrNil(output)
	var err error
	if it.Error, err = decodeError(errJSON); err != nil {
		return it, fmt.Errorf("db: item %d of run %s: %w", it.Index, runID, err)
	}
	return it, nil
}

// PutArtifactFrom stores an artifact of a.Size bytes read from r in one
// transaction, one chunk (chunkSize) in memory at a time, with its
// "artifact" event: a failure, or r giving other than a.Size bytes,
// leaves neither row nor chunks. Errors: ErrNotFound (unknown run),
// ErrConflict (duplicate id), r's error.
func (d *DB) PutArtifactFrom(ctx context.Context, a engine.Artifact, r io.Reader) error {
	return d.writeTx(ctx, func(tx *txn) error {
		if err := insertArtifact(ctx, tx, a, nil); err != nil {
			return err
		}
		buf := make([]byte, chunkSize)
		var total int64
		for seq := 0; ; seq++ {
			n, err := io.ReadFull(r, buf)
			if n > 0 {
				if _, xerr := tx.ExecContext(ctx, `INSERT INTO artifact_chunks (artifact_id, seq, data) VALUES ($1, $2, $3)`,
					a.ID, seq, buf[:n]); xerr != nil {
					return fmt.Errorf("db: put artifact chunk %d: %w", seq, xerr)
				}
				total += int64(n)
			}
			if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
				break
			}
			if err != nil {
				return fmt.Errorf("db: put artifact: read: %w", err)
			}
		}
		if total != a.Size {
			return fmt.Errorf("db: put artifact %s: %d bytes read, %d announced", a.ID, total, a.Size)
		}
		return appendJSONEvent(ctx, tx, a.RunID, eventArtifact,
			artifactEvent{ArtifactID: a.ID, Name: a.Name, MimeType: a.MimeType, Size: a.Size}, a.CreatedAt)
	})
}
