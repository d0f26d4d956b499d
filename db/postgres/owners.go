package postgres

import (
	"context"

	"github.com/browsertask/browsertask/db/sqlcommon"
	"github.com/browsertask/browsertask/engine"
)

// ownerSQL is the PostgreSQL store's statements for the owners table.
var ownerSQL = sqlcommon.OwnerStatements{
	Upsert: `INSERT INTO owners (id, pid, host, started_at, heartbeat_at, live_url)
		VALUES ($1, $2, $3, $4, $5, $6)
		ON CONFLICT (id) DO UPDATE SET pid = excluded.pid, host = excluded.host,
			started_at = excluded.started_at, heartbeat_at = excluded.heartbeat_at, live_url = excluded.live_url`,
	List: `SELECT id, pid, host, started_at, heartbeat_at, live_url FROM owners
		ORDER BY started_at, id`,
	Delete: `DELETE FROM owners WHERE id = $1`,
	ExpireLeases: `UPDATE runs SET lease_expires_at = $1
		WHERE status = 'running' AND owner_id = $2 AND lease_expires_at > $3`,
}

// RegisterOwner inserts or replaces this process's owner row, so peers (and
// doctor) can see which processes share the database.
func (d *DB) RegisterOwner(ctx context.Context, o engine.Owner) error {
	return d.writeTx(ctx, func(tx *txn) error { return sqlcommon.RegisterOwner(ctx, tx, ownerSQL, o) })
}

// ListOwners returns all owner rows, oldest first.
func (d *DB) ListOwners(ctx context.Context) ([]engine.Owner, error) {
	return sqlcommon.ListOwners(ctx, d.reader(), ownerSQL)
}

// ReleaseOwner deletes the owner row and expires (lease_expires_at = now) the
// lease of every run it still holds as running, so any process recovers them
// at once instead of waiting out the lease.
func (d *DB) ReleaseOwner(ctx context.Context, ownerID string, now int64) error {
	return d.writeTx(ctx, func(tx *txn) error { return sqlcommon.ReleaseOwner(ctx, tx, ownerSQL, ownerID, now) })
}
