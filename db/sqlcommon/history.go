package sqlcommon

import (
	"context"
	"fmt"

	"github.com/browsertask/browsertask/engine"
)

// HistoryStatements is a store's SQL for run_history; arguments in the
// order each field names.
type HistoryStatements struct {
	// ArtifactIDs fills the artifact ids of the runs Due selects.
	ArtifactIDs ArtifactIDsStatement
	// Due selects RunColumns of the terminal runs expired by now that have
	// no history row yet, soonest expired first: now, limit.
	Due string
	// Insert inserts a history row: HistoryArgs.
	Insert string
	// Count counts the unexpired history rows: now.
	Count string
	// Page selects HistoryColumns of unexpired rows newest first: now,
	// limit, offset.
	Page string
}

// ArchiveRuns is engine.Store.ArchiveRuns in the caller's transaction;
// batch is p.Batch or the store's default. It returns the rows written.
func ArchiveRuns(ctx context.Context, tx Tx, st HistoryStatements, p engine.ArchiveParams, batch int) (int, error) {
	runs, err := QueryRuns(ctx, tx, st.ArtifactIDs, st.Due, p.Now, batch)
	if err != nil {
		return 0, err
	}
	for i, r := range runs {
		summary := ""
		if p.Summarize != nil {
			summary = p.Summarize(r.TemplateID, r.Inputs)
		}
		args, err := HistoryArgs(r, p.Now, p.Now+p.HistoryTTLMs, summary)
		if err != nil {
			return i, err
		}
		if _, err := tx.ExecContext(ctx, st.Insert, args...); err != nil {
			return i, fmt.Errorf("db: archive run %s: %w", r.RunID, err)
		}
	}
	return len(runs), nil
}

// ListHistory is engine.Store.ListHistory on q: one page of unexpired
// history rows newest first (50 when q.Limit <= 0) and their count.
func ListHistory(ctx context.Context, q Querier, st HistoryStatements, hq engine.HistoryQuery) ([]engine.HistoryRun, int, error) {
	var total int
	if err := q.QueryRowContext(ctx, st.Count, hq.Now).Scan(&total); err != nil {
		return nil, 0, fmt.Errorf("db: count history: %w", err)
	}
	limit := hq.Limit
	if limit <= 0 {
		limit = 50
	}
	rows, err := q.QueryContext(ctx, st.Page, hq.Now, limit, max(hq.Offset, 0))
	if err != nil {
		return nil, 0, fmt.Errorf("db: list history: %w", err)
	}
	out, err := Collect(rows, "list history", ScanHistory)
	if err != nil {
		return nil, 0, err
	}
	return out, total, nil
}
