package db

import (
	"path/filepath"
	"testing"

	"github.com/browsertask/browsertask/db/storetest"
	"github.com/browsertask/browsertask/engine"
)

// TestStore runs the engine.Store suite against SQLite: every case gets a
// new file under its own t.TempDir(), and a second handle on it is a
// second db.Open of the same file, as a second process would open it.
func TestStore(t *testing.T) {
	storetest.Run(t, func(t *testing.T) storetest.Harness {
		path := filepath.Join(t.TempDir(), "bt.db")
		return storetest.Harness{
			Store:    openTest(t, path),
			OpenPeer: func(t *testing.T) engine.Store { return openTest(t, path) },
		}
	})
}
