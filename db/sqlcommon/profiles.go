package sqlcommon

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/browsertask/browsertask/engine"
)

// ProfileStatements is a store's SQL for browser profiles; arguments in
// the order each field names.
//
// CreateProfile and AcquireProfileLease stay in each store: SQLite counts
// an INSERT ... DO NOTHING with changes() and reads the holder back after
// its UPDATE under its single writer, while PostgreSQL reads RowsAffected
// and takes the lease with UPDATE ... RETURNING, checked against the row
// another claimer committed (READ COMMITTED). The rest is the same.
type ProfileStatements struct {
	// Get selects ProfileColumns of one profile: name.
	Get string
	// List selects ProfileColumns of every profile by name (byte order).
	List string
	// Delete deletes a profile whose lease is free (nobody holds it, it
	// lapsed, or its holder is dead): name, now, dead owners (DeadOwners).
	Delete string
	// Exists selects 1 for a profile: name.
	Exists string
	// Renew extends a holder's lease: until, name, holder.
	Renew string
	// Release ends a holder's lease and records usage (last_used_at never
	// goes back): last used, sites (JSON), size, holder, name.
	Release string
	// DeadOwners encodes owner ids as the store's list parameter.
	DeadOwners func(ids []string) any
}

// NonNil returns ids, or an empty slice for nil: a list parameter is then
// an empty list rather than NULL.
func NonNil(ids []string) []string {
	if ids == nil {
		return []string{}
	}
	return ids
}

// GetProfile is engine.ProfileStore.GetProfile on q. Errors: ErrNotFound.
func GetProfile(ctx context.Context, q Querier, st ProfileStatements, name string) (*engine.BrowserProfile, error) {
	p, err := ScanProfile(q.QueryRowContext(ctx, st.Get, name))
	if errors.Is(err, sql.ErrNoRows) {
		return nil, engine.ErrNotFound
	}
	if err != nil {
		return nil, fmt.Errorf("db: get profile: %w", err)
	}
	return p, nil
}

// ListProfiles is engine.ProfileStore.ListProfiles on q; never nil.
func ListProfiles(ctx context.Context, q Querier, st ProfileStatements) ([]engine.BrowserProfile, error) {
	rows, err := q.QueryContext(ctx, st.List)
	if err != nil {
		return nil, fmt.Errorf("db: list profiles: %w", err)
	}
	return Collect(rows, "list profiles", func(s Scanner) (engine.BrowserProfile, error) {
		p, err := ScanProfile(s)
		if err != nil {
			return engine.BrowserProfile{}, err
		}
		return *p, nil
	})
}

// DeleteProfile is engine.ProfileStore.DeleteProfile in the caller's
// transaction. Errors: ErrNotFound, ErrConflict (a live lease is on it).
func DeleteProfile(ctx context.Context, tx Tx, st ProfileStatements, name string, now int64, deadOwners []string) error {
	res, err := tx.ExecContext(ctx, st.Delete, name, now, st.DeadOwners(NonNil(deadOwners)))
	if err != nil {
		return fmt.Errorf("db: delete profile: %w", err)
	}
	if n, err := res.RowsAffected(); err != nil {
		return fmt.Errorf("db: delete profile: %w", err)
	} else if n == 1 {
		return nil
	}
	var one int
	err = tx.QueryRowContext(ctx, st.Exists, name).Scan(&one)
	if errors.Is(err, sql.ErrNoRows) {
		return engine.ErrNotFound
	}
	if err != nil {
		return fmt.Errorf("db: delete profile: %w", err)
	}
	return engine.ErrConflict
}

// RenewProfileLease is engine.ProfileStore.RenewProfileLease in the
// caller's transaction. Errors: ErrConflict when ownerID does not hold it.
func RenewProfileLease(ctx context.Context, tx Execer, st ProfileStatements, name, ownerID string, until int64) error {
	res, err := tx.ExecContext(ctx, st.Renew, until, name, ownerID)
	if err != nil {
		return fmt.Errorf("db: renew profile lease: %w", err)
	}
	if n, err := res.RowsAffected(); err != nil {
		return fmt.Errorf("db: renew profile lease: %w", err)
	} else if n != 1 {
		return engine.ErrConflict
	}
	return nil
}

// ReleaseProfileLease is engine.ProfileStore.ReleaseProfileLease in the
// caller's transaction: ownerID's lease ends (one another process took
// meanwhile stays) and the usage is recorded anyway.
func ReleaseProfileLease(ctx context.Context, tx Execer, st ProfileStatements, name, ownerID string, u engine.ProfileUsage) error {
	sites, err := json.Marshal(NonNil(u.Sites))
	if err != nil {
		return fmt.Errorf("db: release profile lease: %w", err)
	}
	if _, err := tx.ExecContext(ctx, st.Release, u.LastUsedAt, string(sites), u.SizeBytes, ownerID, name); err != nil {
		return fmt.Errorf("db: release profile lease: %w", err)
	}
	return nil
}
