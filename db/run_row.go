package db

import (
	"context"
	"encoding/json"

	"github.com/browsertask/browsertask/db/sqlcommon"
	"github.com/browsertask/browsertask/engine"
)

// artifactIDsSQL selects (run_id, id) of the artifacts of the runs in a
// JSON array, in creation order.
const artifactIDsSQL = `SELECT run_id, id FROM artifacts
		WHERE run_id IN (SELECT value FROM json_each(?)) ORDER BY created_at, rowid`

// artifactIDs is SQLite's sqlcommon.ArtifactIDsStatement: the ids travel
// as one JSON array, so the statement text is the same whatever the page
// size and is prepared once and cached.
func artifactIDs(runIDs []string) (string, any, error) {
	list, err := json.Marshal(runIDs)
	return artifactIDsSQL, string(list), err
}

// runSQL is the statements every run-writing shared helper takes.
var runSQL = sqlcommon.RunStatements{
	Events:      eventSQL(),
	RunExists:   runExistsSQL,
	Get:         `SELECT ` + sqlcommon.RunColumns + ` FROM runs WHERE id = ?`,
	ArtifactIDs: artifactIDs,
}

// getRun loads one run with its artifact ids; ErrNotFound when missing.
func getRun(ctx context.Context, q queryer, runID string) (*engine.Run, error) {
	return sqlcommon.GetRun(ctx, q, runSQL.Get, runID, artifactIDs)
}
