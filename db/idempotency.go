package db

import (
	"context"
	"database/sql"
	"errors"
	"fmt"

	"github.com/browsertask/browsertask/db/sqlcommon"
	"github.com/browsertask/browsertask/engine"
)

// claimIdempotencyKey tries to point (TemplateID, Key) at runID inside tx.
// The upsert takes the key over only when the entry is no longer live: past
// its expires_at, or naming a run that was purged or has itself expired. It
// returns held = true and the holder's run id when a live entry keeps the
// key; the caller must then insert nothing. The single statement is atomic
// under the write lock, so concurrent submissions cannot both win.
func claimIdempotencyKey(ctx context.Context, tx sqlTx, c *engine.IdempotencyClaim, runID string) (holder string, held bool, err error) {
	var got string
	err = tx.QueryRowContext(ctx, `INSERT INTO idempotency_keys (template_id, key, run_id, expires_at)
		VALUES (:tpl, :key, :run, :exp)
		ON CONFLICT (template_id, key) DO UPDATE
			SET run_id = excluded.run_id, expires_at = excluded.expires_at
			WHERE idempotency_keys.expires_at <= :now
			   OR NOT EXISTS (SELECT 1 FROM runs r WHERE r.id = idempotency_keys.run_id
			                  AND NOT (r.status IN `+sqlcommon.TerminalSQL+` AND r.expires_at <= :now))
		RETURNING run_id`,
		sql.Named("tpl", c.TemplateID), sql.Named("key", c.Key), sql.Named("run", runID),
		sql.Named("exp", c.ExpiresAt), sql.Named("now", c.Now)).Scan(&got)
	if err == nil {
		return got, false, nil
	}
	if !errors.Is(err, sql.ErrNoRows) {
		return "", false, fmt.Errorf("db: claim idempotency key: %w", err)
	}
	err = tx.QueryRowContext(ctx, `SELECT run_id FROM idempotency_keys WHERE template_id = ? AND key = ?`,
		c.TemplateID, c.Key).Scan(&got)
	if err != nil {
		return "", false, fmt.Errorf("db: read idempotency key: %w", err)
	}
	return got, true, nil
}
