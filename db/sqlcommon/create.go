package sqlcommon

import (
	"context"
	"fmt"

	"github.com/browsertask/browsertask/engine"
)

// RunCreation is a store's part in CreateRun: the steps whose SQL differs
// between the stores.
type RunCreation struct {
	// ClaimKey claims an idempotency key for runID in tx, or reports the
	// run of the live entry that holds it (held).
	ClaimKey func(ctx context.Context, tx Tx, c *engine.IdempotencyClaim, runID string) (holder string, held bool, err error)
	// Insert writes every column of a new queued run.
	Insert func(ctx context.Context, tx Tx, r *engine.Run, idem *engine.IdempotencyClaim) error
	// Get loads a run with its artifact ids.
	Get func(ctx context.Context, q Querier, runID string) (*engine.Run, error)
	// Events appends the "created" event.
	Events EventStatements
}

// CreateRun inserts run as queued and appends its "created" event in tx.
// With idem set, the key is claimed first; when a live entry holds it
// nothing is inserted and the holder's run comes back with deduplicated =
// true. The run returned is read back as stored. Safe to call again when
// the store retries the transaction: it keeps no state between calls.
func CreateRun(ctx context.Context, tx Tx, c RunCreation, run *engine.Run, idem *engine.IdempotencyClaim) (stored *engine.Run, deduplicated bool, err error) {
	if idem != nil {
		holder, held, err := c.ClaimKey(ctx, tx, idem, run.RunID)
		if err != nil {
			return nil, false, err
		}
		if held {
			stored, err = c.Get(ctx, tx, holder)
			return stored, err == nil, err
		}
	}
	if err := c.Insert(ctx, tx, run, idem); err != nil {
		return nil, false, err
	}
	if err := AppendJSONEvent(ctx, tx, c.Events, run.RunID, EventCreated,
		StatusEvent{Status: engine.StatusQueued}, run.CreatedAt); err != nil {
		return nil, false, err
	}
	stored, err = c.Get(ctx, tx, run.RunID)
	return stored, false, err
}

// InsertRunWith is a RunCreation.Insert that runs the store's INSERT of
// every column (arguments: InsertRunArgs) and maps a duplicate id with
// mapConstraint (to engine.ErrConflict).
func InsertRunWith(query string, mapConstraint func(error) error) func(ctx context.Context, tx Tx, r *engine.Run, idem *engine.IdempotencyClaim) error {
	return func(ctx context.Context, tx Tx, r *engine.Run, idem *engine.IdempotencyClaim) error {
		args, err := InsertRunArgs(r, idem)
		if err != nil {
			return err
		}
		if _, err := tx.ExecContext(ctx, query, args...); err != nil {
			return mapConstraint(fmt.Errorf("db: insert run: %w", err))
		}
		return nil
	}
}
