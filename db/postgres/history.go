package postgres

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"

	"github.com/browsertask/browsertask/db/sqlcommon"
	"github.com/browsertask/browsertask/engine"
)

// ArchiveRuns writes the history rows of the terminal runs that expired
// by p.Now and have none yet, at most p.Batch of them, in one transaction.
func (d *DB) ArchiveRuns(ctx context.Context, p engine.ArchiveParams) (int, error) {
	batch := p.Batch
	if batch <= 0 {
		batch = defaultPurgeBatch
	}
	n := 0
	err := d.writeTx(ctx, func(tx *txn) error {
		n = 0
		runs, err := queryRuns(ctx, tx, `SELECT `+sqlcommon.RunColumns+` FROM runs
			WHERE status IN `+sqlcommon.TerminalSQL+` AND expires_at <= $1
				AND id NOT IN (SELECT id FROM run_history)
			ORDER BY expires_at LIMIT $2`, p.Now, batch)
		if err != nil {
			return err
		}
		for _, r := range runs {
			var code, msg string
			if r.Error != nil {
				code, msg = string(r.Error.Code), r.Error.Message
			}
			summary := ""
			if p.Summarize != nil {
				summary = p.Summarize(r.TemplateID, r.Inputs)
			}
			ids, err := json.Marshal(r.ArtifactIDs)
			if err != nil {
				return fmt.Errorf("db: archive run %s: %w", r.RunID, err)
			}
			_, err = tx.ExecContext(ctx, `INSERT INTO run_history (id, template_id, template_version, session_id,
					status, created_at, started_at, finished_at, forgotten_at, progress_done, progress_total,
					progress_failed, error_code, error_message, inputs_summary, artifact_ids, expires_at)
				VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17)`,
				r.RunID, r.TemplateID, r.TemplateVersion, r.SessionID, string(r.Status), r.CreatedAt,
				r.StartedAt, r.FinishedAt, p.Now, r.Progress.DoneSteps, r.Progress.TotalSteps,
				r.Progress.FailedSteps, code, msg, summary, string(ids), p.Now+p.HistoryTTLMs)
			if err != nil {
				return fmt.Errorf("db: archive run %s: %w", r.RunID, err)
			}
			n++
		}
		return nil
	})
	return n, err
}

// ListHistory returns unexpired history rows newest first and their count.
func (d *DB) ListHistory(ctx context.Context, q engine.HistoryQuery) ([]engine.HistoryRun, int, error) {
	var total int
	if err := d.reader().QueryRowContext(ctx, `SELECT COUNT(*) FROM run_history WHERE expires_at > $1`, q.Now).Scan(&total); err != nil {
		return nil, 0, fmt.Errorf("db: count history: %w", err)
	}
	limit := q.Limit
	if limit <= 0 {
		limit = 50
	}
	rows, err := d.reader().QueryContext(ctx, `SELECT id, template_id, template_version, session_id, status,
			created_at, started_at, finished_at, forgotten_at, progress_done, progress_total, progress_failed,
			error_code, error_message, inputs_summary, artifact_ids, expires_at
		FROM run_history WHERE expires_at > $1 ORDER BY created_at DESC, id DESC LIMIT $2 OFFSET $3`, q.Now, limit, max(q.Offset, 0))
	if err != nil {
		return nil, 0, fmt.Errorf("db: list history: %w", err)
	}
	defer rows.Close()
	out := []engine.HistoryRun{}
	for rows.Next() {
		var (
			h                 engine.HistoryRun
			status, ids       string
			started, finished sql.NullInt64
		)
		if err := rows.Scan(&h.RunID, &h.TemplateID, &h.TemplateVersion, &h.SessionID, &status, &h.CreatedAt,
			&started, &finished, &h.ForgottenAt, &h.Progress.DoneSteps, &h.Progress.TotalSteps, &h.Progress.FailedSteps,
			&h.ErrorCode, &h.ErrorMessage, &h.InputsSummary, &ids, &h.ExpiresAt); err != nil {
			return nil, 0, fmt.Errorf("db: list history: %w", err)
		}
		h.Status = engine.RunStatus(status)
		if started.Valid {
			h.StartedAt = &started.Int64
		}
		if finished.Valid {
			h.FinishedAt = &finished.Int64
		}
		if err := json.Unmarshal([]byte(ids), &h.ArtifactIDs); err != nil || h.ArtifactIDs == nil {
			h.ArtifactIDs = []string{}
		}
		out = append(out, h)
	}
	if err := rows.Err(); err != nil {
		return nil, 0, fmt.Errorf("db: list history: %w", err)
	}
	return out, total, nil
}
