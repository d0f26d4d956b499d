package postgres

import (
	"context"
	"database/sql"
	"errors"
	"fmt"

	"github.com/browsertask/browsertask/db/sqlcommon"
	"github.com/browsertask/browsertask/engine"
)

// AddQuestion stores a question of a run. A question already stored
// under the same (run_id, request_id) is kept as it is, answer included,
// so a run resumed after a crash that asks again gets the earlier answer;
// an unanswered one takes the new public key (the old private half went
// with the process that asked).
func (d *DB) AddQuestion(ctx context.Context, q engine.Question) error {
	return d.write(ctx, func(tx *sql.Tx) error {
		_, err := tx.ExecContext(ctx, `INSERT INTO run_inputs
			(run_id, request_id, kind, message, request, requested_at, expires_at, public_key)
			VALUES ($1, $2, $3, $4, $5, $6, $7, $8) ON CONFLICT (run_id, request_id) DO UPDATE
			SET public_key = excluded.public_key WHERE run_inputs.response IS NULL`,
			q.RunID, q.RequestID, q.Kind, q.Message, string(q.Request), q.RequestedAt, q.ExpiresAt, sqlcommon.NullBytes(q.PublicKey))
		if err != nil {
			return fmt.Errorf("db: add input request: %w", err)
		}
		return nil
	})
}

// Questions returns a run's questions in the order they were asked.
func (d *DB) Questions(ctx context.Context, runID string) ([]engine.Question, error) {
	rows, err := d.reader().QueryContext(ctx, `SELECT `+sqlcommon.QuestionColumns+` FROM run_inputs
		WHERE run_id = $1 ORDER BY requested_at, request_id`, runID)
	if err != nil {
		return nil, fmt.Errorf("db: list input requests: %w", err)
	}
	return sqlcommon.CollectQuestions(rows)
}

// OutstandingQuestions returns the unanswered questions of every run that
// have not expired at now, oldest first.
func (d *DB) OutstandingQuestions(ctx context.Context, now int64) ([]engine.Question, error) {
	rows, err := d.reader().QueryContext(ctx, `SELECT `+sqlcommon.QuestionColumns+` FROM run_inputs
		WHERE response IS NULL AND expires_at > $1 ORDER BY requested_at, run_id, request_id`, now)
	if err != nil {
		return nil, fmt.Errorf("db: list outstanding input requests: %w", err)
	}
	return sqlcommon.CollectQuestions(rows)
}

// SaveAnswer stores the response of an outstanding question that has not
// expired at p.Now. It reports false when the question was answered or
// expired; ErrNotFound when it was never asked.
func (d *DB) SaveAnswer(ctx context.Context, p engine.SaveAnswerParams) (bool, error) {
	var answered bool
	err := d.write(ctx, func(tx *sql.Tx) error {
		res, err := tx.ExecContext(ctx, `UPDATE run_inputs SET response = $1, answered_at = $2
			WHERE run_id = $3 AND request_id = $4 AND response IS NULL AND expires_at > $5`,
			string(p.Response), p.Now, p.RunID, p.RequestID, p.Now)
		if err != nil {
			return fmt.Errorf("db: answer input: %w", err)
		}
		if n, _ := res.RowsAffected(); n == 1 {
			answered = true
			return nil
		}
		var one int
		err = tx.QueryRowContext(ctx, `SELECT 1 FROM run_inputs WHERE run_id = $1 AND request_id = $2`, p.RunID, p.RequestID).Scan(&one)
		if errors.Is(err, sql.ErrNoRows) {
			return engine.ErrNotFound
		}
		return err
	})
	return answered, err
}
