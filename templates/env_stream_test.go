package templates

import (
	"bytes"
	"context"
	"io"
	"sort"

	"github.com/browsertask/browsertask/engine"
)

// EachItem reads the fake's checkpoints as the store would: the last one
// written per index, plus the earlier attempts' (done) when the index is
// not checkpointed again.
func (e *fakeEnv) EachItem(ctx context.Context, q engine.ItemsQuery, fn func(engine.Item) error) error {
	byIndex := map[int]engine.Item{}
	for _, it := range e.done {
		byIndex[it.Index] = it
	}
	e.mu.Lock()
	for _, it := range e.items {
		byIndex[it.Index] = it
	}
	e.mu.Unlock()
	var sel []engine.Item
	if q.Indexes != nil {
		for _, i := range q.Indexes {
			if it, ok := byIndex[i]; ok {
				sel = append(sel, it)
			}
		}
	} else {
		for i, it := range byIndex {
			if i > q.After {
				sel = append(sel, it)
			}
		}
		sort.Slice(sel, func(a, b int) bool { return sel[a].Index < sel[b].Index })
		if q.Limit > 0 && len(sel) > q.Limit {
			sel = sel[:q.Limit]
		}
	}
	for _, it := range sel {
		if q.NoOutput {
			it.Output = nil
		}
		if err := fn(it); err != nil {
			return err
		}
	}
	return ctx.Err()
}

// PutArtifactStream stores what write produces, as PutArtifact.
func (e *fakeEnv) PutArtifactStream(ctx context.Context, name, mime string, write func(io.Writer) error) (string, error) {
	var b bytes.Buffer
	if err := write(&b); err != nil {
		return "", err
	}
	return e.PutArtifact(ctx, name, mime, b.Bytes())
}
