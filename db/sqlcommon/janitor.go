package sqlcommon

import (
	"context"
	"fmt"

	"github.com/browsertask/browsertask/engine"
)

// Writer runs fn in one write transaction of a store, committing when fn
// returns nil (the PostgreSQL store may run fn again after a
// serialization failure, so fn starts from scratch each time).
type Writer func(ctx context.Context, fn func(tx Tx) error) error

// PurgeStep is one batched statement of Purge. The statement touches at
// most "batch" rows and is repeated, one transaction each, until it
// touches fewer. Params names its arguments in order ($1, $2, … or ?1,
// ?2, …) among "now", "tomb" (p.TombstoneBefore), "hist"
// (p.HistoryBefore), "archived" (p.ArchivedOnly, a bool) and "batch":
// PostgreSQL refuses an argument a statement does not use, so each step
// gets exactly its own.
type PurgeStep struct {
	Name   string
	SQL    string
	Params []string
}

// Purge is engine.Store.Purge: it runs steps in order, each in
// transactions of at most batch rows, and returns the rows touched. It
// stops early, with ctx's error, when ctx ends.
func Purge(ctx context.Context, write Writer, steps []PurgeStep, p engine.PurgeParams, batch int) (int, error) {
	values := map[string]any{"now": p.Now, "tomb": p.TombstoneBefore, "batch": batch,
		"hist": p.HistoryBefore, "archived": p.ArchivedOnly}
	total := 0
	for _, step := range steps {
		args := make([]any, len(step.Params))
		for i, name := range step.Params {
			v, ok := values[name]
			if !ok {
				return total, fmt.Errorf("db: purge %s: no value named %q", step.Name, name)
			}
			args[i] = v
		}
		for {
			if err := ctx.Err(); err != nil {
				return total, err
			}
			var n int64
			err := write(ctx, func(tx Tx) error {
				res, err := tx.ExecContext(ctx, step.SQL, args...)
				if err != nil {
					return err
				}
				n, err = res.RowsAffected()
				return err
			})
			if err != nil {
				return total, fmt.Errorf("db: purge %s: %w", step.Name, err)
			}
			total += int(n)
			if n < int64(batch) {
				break
			}
		}
	}
	return total, nil
}
