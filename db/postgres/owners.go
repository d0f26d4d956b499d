package postgres

import (
	"context"
	"fmt"

	"github.com/browsertask/browsertask/engine"
)

// RegisterOwner inserts or replaces this process's owner row, so peers (and
// doctor) can see which processes share the database.
func (d *DB) RegisterOwner(ctx context.Context, o engine.Owner) error {
	return d.writeTx(ctx, func(tx *txn) error {
		_, err := tx.ExecContext(ctx, `INSERT INTO owners (id, pid, host, started_at, heartbeat_at, live_url)
			VALUES ($1, $2, $3, $4, $5, $6)
			ON CONFLICT (id) DO UPDATE SET pid = excluded.pid, host = excluded.host,
				started_at = excluded.started_at, heartbeat_at = excluded.heartbeat_at, live_url = excluded.live_url`,
			o.ID, o.PID, o.Host, o.StartedAt, o.HeartbeatAt, o.LiveURL)
		if err != nil {
			return fmt.Errorf("db: register owner: %w", err)
		}
		return nil
	})
}

// ListOwners returns all owner rows, oldest first.
func (d *DB) ListOwners(ctx context.Context) ([]engine.Owner, error) {
	rows, err := d.reader().QueryContext(ctx, `SELECT id, pid, host, started_at, heartbeat_at, live_url FROM owners
		ORDER BY started_at, id`)
	if err != nil {
		return nil, fmt.Errorf("db: list owners: %w", err)
	}
	defer rows.Close()
	owners := []engine.Owner{}
	for rows.Next() {
		var o engine.Owner
		if err := rows.Scan(&o.ID, &o.PID, &o.Host, &o.StartedAt, &o.HeartbeatAt, &o.LiveURL); err != nil {
			return nil, fmt.Errorf("db: list owners: %w", err)
		}
		owners = append(owners, o)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("db: list owners: %w", err)
	}
	return owners, nil
}

// ReleaseOwner deletes the owner row and expires (lease_expires_at = now) the
// lease of every run it still holds as running, so any process recovers them
// at once instead of waiting out the lease.
func (d *DB) ReleaseOwner(ctx context.Context, ownerID string, now int64) error {
	return d.writeTx(ctx, func(tx *txn) error {
		if _, err := tx.ExecContext(ctx, `DELETE FROM owners WHERE id = $1`, ownerID); err != nil {
			return fmt.Errorf("db: release owner: %w", err)
		}
		if _, err := tx.ExecContext(ctx, `UPDATE runs SET lease_expires_at = $1
			WHERE status = 'running' AND owner_id = $2 AND lease_expires_at > $3`, now, ownerID, now); err != nil {
			return fmt.Errorf("db: release owner leases: %w", err)
		}
		return nil
	})
}
