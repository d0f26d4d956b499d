package wire

import (
	"context"
	"fmt"
	"strings"

	"github.com/browsertask/browsertask/db"
	"github.com/browsertask/browsertask/db/postgres"
	"github.com/browsertask/browsertask/engine"
)

// Store is the database a process runs on: engine.Store plus what the
// process and `doctor` need of it. Both the SQLite store (package db) and
// the PostgreSQL store (db/postgres) are one.
type Store interface {
	engine.Store
	// Close releases the connections.
	Close() error
	// Path is the SQLite file, or the PostgreSQL URL without its password.
	Path() string
	// SchemaVersion is the highest migration applied.
	SchemaVersion(ctx context.Context) (int, error)
	// SizeBytes is what the store takes on disk: the SQLite file and its
	// log, or the PostgreSQL store's tables.
	SizeBytes(ctx context.Context) (int64, error)
}

// IsPostgresURL reports whether a --db value names a PostgreSQL database
// (postgres:// or postgresql://) rather than a SQLite file.
func IsPostgresURL(v string) bool {
	lower := strings.ToLower(v)
	return strings.HasPrefix(lower, "postgres://") || strings.HasPrefix(lower, "postgresql://")
}

// OpenStore opens --db: a postgres:// URL selects the PostgreSQL store
// (several daemons on several machines share its queue); anything else is
// a SQLite file, the embedded default, opened exactly as before.
func OpenStore(ctx context.Context, pathOrURL string) (Store, error) {
	if IsPostgresURL(pathOrURL) {
		s, err := postgres.Open(ctx, pathOrURL)
		if err != nil {
			return nil, fmt.Errorf("open database %s: %w", postgres.Redact(pathOrURL), err)
		}
		return s, nil
	}
	s, err := db.Open(ctx, pathOrURL)
	if err != nil {
		return nil, fmt.Errorf("open database %s: %w", pathOrURL, err)
	}
	return s, nil
}
