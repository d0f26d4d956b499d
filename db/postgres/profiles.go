package postgres

import (
	"context"
	"database/sql"
	"errors"
	"fmt"

	"github.com/browsertask/browsertask/db/sqlcommon"
	"github.com/browsertask/browsertask/engine"
)

// The PostgreSQL store keeps browser profiles too, so daemons sharing one
// database can hand a profile from one to another through its lease.
var _ engine.ProfileStore = (*DB)(nil)

// profileSQL is the PostgreSQL store's statements for browser profiles.
// Names are ASCII (the engine's name rule), so COLLATE "C" lists them in
// the byte order SQLite's does whatever the database's locale. Delete's
// condition is checked on the row as it is when the statement takes the
// row's lock, so a lease taken meanwhile keeps the profile.
var profileSQL = sqlcommon.ProfileStatements{
	Get:  `SELECT ` + sqlcommon.ProfileColumns + ` FROM profiles WHERE name = $1`,
	List: `SELECT ` + sqlcommon.ProfileColumns + ` FROM profiles ORDER BY name COLLATE "C"`,
	Delete: `DELETE FROM profiles WHERE name = $1
		AND (holder_id = '' OR lease_expires_at <= $2 OR holder_id = ANY($3::text[]))`,
	Exists: `SELECT 1 FROM profiles WHERE name = $1`,
	Renew:  `UPDATE profiles SET lease_expires_at = $1 WHERE name = $2 AND holder_id = $3`,
	Release: `UPDATE profiles SET last_used_at = GREATEST(last_used_at, $1), sites = $2, size_bytes = $3,
		holder_id = CASE WHEN holder_id = $4 THEN '' ELSE holder_id END,
		lease_expires_at = CASE WHEN holder_id = $4 THEN 0 ELSE lease_expires_at END
		WHERE name = $5`,
	DeadOwners: func(ids []string) any { return ids }, // a text[]
}

// CreateProfile inserts a profile. Errors: ErrConflict for a name in use.
func (d *DB) CreateProfile(ctx context.Context, p engine.BrowserProfile) error {
	return d.write(ctx, func(tx *sql.Tx) error {
		res, err := tx.ExecContext(ctx, `INSERT INTO profiles (name, note, created_at) VALUES ($1, $2, $3)
			ON CONFLICT (name) DO NOTHING`, p.Name, p.Note, p.CreatedAt)
		if err != nil {
			return fmt.Errorf("db: create profile: %w", err)
		}
		n, err := res.RowsAffected()
		if err != nil {
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
	return sqlcommon.GetProfile(ctx, d.reader(), profileSQL, name)
}

// ListProfiles returns every profile by name. Names are ASCII (the
// engine's name rule), so COLLATE "C" gives the byte order SQLite's does
// whatever the database's locale.
func (d *DB) ListProfiles(ctx context.Context) ([]engine.BrowserProfile, error) {
	return sqlcommon.ListProfiles(ctx, d.reader(), profileSQL)
}

// DeleteProfile removes the profile unless a live lease is on it: the
// DELETE's condition is checked on the row as it is when the statement
// takes the row's lock, so a lease taken meanwhile keeps the profile.
// Errors: ErrNotFound, ErrConflict.
func (d *DB) DeleteProfile(ctx context.Context, name string, now int64, deadOwners []string) error {
	return d.write(ctx, func(tx *sql.Tx) error { return sqlcommon.DeleteProfile(ctx, tx, profileSQL, name, now, deadOwners) })
}

// AcquireProfileLease grants the lease when it is free (nobody holds it,
// it lapsed, or its holder is among c.DeadOwners) or already the caller's,
// and returns the holder after the write. It is a compare-and-set like the
// run leases: under READ COMMITTED a second claimer's UPDATE waits for the
// first's row lock and then checks its condition against the row the
// first committed, so of two claimers of a free profile exactly one gets
// it. Errors: ErrNotFound.
func (d *DB) AcquireProfileLease(ctx context.Context, c engine.ProfileLeaseClaim) (string, error) {
	var holder string
	err := d.write(ctx, func(tx *sql.Tx) error {
		holder = ""
		err := tx.QueryRowContext(ctx, `UPDATE profiles SET holder_id = $1, lease_expires_at = $2
			WHERE name = $3 AND (holder_id = $1 OR holder_id = '' OR lease_expires_at <= $4
				OR holder_id = ANY($5::text[]))
			RETURNING holder_id`, c.OwnerID, c.Until, c.Name, c.Now, sqlcommon.NonNil(c.DeadOwners)).Scan(&holder)
		if err == nil {
			return nil
		}
		if !errors.Is(err, sql.ErrNoRows) {
			return fmt.Errorf("db: acquire profile lease: %w", err)
		}
		// Not granted: say who holds it (or that the profile is gone).
		err = tx.QueryRowContext(ctx, `SELECT holder_id FROM profiles WHERE name = $1`, c.Name).Scan(&holder)
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
// ownerID does not hold it (another process took it over, or the profile
// was deleted).
func (d *DB) RenewProfileLease(ctx context.Context, name, ownerID string, until int64) error {
	return d.write(ctx, func(tx *sql.Tx) error { return sqlcommon.RenewProfileLease(ctx, tx, profileSQL, name, ownerID, until) })
}

// ReleaseProfileLease ends ownerID's lease and records what the closed
// browser left. A lease another process took meanwhile stays (both CASEs
// read the row as it was before the UPDATE); the usage is recorded anyway,
// and last_used_at never goes back in time.
func (d *DB) ReleaseProfileLease(ctx context.Context, name, ownerID string, u engine.ProfileUsage) error {
	return d.write(ctx, func(tx *sql.Tx) error { return sqlcommon.ReleaseProfileLease(ctx, tx, profileSQL, name, ownerID, u) })
}
