package postgres

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/browsertask/browsertask/engine"
)

// runColumns is the SELECT list scanRun reads, in order.
const runColumns = `id, template_id, template_version, session_id, owns_session, status, mode,
	progress_done, progress_total, progress_failed, progress_message, result, error, inputs,
	timeout_ms, ttl_ms, owner_id, session_owner_id, lease_expires_at, attempt, crashes, idempotency_key,
	cancel_reason, created_at, updated_at, started_at, finished_at, expires_at, output_schema,
	client_sampling, model_calls, prompt_tokens, completion_tokens, profile`

// terminalSQL is the SQL list of terminal statuses.
const terminalSQL = `('succeeded', 'failed', 'partial_success', 'canceled')`

// rowScanner is *sql.Row or *sql.Rows.
type rowScanner interface {
	Scan(dest ...any) error
}

// scanRun reads one row of runColumns. ArtifactIDs are left for
// fillArtifactIDs; Metrics stay zero (the engine computes them).
func scanRun(s rowScanner) (*engine.Run, error) {
	var (
		r                       engine.Run
		owns, sampling          int
		result, errJSON, inputs sql.NullString
		outputSchema            sql.NullString
		started, finished       sql.NullInt64
	)
	err := s.Scan(&r.RunID, &r.TemplateID, &r.TemplateVersion, &r.SessionID, &owns, &r.Status, &r.Mode,
		&r.Progress.DoneSteps, &r.Progress.TotalSteps, &r.Progress.FailedSteps, &r.Progress.Message,
		&result, &errJSON, &inputs,
		&r.TimeoutMs, &r.TTLMs, &r.OwnerID, &r.SessionOwnerID, &r.LeaseExpiresAt, &r.Attempt, &r.Crashes, &r.IdempotencyKey,
		&r.CancelReason, &r.CreatedAt, &r.UpdatedAt, &started, &finished, &r.ExpiresAt, &outputSchema,
		&sampling, &r.ModelUsage.Calls, &r.ModelUsage.PromptTokens, &r.ModelUsage.CompletionTokens, &r.Profile)
	if err != nil {
		return nil, err
	}
	r.OwnsSession = owns != 0
	r.ClientSampling = sampling != 0
	r.Result = rawOrNil(result)
	r.Inputs = rawOrNil(inputs)
	r.OutputSchema = rawOrNil(outputSchema)
	if r.Error, err = decodeError(errJSON); err != nil {
		return nil, fmt.Errorf("db: run %s: %w", r.RunID, err)
	}
	if started.Valid {
		v := started.Int64
		r.StartedAt = &v
	}
	if finished.Valid {
		v := finished.Int64
		r.FinishedAt = &v
	}
	r.ArtifactIDs = []string{}
	return &r, nil
}

// getRun loads one run with its artifact ids; ErrNotFound when missing.
func getRun(ctx context.Context, q queryer, runID string) (*engine.Run, error) {
	r, err := scanRun(q.QueryRowContext(ctx, `SELECT `+runColumns+` FROM runs WHERE id = $1`, runID))
	if errors.Is(err, sql.ErrNoRows) {
		return nil, engine.ErrNotFound
	}
	if err != nil {
		return nil, fmt.Errorf("db: get run: %w", err)
	}
	if err := fillArtifactIDs(ctx, q, []*engine.Run{r}); err != nil {
		return nil, err
	}
	return r, nil
}

// queryRuns runs a SELECT of runColumns and fills the artifact ids.
func queryRuns(ctx context.Context, q queryer, query string, args ...any) ([]*engine.Run, error) {
	rows, err := q.QueryContext(ctx, query, args...)
	if err != nil {
		return nil, fmt.Errorf("db: query runs: %w", err)
	}
	defer rows.Close()
	runs := []*engine.Run{}
	for rows.Next() {
		r, err := scanRun(rows)
		if err != nil {
			return nil, fmt.Errorf("db: scan run: %w", err)
		}
		runs = append(runs, r)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("db: query runs: %w", err)
	}
	rows.Close()
	if err := fillArtifactIDs(ctx, q, runs); err != nil {
		return nil, err
	}
	return runs, nil
}

// fillArtifactIDs sets each run's ArtifactIDs (tombstones included) in
// creation order, with one query for the whole page.
func fillArtifactIDs(ctx context.Context, q queryer, runs []*engine.Run) error {
	if len(runs) == 0 {
		return nil
	}
	byID := make(map[string]*engine.Run, len(runs))
	ids := make([]string, 0, len(runs))
	for _, r := range runs {
		byID[r.RunID] = r
		ids = append(ids, r.RunID)
	}
	// One statement text whatever the page size: the ids travel as one
	// text[] parameter.
	rows, err := q.QueryContext(ctx, `SELECT run_id, id FROM artifacts
		WHERE run_id = ANY($1::text[]) ORDER BY created_at, ord`, ids)
	if err != nil {
		return fmt.Errorf("db: artifact ids: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var runID, id string
		if err := rows.Scan(&runID, &id); err != nil {
			return fmt.Errorf("db: artifact ids: %w", err)
		}
		if r := byID[runID]; r != nil {
			r.ArtifactIDs = append(r.ArtifactIDs, id)
		}
	}
	return rows.Err()
}

// rawOrNil turns a nullable JSON column into a RawMessage (nil for NULL).
func rawOrNil(s sql.NullString) json.RawMessage {
	if !s.Valid {
		return nil
	}
	return json.RawMessage(s.String)
}

// nullJSON stores a RawMessage as text, or NULL when empty.
func nullJSON(b json.RawMessage) any {
	if len(b) == 0 {
		return nil
	}
	return string(b)
}

// encodeError stores a domain error as its contract JSON, or NULL.
func encodeError(e *engine.Error) (any, error) {
	if e == nil {
		return nil, nil
	}
	b, err := json.Marshal(e)
	if err != nil {
		return nil, fmt.Errorf("db: encode error: %w", err)
	}
	return string(b), nil
}

// decodeError reads a domain error column (nil for NULL).
func decodeError(s sql.NullString) (*engine.Error, error) {
	if !s.Valid {
		return nil, nil
	}
	var e engine.Error
	if err := json.Unmarshal([]byte(s.String), &e); err != nil {
		return nil, fmt.Errorf("decode error column: %w", err)
	}
	return &e, nil
}

// boolInt stores a bool as 0/1.
func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}
