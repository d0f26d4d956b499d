package db

import (
	"context"
	"strings"

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
		VALUES (?, ?, ?, ?, ?, 'queued', ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, '', ?, 0, ?, ?, ?, ?, ?, NULL, NULL, ?, ?, ?, ?)`

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
	count, page := listRunsSQL(f)
	err = d.readTx(ctx, func(tx *txn) error {
		runs, total, err = sqlcommon.ListRuns(ctx, tx, artifactIDs, count, page)
		return err
	})
	if err != nil {
		return nil, 0, err
	}
	return runs, total, nil
}

// listRunsSQL is ListRuns' two statements for f, with their arguments:
// the count of the runs f matches and one page of them. Only the filters f
// sets are in the text (SQLite plans each text once and caches it), so
// each filter can use its index (runs_template_created,
// runs_session_created, runs_profile_created).
func listRunsSQL(f engine.RunFilter) (count, page sqlcommon.Query) {
	where := []string{`NOT (status IN ` + sqlcommon.TerminalSQL + ` AND expires_at <= ?)`}
	args := []any{f.Now}
	if f.Status != "" {
		where = append(where, `status = ?`)
		args = append(args, string(f.Status))
	}
	if f.TemplateID != "" {
		where = append(where, `template_id = ?`)
		args = append(args, f.TemplateID)
	}
	if f.SessionID != "" {
		where = append(where, `session_id = ?`)
		args = append(args, f.SessionID)
	}
	if f.Profile != "" {
		where = append(where, `profile = ?`)
		args = append(args, f.Profile)
	}
	cond := strings.Join(where, ` AND `)
	limit := f.Limit
	if limit <= 0 {
		limit = -1
	}
	offset := max(f.Offset, 0)
	pageCond, pageArgs := cond, append([]any(nil), args...)
	if f.BeforeRunID != "" {
		pageCond += ` AND (created_at < ? OR (created_at = ? AND id < ?))`
		pageArgs = append(pageArgs, f.BeforeCreatedAt, f.BeforeCreatedAt, f.BeforeRunID)
	}
	return sqlcommon.Query{SQL: `SELECT COUNT(*) FROM runs WHERE ` + cond, Args: args},
		sqlcommon.Query{SQL: `SELECT ` + sqlcommon.RunColumns + ` FROM runs WHERE ` + pageCond +
			` ORDER BY created_at DESC, id DESC LIMIT ? OFFSET ?`, Args: append(pageArgs, limit, offset)}
}
