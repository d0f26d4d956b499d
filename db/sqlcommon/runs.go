package sqlcommon

import (
	"context"
	"database/sql"
	"errors"
	"fmt"

	"github.com/browsertask/browsertask/engine"
)

// RunColumns is the SELECT list ScanRun reads, in order. Both schemas name
// and order the runs columns alike.
const RunColumns = `id, template_id, template_version, session_id, owns_session, status, mode,
	progress_done, progress_total, progress_failed, progress_message, result, error, inputs,
	timeout_ms, ttl_ms, owner_id, session_owner_id, lease_expires_at, attempt, crashes, idempotency_key,
	cancel_reason, created_at, updated_at, started_at, finished_at, expires_at, output_schema,
	client_sampling, model_calls, prompt_tokens, completion_tokens, profile`

// TerminalSQL is the SQL list of terminal statuses.
const TerminalSQL = `('succeeded', 'failed', 'partial_success', 'canceled')`

// InsertRunColumns is the column list of a new run's INSERT; each store
// writes its own VALUES (placeholders, and the literals 'queued', the empty string, 0
// and NULL in the places InsertRunArgs leaves out) and passes
// InsertRunArgs in this order.
const InsertRunColumns = `id, template_id, template_version, session_id,
		owns_session, status, mode, progress_done, progress_total, progress_failed, progress_message,
		result, error, inputs, timeout_ms, ttl_ms, owner_id, session_owner_id, lease_expires_at,
		attempt, idempotency_key, cancel_reason, created_at, updated_at, started_at, finished_at,
		expires_at, output_schema, client_sampling, profile`

// InsertRunArgs is the 25 arguments of a new run's INSERT, in the order of
// InsertRunColumns without status ('queued'), owner_id (the empty string),
// lease_expires_at (0), started_at and finished_at (NULL). The stored
// idempotency key is the run's own, else the claim's; updated_at is
// created_at when the run has none.
func InsertRunArgs(r *engine.Run, idem *engine.IdempotencyClaim) ([]any, error) {
	errJSON, err := EncodeError(r.Error)
	if err != nil {
		return nil, err
	}
	key := r.IdempotencyKey
	if key == "" && idem != nil {
		key = idem.Key
	}
	updated := r.UpdatedAt
	if updated == 0 {
		updated = r.CreatedAt
	}
	return []any{r.RunID, r.TemplateID, r.TemplateVersion, r.SessionID, BoolInt(r.OwnsSession), string(r.Mode),
		r.Progress.DoneSteps, r.Progress.TotalSteps, r.Progress.FailedSteps, r.Progress.Message,
		NullJSON(r.Result), errJSON, NullJSON(r.Inputs), r.TimeoutMs, r.TTLMs, r.SessionOwnerID,
		r.Attempt, key, r.CancelReason, r.CreatedAt, updated, r.ExpiresAt, NullJSON(r.OutputSchema),
		BoolInt(r.ClientSampling), r.Profile}, nil
}

// ScanRun reads one row of RunColumns. ArtifactIDs are left empty for
// FillArtifactIDs; Metrics stay zero (the engine computes them).
func ScanRun(s Scanner) (*engine.Run, error) {
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
	r.Result = RawOrNil(result)
	r.Inputs = RawOrNil(inputs)
	r.OutputSchema = RawOrNil(outputSchema)
	if r.Error, err = DecodeError(errJSON); err != nil {
		return nil, fmt.Errorf("run %s: %w", r.RunID, err)
	}
	r.StartedAt = nullInt64Ptr(started)
	r.FinishedAt = nullInt64Ptr(finished)
	r.ArtifactIDs = []string{}
	return &r, nil
}

// ArtifactIDsStatement is a store's statement for the artifact ids of a
// page of runs: its SQL, selecting (run_id, id) in creation order, and the
// one argument carrying runIDs (SQLite: a JSON array for json_each;
// PostgreSQL: a text[]), so the statement text is the same whatever the
// page size and is prepared once.
type ArtifactIDsStatement func(runIDs []string) (query string, arg any, err error)

// GetRun loads one run with query (selecting RunColumns, one argument: the
// run id) and fills its artifact ids. Errors: engine.ErrNotFound.
func GetRun(ctx context.Context, q Querier, query, runID string, ids ArtifactIDsStatement) (*engine.Run, error) {
	r, err := ScanRun(q.QueryRowContext(ctx, query, runID))
	if errors.Is(err, sql.ErrNoRows) {
		return nil, engine.ErrNotFound
	}
	if err != nil {
		return nil, fmt.Errorf("db: get run: %w", err)
	}
	if err := FillArtifactIDs(ctx, q, []*engine.Run{r}, ids); err != nil {
		return nil, err
	}
	return r, nil
}

// QueryRuns runs a SELECT of RunColumns and fills the artifact ids of the
// runs it finds, with one more query for the whole page.
func QueryRuns(ctx context.Context, q Querier, ids ArtifactIDsStatement, query string, args ...any) ([]*engine.Run, error) {
	rows, err := q.QueryContext(ctx, query, args...)
	if err != nil {
		return nil, fmt.Errorf("db: query runs: %w", err)
	}
	runs, err := Collect(rows, "query runs", ScanRun)
	if err != nil {
		return nil, err
	}
	if err := FillArtifactIDs(ctx, q, runs, ids); err != nil {
		return nil, err
	}
	return runs, nil
}

// FillArtifactIDs sets each run's ArtifactIDs (tombstones included) in
// creation order, with one query for the whole page.
func FillArtifactIDs(ctx context.Context, q Querier, runs []*engine.Run, ids ArtifactIDsStatement) error {
	if len(runs) == 0 {
		return nil
	}
	byID := make(map[string]*engine.Run, len(runs))
	list := make([]string, 0, len(runs))
	for _, r := range runs {
		byID[r.RunID] = r
		list = append(list, r.RunID)
	}
	query, arg, err := ids(list)
	if err != nil {
		return fmt.Errorf("db: artifact ids: %w", err)
	}
	rows, err := q.QueryContext(ctx, query, arg)
	if err != nil {
		return fmt.Errorf("db: artifact ids: %w", err)
	}
	return Each(rows, "artifact ids", scanPair, func(p [2]string) error {
		if r := byID[p[0]]; r != nil {
			r.ArtifactIDs = append(r.ArtifactIDs, p[1])
		}
		return nil
	})
}

// scanPair reads a row of two text columns.
func scanPair(s Scanner) ([2]string, error) {
	var p [2]string
	err := s.Scan(&p[0], &p[1])
	return p, err
}
