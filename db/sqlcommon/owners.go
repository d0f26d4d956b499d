package sqlcommon

import (
	"context"
	"fmt"

	"github.com/browsertask/browsertask/engine"
)

// OwnerStatements is a store's SQL for the owners table (one row per
// process sharing the database); arguments in the order each field names.
type OwnerStatements struct {
	// Upsert inserts or replaces an owner row: id, pid, host, started_at,
	// heartbeat_at, live_url.
	Upsert string
	// List selects id, pid, host, started_at, heartbeat_at, live_url of
	// every owner, oldest first.
	List string
	// Delete deletes an owner row: id.
	Delete string
	// ExpireLeases ends the leases an owner still holds on running runs:
	// now, owner id, now.
	ExpireLeases string
}

// RegisterOwner is engine.Store.RegisterOwner in the caller's transaction.
func RegisterOwner(ctx context.Context, tx Execer, st OwnerStatements, o engine.Owner) error {
	if _, err := tx.ExecContext(ctx, st.Upsert, o.ID, o.PID, o.Host, o.StartedAt, o.HeartbeatAt, o.LiveURL); err != nil {
		return fmt.Errorf("db: register owner: %w", err)
	}
	return nil
}

// ListOwners is engine.Store.ListOwners on q; never nil.
func ListOwners(ctx context.Context, q Querier, st OwnerStatements) ([]engine.Owner, error) {
	rows, err := q.QueryContext(ctx, st.List)
	if err != nil {
		return nil, fmt.Errorf("db: list owners: %w", err)
	}
	return Collect(rows, "list owners", func(s Scanner) (engine.Owner, error) {
		var o engine.Owner
		return o, s.Scan(&o.ID, &o.PID, &o.Host, &o.StartedAt, &o.HeartbeatAt, &o.LiveURL)
	})
}

// ReleaseOwner is engine.Store.ReleaseOwner in the caller's transaction:
// the owner row goes and the leases it held expire at now.
func ReleaseOwner(ctx context.Context, tx Execer, st OwnerStatements, ownerID string, now int64) error {
	if _, err := tx.ExecContext(ctx, st.Delete, ownerID); err != nil {
		return fmt.Errorf("db: release owner: %w", err)
	}
	if _, err := tx.ExecContext(ctx, st.ExpireLeases, now, ownerID, now); err != nil {
		return fmt.Errorf("db: release owner leases: %w", err)
	}
	return nil
}
