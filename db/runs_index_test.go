package db

import (
	"context"
	"strings"
	"testing"

	"github.com/browsertask/browsertask/db/sqlcommon"
	"github.com/browsertask/browsertask/engine"
)

// TestListRunsByProfileUsesIndex: list_runs filtered by a profile reads
// runs_profile_created (migration 0011), both the page (in order, no
// sort of every run) and the count, as SQLite plans ListRuns' own
// statements.
func TestListRunsByProfileUsesIndex(t *testing.T) {
	d := newDB(t)
	ctx := context.Background()
	for _, f := range []engine.RunFilter{
		{Now: 1, Profile: "work", Limit: 20},
		{Now: 1, Profile: "work", Limit: 20, BeforeRunID: "run_9", BeforeCreatedAt: 9},
	} {
		count, page := listRunsSQL(f)
		for name, q := range map[string]sqlcommon.Query{"count": count, "page": page} {
			plan := explainQueryPlan(ctx, t, d, q.SQL, q.Args)
			if !strings.Contains(plan, "INDEX runs_profile_created (profile=?") {
				t.Errorf("%s of %+v: plan %q does not search runs_profile_created by profile", name, f, plan)
			}
			if strings.Contains(plan, "TEMP B-TREE") {
				t.Errorf("%s of %+v: plan %q sorts the rows; the index gives them in order", name, f, plan)
			}
		}
	}
}

// explainQueryPlan returns the detail lines of SQLite's plan for query.
func explainQueryPlan(ctx context.Context, t *testing.T, d *DB, query string, args []any) string {
	t.Helper()
	rows, err := d.r.QueryContext(ctx, `EXPLAIN QUERY PLAN `+query, args...)
	if err != nil {
		t.Fatalf("EXPLAIN QUERY PLAN: %v", err)
	}
	defer rows.Close()
	var lines []string
	for rows.Next() {
		var (
			id, parent, unused int
			detail             string
		)
		if err := rows.Scan(&id, &parent, &unused, &detail); err != nil {
			t.Fatalf("EXPLAIN QUERY PLAN: %v", err)
		}
		lines = append(lines, detail)
	}
	if err := rows.Err(); err != nil {
		t.Fatalf("EXPLAIN QUERY PLAN: %v", err)
	}
	return strings.Join(lines, "; ")
}
