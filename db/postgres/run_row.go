package postgres

import (
	"context"

	"github.com/browsertask/browsertask/db/sqlcommon"
	"github.com/browsertask/browsertask/engine"
)

// artifactIDsSQL selects (run_id, id) of the artifacts of the runs in a
// text[], in creation order.
const artifactIDsSQL = `SELECT run_id, id FROM artifacts
		WHERE run_id = ANY($1::text[]) ORDER BY created_at, ord`

// artifactIDs is PostgreSQL's sqlcommon.ArtifactIDsStatement: the ids
// travel as one text[] parameter, so the statement text is the same
// whatever the page size.
func artifactIDs(runIDs []string) (string, any, error) {
	return artifactIDsSQL, runIDs, nil
}

// runSQL is the statements every run-writing shared helper takes.
var runSQL = sqlcommon.RunStatements{
	Events:      eventSQL(),
	RunExists:   runExistsSQL,
	Get:         `SELECT ` + sqlcommon.RunColumns + ` FROM runs WHERE id = $1`,
	ArtifactIDs: artifactIDs,
}

// getRun loads one run with its artifact ids; ErrNotFound when missing.
func getRun(ctx context.Context, q queryer, runID string) (*engine.Run, error) {
	return sqlcommon.GetRun(ctx, q, runSQL.Get, runID, artifactIDs)
}
