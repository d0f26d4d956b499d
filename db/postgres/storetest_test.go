package postgres

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"net/url"
	"os"
	"testing"

	"github.com/browsertask/browsertask/db/storetest"
	"github.com/browsertask/browsertask/engine"
	"github.com/jackc/pgx/v5"
)

// urlEnv names the database the PostgreSQL tests use; .ci/run sets it to a
// throwaway cluster (scripts/pg start).
const urlEnv = "BROWSERTASK_TEST_POSTGRES_URL"

// testURL returns the URL of a fresh, empty schema of the test database,
// dropped when t ends. Without the URL the test is skipped, saying why —
// except under CI=true, where a missing URL is a broken CI setup and fails.
func testURL(t testing.TB) string {
	t.Helper()
	base := os.Getenv(urlEnv)
	if base == "" {
		if os.Getenv("CI") == "true" {
			t.Fatalf("%s is not set under CI=true: .ci/run must start a cluster (scripts/pg start) and export it", urlEnv)
		}
		t.Skipf("PostgreSQL tests skipped: %s is not set (start a throwaway cluster: export %s=$(scripts/pg start))", urlEnv, urlEnv)
	}
	u, err := url.Parse(base)
	if err != nil {
		t.Fatalf("%s: %v", urlEnv, err)
	}
	b := make([]byte, 8)
	_, _ = rand.Read(b)
	schema := "t_" + hex.EncodeToString(b)
	q := u.Query()
	q.Set("search_path", schema)
	u.RawQuery = q.Encode()
	t.Cleanup(func() {
		ctx := context.Background()
		conn, err := pgx.Connect(ctx, base)
		if err != nil {
			t.Errorf("drop schema %s: %v", schema, err)
			return
		}
		defer conn.Close(ctx) //nolint:errcheck // test cleanup
		if _, err := conn.Exec(ctx, `DROP SCHEMA IF EXISTS `+pgx.Identifier{schema}.Sanitize()+` CASCADE`); err != nil {
			t.Errorf("drop schema %s: %v", schema, err)
		}
	})
	return u.String()
}

// openTest opens a handle on rawURL, closed when t ends.
func openTest(t testing.TB, rawURL string) *DB {
	t.Helper()
	d, err := Open(context.Background(), rawURL)
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	t.Cleanup(func() {
		if err := d.Close(); err != nil {
			t.Errorf("Close: %v", err)
		}
	})
	return d
}

// TestStore runs the engine.Store suite, unchanged, against PostgreSQL:
// every case gets a new schema, and a second handle on it is a second Open
// of the same URL, as another daemon would open it.
func TestStore(t *testing.T) {
	testURL(t) // skips (or fails under CI) before any subtest
	storetest.Run(t, func(t *testing.T) storetest.Harness {
		u := testURL(t)
		return storetest.Harness{
			Store:    openTest(t, u),
			OpenPeer: func(t *testing.T) engine.Store { return openTest(t, u) },
		}
	})
}
