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

// profileSQL is the SQLite store's statements for browser profiles.
var profileSQL = sqlcommon.ProfileStatements{
	Get:    `SELECT ` + sqlcommon.ProfileColumns + ` FROM profiles WHERE name = ?`,
	List:   `SELECT ` + sqlcommon.ProfileColumns + ` FROM profiles ORDER BY name`,
	Delete: `DELETE FROM profiles WHERE name = ?1 AND ` + leaseFreeAt2,
	Exists: `SELECT 1 FROM profiles WHERE name = ?`,
	Renew:  `UPDATE profiles SET lease_expires_at = ? WHERE name = ? AND holder_id = ?`,
	Release: `UPDATE profiles SET last_used_at = MAX(last_used_at, ?1), sites = ?2, size_bytes = ?3,
		holder_id = CASE WHEN holder_id = ?4 THEN '' ELSE holder_id END,
		lease_expires_at = CASE WHEN holder_id = ?4 THEN 0 ELSE lease_expires_at END
		WHERE name = ?5`,
	DeadOwners: func(ids []string) any { return ownerList(ids) },
}

// leaseFreeAt2 is leaseFree with numbered arguments: now ?2, dead owners
// ?3.
const leaseFreeAt2 = `(holder_id = '' OR lease_expires_at <= ?2 OR holder_id IN (SELECT value FROM json_each(?3)))`

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
	return sqlcommon.GetProfile(ctx, d.r, profileSQL, name)
}

// ListProfiles returns every profile by name.
func (d *DB) ListProfiles(ctx context.Context) ([]engine.BrowserProfile, error) {
	return sqlcommon.ListProfiles(ctx, d.r, profileSQL)
}

// leaseFree is the SQL condition under which a profile's lease may be
// taken or the profile deleted: nobody holds it, it lapsed, or its holder
// is dead (the engine's PeerAlive, passed as a JSON array).
const leaseFree = `(holder_id = '' OR lease_expires_at <= ? OR holder_id IN (SELECT value FROM json_each(?)))`

// DeleteProfile removes the profile unless a live lease is on it.
// Errors: ErrNotFound, ErrConflict.
func (d *DB) DeleteProfile(ctx context.Context, name string, now int64, deadOwners []string) error {
	return d.write(ctx, func(tx *sql.Tx) error { return sqlcommon.DeleteProfile(ctx, tx, profileSQL, name, now, deadOwners) })
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
	return d.write(ctx, func(tx *sql.Tx) error { return sqlcommon.RenewProfileLease(ctx, tx, profileSQL, name, ownerID, until) })
}

// ReleaseProfileLease ends ownerID's lease and records the usage. A lease
// another process took meanwhile stays; the usage is recorded anyway.
func (d *DB) ReleaseProfileLease(ctx context.Context, name, ownerID string, u engine.ProfileUsage) error {
	return d.write(ctx, func(tx *sql.Tx) error { return sqlcommon.ReleaseProfileLease(ctx, tx, profileSQL, name, ownerID, u) })
}

// ownerList encodes owner ids as a JSON array for json_each.
func ownerList(ids []string) string {
	b, _ := json.Marshal(sqlcommon.NonNil(ids))
	return string(b)
}
