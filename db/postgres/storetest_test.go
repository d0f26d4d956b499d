package postgres

import (
	"context"
	"testing"

	"github.com/browsertask/browsertask/db/storetest"
	"github.com/browsertask/browsertask/engine"
	"github.com/browsertask/browsertask/internal/fixture"
)

// testURL is a fresh schema of the test database (fixture.PostgresURL).
func testURL(t testing.TB) string { return fixture.PostgresURL(t) }

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
