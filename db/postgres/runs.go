package postgres

import (
	"context"

	"github.com/browsertask/browsertask/db/sqlcommon"
	"github.com/browsertask/browsertask/engine"
)

// CreateRun inserts run as queued and appends its "created" event. With idem
// set, the key is claimed in the same transaction; when a live entry holds it
// nothing is inserted and the holder's run is returned with deduplicated =
// true. The returned run is read back as stored. Errors: a wrapped SQLite
// error (ErrConflict for a duplicate run id).
func (d *DB) CreateRun(ctx context.Context, run *engine.Run, idem *engine.IdempotencyClaim) (*engine.Run, bool, error) {
	var (
		stored *engine.Run
		dedup  bool
	)
	err := d.writeTx(ctx, func(tx *txn) (err error) {
		stored, dedup, err = sqlcommon.CreateRun(ctx, tx, runCreation(), run, idem)
		return err
	})
	if err != nil {
		return nil, false, err
	}
	return stored, dedup, nil
}

// runCreation is this store's part in sqlcommon.CreateRun.
func runCreation() sqlcommon.RunCreation {
	return sqlcommon.RunCreation{ClaimKey: claimIdempotencyKey, Insert: sqlcommon.InsertRunWith(insertRunSQL, mapConstraint), Get: getRun, Events: eventSQL()}
}

// insertRunSQL writes every column of a new queued run
// (sqlcommon.InsertRunArgs).
const insertRunSQL = `INSERT INTO runs (` + sqlcommon.InsertRunColumns + `)
		VALUES ($1, $2, $3, $4, $5, 'queued', $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, '', $16, 0, $17, $18, $19, $20, $21, NULL, NULL, $22, $23, $24, $25)`

// GetRun returns the run, expired or not (the engine checks expiry).
// Errors: ErrNotFound.
func (d *DB) GetRun(ctx context.Context, runID string) (*engine.Run, error) {
	var r *engine.Run
	err := d.readTx(ctx, func(tx *txn) error {
		var err error
		r, err = getRun(ctx, tx, runID)
		return err
	})
	return r, err
}

// ListRuns returns one page of runs newest first (createdAt, then runId,
// descending) and the number of runs matching the filter. Terminal runs with
// expires_at <= f.Now are left out. Limit <= 0 means no limit.
func (d *DB) ListRuns(ctx context.Context, f engine.RunFilter) (runs []*engine.Run, total int, err error) {
	var limit any // NULL: no limit
	if f.Limit > 0 {
		limit = f.Limit
	}
	args := []any{f.Now, string(f.Status), f.TemplateID, f.SessionID, f.Profile}
	count := sqlcommon.Query{SQL: listRunsCountSQL, Args: args}
	page := sqlcommon.Query{SQL: listRunsPageSQL,
		Args: append(append([]any(nil), args...), f.BeforeRunID, f.BeforeCreatedAt, limit, max(f.Offset, 0))}
	err = d.readTx(ctx, func(tx *txn) error {
		runs, total, err = sqlcommon.ListRuns(ctx, tx, artifactIDs, count, page)
		return err
	})
	if err != nil {
		return nil, 0, err
	}
	return runs, total, nil
}

// listRunsCond is ListRuns' filter. Every filter is in the statement,
// switched off by an empty value, so the text is the same whatever the
// filter; a set filter's value is known when the statement is planned
// (custom plans), so the profile test folds to profile = $5 and
// runs_profile_created serves it, like the template and session indexes.
const listRunsCond = `NOT (status IN ` + sqlcommon.TerminalSQL + ` AND expires_at <= $1)
		AND ($2 = '' OR status = $2) AND ($3 = '' OR template_id = $3) AND ($4 = '' OR session_id = $4)
		AND ($5 = '' OR profile = $5)`

// listRunsCountSQL counts the runs ListRuns' filter matches (arguments:
// now, status, template, session, profile).
const listRunsCountSQL = `SELECT COUNT(*) FROM runs WHERE ` + listRunsCond

// listRunsPageSQL is one page of ListRuns (the count's arguments, then the
// keyset cursor's run id and created_at, limit and offset).
const listRunsPageSQL = `SELECT ` + sqlcommon.RunColumns + ` FROM runs WHERE ` + listRunsCond + `
		AND ($6 = '' OR created_at < $7 OR (created_at = $7 AND id < $6))
		ORDER BY created_at DESC, id DESC LIMIT $8::bigint OFFSET $9`
