package sqlcommon

import (
	"context"
	"database/sql"
	"errors"
	"fmt"

	"github.com/browsertask/browsertask/engine"
)

// QuestionStatements is a store's SQL for the questions runs ask
// (run_inputs); arguments in the order each field names.
type QuestionStatements struct {
	// Add inserts a question, keeping one already stored under its run and
	// request id (an unanswered one takes the new public key): run id,
	// request id, kind, message, request, requested_at, expires_at,
	// public key.
	Add string
	// OfRun selects QuestionColumns of a run's questions in asking order:
	// run id.
	OfRun string
	// Outstanding selects QuestionColumns of the unanswered, unexpired
	// questions, oldest first: now.
	Outstanding string
	// Answer stores the response of an outstanding unexpired question:
	// response, now, run id, request id, now.
	Answer string
	// Exists selects 1 for a question: run id, request id.
	Exists string
}

// AddQuestion is engine.Store.AddQuestion in the caller's transaction.
func AddQuestion(ctx context.Context, tx Execer, st QuestionStatements, q engine.Question) error {
	_, err := tx.ExecContext(ctx, st.Add, q.RunID, q.RequestID, q.Kind, q.Message, string(q.Request),
		q.RequestedAt, q.ExpiresAt, NullBytes(q.PublicKey))
	if err != nil {
		return fmt.Errorf("db: add input request: %w", err)
	}
	return nil
}

// Questions is engine.Store.Questions on q.
func Questions(ctx context.Context, q Querier, st QuestionStatements, runID string) ([]engine.Question, error) {
	rows, err := q.QueryContext(ctx, st.OfRun, runID)
	if err != nil {
		return nil, fmt.Errorf("db: list input requests: %w", err)
	}
	return CollectQuestions(rows)
}

// OutstandingQuestions is engine.Store.OutstandingQuestions on q.
func OutstandingQuestions(ctx context.Context, q Querier, st QuestionStatements, now int64) ([]engine.Question, error) {
	rows, err := q.QueryContext(ctx, st.Outstanding, now)
	if err != nil {
		return nil, fmt.Errorf("db: list outstanding input requests: %w", err)
	}
	return CollectQuestions(rows)
}

// SaveAnswer is engine.Store.SaveAnswer in the caller's transaction: true
// when the answer was stored, false when the question was answered or
// expired, ErrNotFound when it was never asked.
func SaveAnswer(ctx context.Context, tx Tx, st QuestionStatements, p engine.SaveAnswerParams) (bool, error) {
	res, err := tx.ExecContext(ctx, st.Answer, string(p.Response), p.Now, p.RunID, p.RequestID, p.Now)
	if err != nil {
		return false, fmt.Errorf("db: answer input: %w", err)
	}
	if n, _ := res.RowsAffected(); n == 1 {
		return true, nil
	}
	var one int
	err = tx.QueryRowContext(ctx, st.Exists, p.RunID, p.RequestID).Scan(&one)
	if errors.Is(err, sql.ErrNoRows) {
		return false, engine.ErrNotFound
	}
	return false, err
}
