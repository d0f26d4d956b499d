package engine

import (
	"context"
	"encoding/json"
)

// DetailItemLimit is how many items Detail returns: a run page shows the
// first ones and counts the rest (RunDetail.ItemsTotal), so a 2000-page
// crawl with 1000 links a page opens without reading every output.
const DetailItemLimit = 500

// detailScalarMax is the longest string member an item keeps in Detail.
const detailScalarMax = 2048

// detailItems returns the run's first DetailItemLimit checkpoints, each
// output reduced to its top-level numbers, booleans and short strings (the
// url, status and artifact a listing shows; slimDetailOutput), read one at
// a time, and how many checkpoints the run has.
func (e *Engine) detailItems(ctx context.Context, runID string) ([]Item, int, error) {
	items := []Item{}
	err := e.store.EachItem(ctx, ItemsQuery{RunID: runID, After: -1, Limit: DetailItemLimit}, func(it Item) error {
		it.Output = slimDetailOutput(it.Output)
		items = append(items, it)
		return nil
	})
	if err != nil {
		return nil, 0, Wrap(ExecutionError, err, "list items: %v", err)
	}
	total := len(items)
	if total == DetailItemLimit {
		total = 0
		err = e.store.EachItem(ctx, ItemsQuery{RunID: runID, After: -1, NoOutput: true}, func(Item) error {
			total++
			return nil
		})
		if err != nil {
			return nil, 0, Wrap(ExecutionError, err, "count items: %v", err)
		}
	}
	return items, total, nil
}

// slimDetailOutput keeps an output's top-level scalar members (strings up
// to detailScalarMax bytes); anything else is dropped.
func slimDetailOutput(raw json.RawMessage) json.RawMessage {
	var m map[string]json.RawMessage
	if len(raw) == 0 || json.Unmarshal(raw, &m) != nil {
		return nil
	}
	out := map[string]json.RawMessage{}
	for k, v := range m {
		if len(v) == 0 {
			continue
		}
		switch v[0] {
		case '{', '[':
			continue
		case '"':
			if len(v) > detailScalarMax {
				continue
			}
		}
		out[k] = v
	}
	b, err := json.Marshal(out)
	if err != nil {
		return nil
	}
	return b
}
