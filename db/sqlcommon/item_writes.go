package sqlcommon

import (
	"context"
	"fmt"

	"github.com/browsertask/browsertask/engine"
)

// ItemStatements is a store's SQL for a run's progress, item checkpoints
// and model usage; arguments in the order each field names. Every write
// is a compare-and-set on the run being running and held by the caller
// (owner and attempt), returning the run's id when it matched.
type ItemStatements struct {
	RunStatements
	// Progress writes a run's progress: done, total, failed, message, now,
	// id, owner, attempt.
	Progress string
	// Upsert writes one item checkpoint: run id, index, key, status,
	// output, error.
	Upsert string
	// List selects ItemColumns of a run's items by index: run id.
	List string
	// Stopped selects StoppedRunColumns of a template version's stopped
	// runs, newest first: template id, version, now, before.
	Stopped string
	// Held selects a run's id when it is running and held: id, owner,
	// attempt.
	Held string
	// Adopt copies one run's succeeded items into another: to, from.
	Adopt string
	// Usage adds model usage: calls, prompt tokens, completion tokens,
	// now, id, owner, attempt.
	Usage string
}

// SaveProgress is engine.Store.SaveProgress in the caller's transaction.
func SaveProgress(ctx context.Context, tx Tx, st ItemStatements, runID string, h engine.Holder, p engine.Progress, now int64) error {
	return CAS(ctx, tx, st.RunExists, runID, st.Progress,
		p.DoneSteps, p.TotalSteps, p.FailedSteps, p.Message, now, runID, h.OwnerID, h.Attempt)
}

// SaveItem is engine.Store.SaveItem in the caller's transaction: the
// progress compare-and-set, the checkpoint and an "item" event.
func SaveItem(ctx context.Context, tx Tx, st ItemStatements, runID string, h engine.Holder, it engine.Item, p engine.Progress, now int64) error {
	errJSON, err := EncodeError(it.Error)
	if err != nil {
		return err
	}
	if err := SaveProgress(ctx, tx, st, runID, h, p, now); err != nil {
		return err
	}
	if _, err := tx.ExecContext(ctx, st.Upsert, runID, it.Index, it.Key, it.Status, NullJSON(it.Output), errJSON); err != nil {
		return fmt.Errorf("db: save item: %w", err)
	}
	return AppendJSONEvent(ctx, tx, st.Events, runID, EventItem, ItemEvent{Index: it.Index, Key: it.Key, Status: it.Status}, now)
}

// RunItems is engine.Store.ListItems on q.
func RunItems(ctx context.Context, q Querier, st ItemStatements, runID string) ([]engine.Item, error) {
	return ListItems(ctx, q, runID, st.List, runID)
}

// StoppedRuns is engine.Store.StoppedRuns on q.
func StoppedRuns(ctx context.Context, q Querier, st ItemStatements, sq engine.StoppedRunsQuery) ([]engine.StoppedRun, error) {
	rows, err := q.QueryContext(ctx, st.Stopped, sq.TemplateID, sq.Version, sq.Now, sq.Before)
	if err != nil {
		return nil, fmt.Errorf("db: stopped runs: %w", err)
	}
	return Collect(rows, "stopped runs", ScanStoppedRun)
}

// AdoptItems is engine.Store.AdoptItems in the caller's transaction: it
// copies from's succeeded items into to (held by h), appends an "adopted"
// event and returns to's items.
func AdoptItems(ctx context.Context, tx Tx, st ItemStatements, from, to string, h engine.Holder, now int64) ([]engine.Item, error) {
	if err := CAS(ctx, tx, st.RunExists, to, st.Held, to, h.OwnerID, h.Attempt); err != nil {
		return nil, err
	}
	if _, err := tx.ExecContext(ctx, st.Adopt, to, from); err != nil {
		return nil, fmt.Errorf("db: adopt items: %w", err)
	}
	items, err := RunItems(ctx, tx, st, to)
	if err != nil {
		return nil, err
	}
	if err := AppendJSONEvent(ctx, tx, st.Events, to, "adopted", AdoptedEvent{FromRunID: from, Items: len(items)}, now); err != nil {
		return nil, err
	}
	return items, nil
}

// AddModelUsage is engine.Store.AddModelUsage in the caller's
// transaction.
func AddModelUsage(ctx context.Context, tx Tx, st ItemStatements, runID string, h engine.Holder, u engine.ModelUsage, now int64) error {
	return CAS(ctx, tx, st.RunExists, runID, st.Usage,
		u.Calls, u.PromptTokens, u.CompletionTokens, now, runID, h.OwnerID, h.Attempt)
}
