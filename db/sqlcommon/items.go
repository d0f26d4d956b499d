package sqlcommon

import (
	"context"
	"database/sql"
	"errors"
	"fmt"

	"github.com/browsertask/browsertask/engine"
)

// ItemColumns is the SELECT list ScanItem reads, in order.
const ItemColumns = `idx, key, status, output, error`

// ItemColumnsFor is ItemColumns, with NULL in place of the output when
// noOutput is set (a caller that needs only statuses does not read the
// pages' outputs).
func ItemColumnsFor(noOutput bool) string {
	if noOutput {
		return `idx, key, status, NULL, error`
	}
	return ItemColumns
}

// ItemScanner reads one row of ItemColumns of run runID (named in a decode
// error).
func ItemScanner(runID string) func(Scanner) (engine.Item, error) {
	return func(s Scanner) (engine.Item, error) {
		var (
			it              engine.Item
			output, errJSON sql.NullString
		)
		if err := s.Scan(&it.Index, &it.Key, &it.Status, &output, &errJSON); err != nil {
			return it, err
		}
		it.Output = RawOrNil(output)
		var err error
		if it.Error, err = DecodeError(errJSON); err != nil {
			return it, fmt.Errorf("item %d of run %s: %w", it.Index, runID, err)
		}
		return it, nil
	}
}

// EachItemAt calls fn with the item at each of indexes that exists, in the
// order given, reading each with query (selecting ItemColumnsFor;
// arguments: run id, index).
func EachItemAt(ctx context.Context, q Querier, query, runID string, indexes []int, fn func(engine.Item) error) error {
	scan := ItemScanner(runID)
	for _, idx := range indexes {
		it, err := scan(q.QueryRowContext(ctx, query, runID, idx))
		if errors.Is(err, sql.ErrNoRows) {
			continue
		}
		if err != nil {
			return fmt.Errorf("db: read items: %w", err)
		}
		if err := fn(it); err != nil {
			return err
		}
	}
	return nil
}

// EachItem calls fn with each item query selects (ItemColumnsFor), one row
// in memory at a time.
func EachItem(ctx context.Context, q Querier, runID string, fn func(engine.Item) error, query string, args ...any) error {
	rows, err := q.QueryContext(ctx, query, args...)
	if err != nil {
		return fmt.Errorf("db: read items: %w", err)
	}
	return Each(rows, "read items", ItemScanner(runID), fn)
}

// ListItems returns the items query selects (ItemColumns), never nil.
func ListItems(ctx context.Context, q Querier, runID, query string, args ...any) ([]engine.Item, error) {
	rows, err := q.QueryContext(ctx, query, args...)
	if err != nil {
		return nil, fmt.Errorf("db: list items: %w", err)
	}
	return Collect(rows, "list items", ItemScanner(runID))
}

// StoppedRunColumns is the SELECT list ScanStoppedRun reads, over runs
// aliased r: with the count of the run's succeeded items last.
const StoppedRunColumns = `r.id, r.session_id, r.owns_session, r.inputs, r.output_schema,
			(SELECT COUNT(*) FROM run_items i WHERE i.run_id = r.id AND i.status = 'succeeded')`

// ScanStoppedRun reads one row of StoppedRunColumns.
func ScanStoppedRun(s Scanner) (engine.StoppedRun, error) {
	var (
		r              engine.StoppedRun
		owns           int
		inputs, schema sql.NullString
	)
	if err := s.Scan(&r.RunID, &r.SessionID, &owns, &inputs, &schema, &r.Items); err != nil {
		return r, err
	}
	r.OwnsSession, r.Inputs, r.OutputSchema = owns == 1, RawOrNil(inputs), RawOrNil(schema)
	return r, nil
}

// ItemEvent is the data of an "item" event.
type ItemEvent struct {
	Index  int    `json:"index"`
	Key    string `json:"key"`
	Status string `json:"status"`
}

// AdoptedEvent is the data of an "adopted" event.
type AdoptedEvent struct {
	FromRunID string `json:"fromRunId"`
	Items     int    `json:"items"`
}
