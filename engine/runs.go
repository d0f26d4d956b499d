package engine

import (
	"context"
	"errors"
	"time"
)

// ListQuery is list_task_runs' filter and page. Limit 0 means 50.
type ListQuery struct {
	Status     string
	TemplateID string
	SessionID  string
	// Profile keeps the runs that used that browser profile (the
	// dashboard's "runs on this profile").
	Profile string
	Limit   int
	Offset  int
	// BeforeCreatedAt and BeforeRunID, when BeforeRunID is set, select only
	// runs strictly after that position in the list order (createdAt desc,
	// runId desc): keyset paging that neither repeats nor skips runs while new
	// ones are created.
	BeforeCreatedAt int64
	BeforeRunID     string
}

// RunDetail is a run with its item checkpoints and its event log, read
// with one load of the run (the dashboard's detail page).
type RunDetail struct {
	Run *Run
	// Items are the first DetailItemLimit item checkpoints ordered by
	// index, each output reduced to its top-level scalars (detail_items.go).
	Items []Item
	// ItemsTotal counts all the run's checkpoints.
	ItemsTotal int
	// Events are the first MaxEventLimit events, oldest first.
	Events []Event
}

// present readies a run read from the store for callers: its derived
// metrics as of now, and ArtifactIDs [] rather than nil (the contract's
// Run always carries the list). Every run the engine hands out passes
// here, so transports need no normalisation of their own.
func (e *Engine) present(r *Run, now int64) *Run {
	end := now
	if r.FinishedAt != nil {
		end = *r.FinishedAt
	}
	switch {
	case r.StartedAt != nil:
		r.Metrics.QueuedMs = max(*r.StartedAt-r.CreatedAt, 0)
		r.Metrics.ElapsedMs = max(end-*r.StartedAt, 0)
	default:
		r.Metrics.QueuedMs = max(end-r.CreatedAt, 0)
		r.Metrics.ElapsedMs = 0
	}
	r.Metrics.ModelCalls, r.Metrics.PromptTokens, r.Metrics.CompletionTokens = r.ModelUsage.Calls, r.ModelUsage.PromptTokens, r.ModelUsage.CompletionTokens
	if r.ArtifactIDs == nil {
		r.ArtifactIDs = []string{}
	}
	return r
}

// Get returns a run. Errors: RUN_NOT_FOUND (unknown or expired).
func (e *Engine) Get(ctx context.Context, runID string) (*Run, error) {
	r, err := e.store.GetRun(ctx, runID)
	now := e.now()
	if errors.Is(err, ErrNotFound) || (err == nil && r.Status.Terminal() && r.ExpiresAt <= now) {
		return nil, Errorf(RunNotFound, "run %q does not exist or has expired", runID).WithDetails(map[string]any{"runId": runID})
	}
	if err != nil {
		return nil, Wrap(ExecutionError, err, "load run: %v", err)
	}
	if r.Status == StatusRunning {
		reqs, err := e.store.Questions(ctx, runID)
		if err != nil {
			return nil, Wrap(ExecutionError, err, "read input requests: %v", err)
		}
		e.attachQuestions(r, reqs, now)
		if r.Question != nil {
			// The run row was read before its question: a run writes
			// progress.message ("waiting for input: …") before it stores
			// the question, so a row read after the question has the
			// message (read before, it could still say "submitting").
			again, err := e.store.GetRun(ctx, runID)
			if err != nil {
				return nil, Wrap(ExecutionError, err, "load run: %v", err)
			}
			if again.Status == StatusRunning {
				again.Question = r.Question
			}
			r = again
		}
	}
	return e.present(r, now), nil
}

// attachQuestions sets r.Question to the oldest of reqs that is r's,
// unanswered and not expired at now.
func (e *Engine) attachQuestions(r *Run, reqs []Question, now int64) {
	for _, q := range reqs {
		if q.RunID == r.RunID && !q.Answered() && now < q.ExpiresAt {
			r.Question = q.Waiting()
			return
		}
	}
}

// List returns a page of runs newest first. Errors: INVALID_PARAMETER.
func (e *Engine) List(ctx context.Context, q ListQuery) (*RunList, error) {
	if q.Status != "" && !RunStatus(q.Status).Valid() {
		return nil, Errorf(InvalidParameter, "status must be one of queued, running, succeeded, failed, partial_success, canceled, got %q", q.Status)
	}
	if q.Limit == 0 {
		q.Limit = 50
	}
	if q.Limit < 1 || q.Limit > 1000 {
		return nil, Errorf(InvalidParameter, "limit must be 1..1000, got %d", q.Limit)
	}
	if q.Offset < 0 {
		return nil, Errorf(InvalidParameter, "offset must be >= 0, got %d", q.Offset)
	}
	now := e.now()
	// The open questions are read before the runs: a run writes its
	// progress.message before it stores a question, so every run listed
	// with a question also shows what it waits for.
	waiting, err := e.store.OutstandingQuestions(ctx, now)
	if err != nil {
		return nil, Wrap(ExecutionError, err, "read input requests: %v", err)
	}
	runs, total, err := e.store.ListRuns(ctx, RunFilter{
		Status: RunStatus(q.Status), TemplateID: q.TemplateID, SessionID: q.SessionID, Profile: q.Profile,
		Limit: q.Limit, Offset: q.Offset, Now: now,
		BeforeCreatedAt: q.BeforeCreatedAt, BeforeRunID: q.BeforeRunID,
	})
	if err != nil {
		return nil, Wrap(ExecutionError, err, "list runs: %v", err)
	}
	for _, r := range runs {
		if r.Status == StatusRunning {
			e.attachQuestions(r, waiting, now)
		}
		e.present(r, now)
	}
	if runs == nil {
		runs = []*Run{}
	}
	return &RunList{Runs: runs, Total: total, Limit: q.Limit, Offset: q.Offset}, nil
}

// Items returns the run's item checkpoints ordered by index. Errors:
// RUN_NOT_FOUND.
func (e *Engine) Items(ctx context.Context, runID string) ([]Item, error) {
	if _, err := e.Get(ctx, runID); err != nil {
		return nil, err
	}
	return e.items(ctx, runID)
}

// items lists a run's checkpoints ([] when none).
func (e *Engine) items(ctx context.Context, runID string) ([]Item, error) {
	items, err := e.store.ListItems(ctx, runID)
	if err != nil {
		return nil, Wrap(ExecutionError, err, "list items: %v", err)
	}
	if items == nil {
		items = []Item{}
	}
	return items, nil
}

// Detail returns a run with its first items and first MaxEventLimit
// events, loading the run once. Errors: RUN_NOT_FOUND.
func (e *Engine) Detail(ctx context.Context, runID string) (*RunDetail, error) {
	r, err := e.Get(ctx, runID)
	if err != nil {
		return nil, err
	}
	items, total, err := e.detailItems(ctx, runID)
	if err != nil {
		return nil, err
	}
	evs, err := e.events(ctx, runID, 0, MaxEventLimit)
	if err != nil {
		return nil, err
	}
	return &RunDetail{Run: r, Items: items, ItemsTotal: total, Events: evs}, nil
}

// Wait blocks until the run is terminal and returns it. onChange (may be
// nil) is called when status or progress changes. It wakes on every local
// change, and at least every 250 ms for runs executed by peers. If ctx ends
// first, Wait returns ctx's error; the run goes on.
func (e *Engine) Wait(ctx context.Context, runID string, onChange func(*Run)) (*Run, error) {
	return e.wait(ctx, runID, onChange, false)
}

// WaitSettled is Wait that also returns when the run starts waiting for
// input (its Question is set): a caller that cannot answer questions
// itself answers with the run as it is, so nobody hangs on a person.
func (e *Engine) WaitSettled(ctx context.Context, runID string, onChange func(*Run)) (*Run, error) {
	return e.wait(ctx, runID, onChange, true)
}

func (e *Engine) wait(ctx context.Context, runID string, onChange func(*Run), orInput bool) (*Run, error) {
	t := time.NewTicker(250 * time.Millisecond)
	defer t.Stop()
	var last *Run
	for {
		ch := e.changes()
		r, err := e.Get(ctx, runID)
		if err != nil {
			if ctx.Err() != nil {
				return nil, ctx.Err()
			}
			return nil, err
		}
		if onChange != nil && (last == nil || last.Status != r.Status || last.Progress != r.Progress || (last.Question == nil) != (r.Question == nil)) {
			onChange(r)
		}
		last = r
		if r.Status.Terminal() || (orInput && r.Question != nil) {
			return r, nil
		}
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-ch:
		case <-t.C:
		}
	}
}
