package db

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/browsertask/browsertask/db/sqlcommon"
	"github.com/browsertask/browsertask/engine"
)

var _ engine.ProfileStore = (*DB)(nil)

// CreateProfile inserts a profile. Errors: ErrConflict for a name in use.
func (d *DB) CreateProfile(ctx context.Context, p engine.BrowserProfile) error {
	return d.write(ctx, func(tx *sql.Tx) error {
		_, err := tx.ExecContext(ctx, `INSERT INTO profiles (name, note, created_at) VALUES (?, ?, ?)
			ON CONFLICT (name) DO NOTHING`, p.Name, p.Note, p.CreatedAt)
		if err != nil {
			return fmt.Errorf("db: create profile: %w", err)
		}
		var n int
		if err := tx.QueryRowContext(ctx, `SELECT changes()`).Scan(&n); err != nil {
			return fmt.Errorf("db: create profile: %w", err)
		}
		if n == 0 {
			return engine.ErrConflict
		}
		return nil
	})
}

// GetProfile returns one profile. Errors: ErrNotFound.
func (d *DB) GetProfile(ctx context.Context, name string) (*engine.BrowserProfile, error) {
	p, err := sqlcommon.ScanProfile(d.r.QueryRowContext(ctx, `SELECT `+sqlcommon.ProfileColumns+` FROM profiles WHERE name = ?`, name))
	if errors.Is(err, sql.ErrNoRows) {
		return nil, engine.ErrNotFound
	}
	if err != nil {
		return nil, fmt.Errorf("db: get profile: %w", err)
	}
	return p, nil
}

// ListProfiles returns every profile by name.
func (d *DB) ListProfiles(ctx context.Context) ([]engine.BrowserProfile, error) {
	rows, err := d.r.QueryContext(ctx, `SELECT `+sqlcommon.ProfileColumns+` FROM profiles ORDER BY name`)
	if err != nil {
		return nil, fmt.Errorf("db: list profiles: %w", err)
	}
	defer rows.Close()
	out := []engine.BrowserProfile{}
	for rows.Next() {
		p, err := sqlcommon.ScanProfile(rows)
		if err != nil {
			return nil, fmt.Errorf("db: list profiles: %w", err)
		}
		out = append(out, *p)
	}
	return out, rows.Err()
}

// leaseFree is the SQL condition under which a profile's lease may be
// taken or the profile deleted: nobody holds it, it lapsed, or its holder
// is dead (the engine's PeerAlive, passed as a JSON array).
const leaseFree = `(holder_id = '' OR lease_expires_at <= ? OR holder_id IN (SELECT value FROM json_each(?)))`

// DeleteProfile removes the profile unless a live lease is on it.
// Errors: ErrNotFound, ErrConflict.
func (d *DB) DeleteProfile(ctx context.Context, name string, now int64, deadOwners []string) error {
	dead := ownerList(deadOwners)
	return d.write(ctx, func(tx *sql.Tx) error {
		res, err := tx.ExecContext(ctx, `DELETE FROM profiles WHERE name = ? AND `+leaseFree, name, now, dead)
		if err != nil {
			return fmt.Errorf("db: delete profile: %w", err)
		}
		if n, _ := res.RowsAffected(); n == 1 {
			return nil
		}
		var one int
		err = tx.QueryRowContext(ctx, `SELECT 1 FROM profiles WHERE name = ?`, name).Scan(&one)
		if errors.Is(err, sql.ErrNoRows) {
			return engine.ErrNotFound
		}
		if err != nil {
			return fmt.Errorf("db: delete profile: %w", err)
		}
		return engine.ErrConflict
	})
}

// AcquireProfileLease grants the lease when it is free or already the
// caller's, and returns the holder after the write. Errors: ErrNotFound.
func (d *DB) AcquireProfileLease(ctx context.Context, c engine.ProfileLeaseClaim) (string, error) {
	var holder string
	err := d.write(ctx, func(tx *sql.Tx) error {
		_, err := tx.ExecContext(ctx, `UPDATE profiles SET holder_id = ?, lease_expires_at = ?
			WHERE name = ? AND (holder_id = ? OR `+leaseFree+`)`, c.OwnerID, c.Until, c.Name, c.OwnerID, c.Now, ownerList(c.DeadOwners))
		if err != nil {
			return fmt.Errorf("db: acquire profile lease: %w", err)
		}
		err = tx.QueryRowContext(ctx, `SELECT holder_id FROM profiles WHERE name = ?`, c.Name).Scan(&holder)
		if errors.Is(err, sql.ErrNoRows) {
			return engine.ErrNotFound
		}
		if err != nil {
			return fmt.Errorf("db: acquire profile lease: %w", err)
		}
		return nil
	})
	return holder, err
}

// RenewProfileLease extends ownerID's lease. Errors: ErrConflict when
// ownerID does not hold it.
func (d *DB) RenewProfileLease(ctx context.Context, name, ownerID string, until int64) error {
	return d.write(ctx, func(tx *sql.Tx) error {
		res, err := tx.ExecContext(ctx, `UPDATE profiles SET lease_expires_at = ? WHERE name = ? AND holder_id = ?`, until, name, ownerID)
		if err != nil {
			return fmt.Errorf("db: renew profile lease: %w", err)
		}
		if n, _ := res.RowsAffected(); n != 1 {
			return engine.ErrConflict
		}
		return nil
	})
}

// ReleaseProfileLease ends ownerID's lease and records the usage. A lease
// another process took meanwhile stays; the usage is recorded anyway.
func (d *DB) ReleaseProfileLease(ctx context.Context, name, ownerID string, u engine.ProfileUsage) error {
	sites, err := json.Marshal(nonNil(u.Sites))
	if err != nil {
		return fmt.Errorf("db: release profile lease: %w", err)
	}
	return d.write(ctx, func(tx *sql.Tx) error {
		_, err := tx.ExecContext(ctx, `UPDATE profiles SET last_used_at = MAX(last_used_at, ?), sites = ?, size_bytes = ?,
			holder_id = CASE WHEN holder_id = ? THEN '' ELSE holder_id END,
			lease_expires_at = CASE WHEN holder_id = ? THEN 0 ELSE lease_expires_at END
			WHERE name = ?`, u.LastUsedAt, string(sites), u.SizeBytes, ownerID, ownerID, name)
		if err != nil {
			return fmt.Errorf("db: release profile lease: %w", err)
		}
		return nil
	})
}

// ownerList encodes owner ids as a JSON array for json_each.
func ownerList(ids []string) string {
	b, _ := json.Marshal(nonNil(ids))
	return string(b)
}

// nonNil returns ids, or an empty slice for nil.
func nonNil(ids []string) []string {
	if ids == nil {
		return []string{}
	}
	return ids
}
