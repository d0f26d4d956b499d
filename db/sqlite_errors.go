package db

import (
	"errors"
	"fmt"

	"github.com/browsertask/browsertask/engine"
	"modernc.org/sqlite"
	sqlite3 "modernc.org/sqlite/lib"
)

// mapConstraint turns a primary-key or unique violation (a row with that id
// already exists) into engine.ErrConflict, keeping the SQLite error as
// context. Other errors are returned unchanged.
func mapConstraint(err error) error {
	var se *sqlite.Error
	if !errors.As(err, &se) {
		return err
	}
	switch se.Code() {
	case sqlite3.SQLITE_CONSTRAINT_PRIMARYKEY, sqlite3.SQLITE_CONSTRAINT_UNIQUE:
		return fmt.Errorf("%w: %w", engine.ErrConflict, err)
	}
	return err
}

// isBusy reports whether err is SQLITE_BUSY (any extended form).
func isBusy(err error) bool {
	var se *sqlite.Error
	return errors.As(err, &se) && se.Code()&0xff == sqlite3.SQLITE_BUSY
}

// mapFull turns SQLITE_FULL (the disk or the file's size limit is reached)
// into *engine.StorageFullError naming the database file, so the user reads
// what is full and where instead of a generic "retry". The transaction was
// rolled back: nothing was half-written.
func (d *DB) mapFull(err error) error {
	var se *sqlite.Error
	if errors.As(err, &se) && se.Code()&0xff == sqlite3.SQLITE_FULL {
		return &engine.StorageFullError{Path: d.path, Err: err}
	}
	return err
}
