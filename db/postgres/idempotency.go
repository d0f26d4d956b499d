package postgres

import (
	"context"
	"database/sql"
	"errors"
	"fmt"

	"github.com/browsertask/browsertask/db/sqlcommon"
	"github.com/browsertask/browsertask/engine"
)

// idemLockSeed seeds the hash of (template, key) into an advisory lock key,
// so these locks do not collide with the claim and migration locks.
const idemLockSeed = 0x62745f6964

// claimIdempotencyKey tries to point (TemplateID, Key) at runID inside tx.
// The upsert takes the key over only when the entry is no longer live: past
// its expires_at, or naming a run that was purged or has itself expired. It
// returns held = true and the holder's run id when a live entry keeps the
// key; the caller must then insert nothing. The single statement is atomic
// under the write lock, so concurrent submissions cannot both win.
func claimIdempotencyKey(ctx context.Context, tx sqlTx, c *engine.IdempotencyClaim, runID string) (holder string, held bool, err error) {
	// Submissions of one key take turns: the upsert's subquery reads a
	// snapshot taken when it starts, so without the lock it could miss
	// the run a concurrent holder of the key has just committed.
	if _, err := tx.ExecContext(ctx, `SELECT pg_advisory_xact_lock(hashtextextended($1, $2))`,
		fmt.Sprintf("%d:%s:%s", len(c.TemplateID), c.TemplateID, c.Key), int64(idemLockSeed)); err != nil {
		return "", false, fmt.Errorf("postgres: idempotency lock: %w", err)
	}
	var got string
	err = tx.QueryRowContext(ctx, `INSERT INTO idempotency_keys (template_id, key, run_id, expires_at)
		VALUES ($1, $2, $3, $4)
		ON CONFLICT (template_id, key) DO UPDATE
			SET run_id = excluded.run_id, expires_at = excluded.expires_at
			WHERE idempotency_keys.expires_at <= $5
			   OR NOT EXISTS (SELECT 1 FROM runs r WHERE r.id = idempotency_keys.run_id
			                  AND NOT (r.status IN `+sqlcommon.TerminalSQL+` AND r.expires_at <= $5))
		RETURNING run_id`,
		c.TemplateID, c.Key, runID, c.ExpiresAt, c.Now).Scan(&got)
	if err == nil {
		return got, false, nil
	}
	if !errors.Is(err, sql.ErrNoRows) {
		return "", false, fmt.Errorf("db: claim idempotency key: %w", err)
	}
	err = tx.QueryRowContext(ctx, `SELECT run_id FROM idempotency_keys WHERE template_id = $1 AND key = $2`,
		c.TemplateID, c.Key).Scan(&got)
	if err != nil {
		return "", false, fmt.Errorf("db: read idempotency key: %w", err)
	}
	return got, true, nil
}
