package engine

import (
	"context"
)

// Run history: a run is forgotten runTtlMs after it ends (get_task_run
// answers RUN_NOT_FOUND, the idempotency window closes, as the contract
// says), but a short record of it — template, status, times, progress
// counts, error code and message, a one-line inputs summary, the ids of
// its artifacts; no result, no inputs, no secrets — is kept for
// --history-ttl (7 days), for the dashboard and `browsertask runs --all`.
// The janitor writes it just before it deletes the run.

// archive writes the history rows of the runs that expired by now.
func (e *Engine) archive(ctx context.Context, now int64) error {
	const batch = 500
	for {
		n, err := e.store.ArchiveRuns(ctx, ArchiveParams{Now: now, HistoryTTLMs: e.cfg.HistoryTTL.Milliseconds(),
			Summarize: e.InputsSummary, Batch: batch})
		if err != nil {
			return err
		}
		if n < batch {
			return nil
		}
	}
}

// HistoryList is a page of run history.
type HistoryList struct {
	Runs  []HistoryEntry `json:"runs"`
	Total int            `json:"total"`
}

// HistoryEntry is a history row with the artifacts of the run that still
// exist.
type HistoryEntry struct {
	HistoryRun
	Artifacts []*Artifact `json:"artifacts"`
}

// History returns the history of forgotten runs, newest first, limit rows
// (<= 0: 50) from offset, each with its artifacts that have not expired.
func (e *Engine) History(ctx context.Context, limit, offset int) (*HistoryList, error) {
	rows, total, err := e.store.ListHistory(ctx, HistoryQuery{Now: e.now(), Limit: limit, Offset: offset})
	if err != nil {
		return nil, Wrap(ExecutionError, err, "list run history: %v", err)
	}
	out := &HistoryList{Runs: make([]HistoryEntry, 0, len(rows)), Total: total}
	for _, h := range rows {
		entry := HistoryEntry{HistoryRun: h, Artifacts: []*Artifact{}}
		for _, id := range h.ArtifactIDs {
			if a, err := e.Artifact(ctx, id); err == nil {
				entry.Artifacts = append(entry.Artifacts, a)
			}
		}
		out.Runs = append(out.Runs, entry)
	}
	return out, nil
}
