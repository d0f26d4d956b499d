package db

import (
	"context"
	"database/sql"

	"github.com/browsertask/browsertask/db/sqlcommon"
	"github.com/browsertask/browsertask/engine"
)

// questionSQL is the SQLite store's statements for run questions.
var questionSQL = sqlcommon.QuestionStatements{
	Add: `INSERT INTO run_inputs
		(run_id, request_id, kind, message, request, requested_at, expires_at, public_key)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT (run_id, request_id) DO UPDATE
		SET public_key = excluded.public_key WHERE response IS NULL`,
	OfRun: `SELECT ` + sqlcommon.QuestionColumns + ` FROM run_inputs
		WHERE run_id = ? ORDER BY requested_at, request_id`,
	Outstanding: `SELECT ` + sqlcommon.QuestionColumns + ` FROM run_inputs
		WHERE response IS NULL AND expires_at > ? ORDER BY requested_at, run_id, request_id`,
	Answer: `UPDATE run_inputs SET response = ?, answered_at = ?
		WHERE run_id = ? AND request_id = ? AND response IS NULL AND expires_at > ?`,
	Exists: `SELECT 1 FROM run_inputs WHERE run_id = ? AND request_id = ?`,
}

// AddQuestion stores a question of a run. A question already stored
// under the same (run_id, request_id) is kept as it is, answer included,
// so a run resumed after a crash that asks again gets the earlier answer;
// an unanswered one takes the new public key (the old private half went
// with the process that asked).
func (d *DB) AddQuestion(ctx context.Context, q engine.Question) error {
	return d.write(ctx, func(tx *sql.Tx) error { return sqlcommon.AddQuestion(ctx, tx, questionSQL, q) })
}

// Questions returns a run's questions in the order they were asked.
func (d *DB) Questions(ctx context.Context, runID string) ([]engine.Question, error) {
	return sqlcommon.Questions(ctx, d.reader(), questionSQL, runID)
}

// OutstandingQuestions returns the unanswered questions of every run that
// have not expired at now, oldest first.
func (d *DB) OutstandingQuestions(ctx context.Context, now int64) ([]engine.Question, error) {
	return sqlcommon.OutstandingQuestions(ctx, d.reader(), questionSQL, now)
}

// SaveAnswer stores the response of an outstanding question that has not
// expired at p.Now. It reports false when the question was answered or
// expired; ErrNotFound when it was never asked.
func (d *DB) SaveAnswer(ctx context.Context, p engine.SaveAnswerParams) (answered bool, err error) {
	err = d.write(ctx, func(tx *sql.Tx) error {
		answered, err = sqlcommon.SaveAnswer(ctx, tx, questionSQL, p)
		return err
	})
	return answered, err
}
