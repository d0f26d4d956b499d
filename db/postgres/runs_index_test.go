package postgres

import (
	"context"
	"strings"
	"testing"
)

// TestListRunsByProfileUsesIndex: with 10,000 runs over 100 profiles,
// PostgreSQL plans ListRuns' own statements (count and page, with and
// without the keyset cursor) for one profile on runs_profile_created
// (migration 0011): the filter that an empty value switches off folds away once the
// value is known.
func TestListRunsByProfileUsesIndex(t *testing.T) {
	d := openTest(t, testURL(t))
	ctx := context.Background()
	if _, err := d.sql.ExecContext(ctx, `INSERT INTO runs (id, template_id, template_version, status,
			created_at, updated_at, expires_at, profile)
		SELECT 'run_' || n, 'tpl', 1, 'succeeded', n, n, n + 1000000, 'p' || (n % 100)
		FROM generate_series(1, 10000) AS n`); err != nil {
		t.Fatal(err)
	}
	if _, err := d.sql.ExecContext(ctx, `ANALYZE runs`); err != nil {
		t.Fatal(err)
	}
	filter := []any{int64(1), "", "", "", "p7"}
	cases := map[string]struct {
		sql  string
		args []any
	}{
		"count":  {listRunsCountSQL, filter},
		"page":   {listRunsPageSQL, append(filter[:5:5], "", int64(0), 20, 0)},
		"cursor": {listRunsPageSQL, append(filter[:5:5], "run_507", int64(507), 20, 0)},
	}
	for name, c := range cases {
		plan := explain(ctx, t, d, c.sql, c.args)
		if !strings.Contains(plan, "runs_profile_created") {
			t.Errorf("%s: plan does not use runs_profile_created:\n%s", name, plan)
		}
	}
}

// explain returns PostgreSQL's plan for query with args, one line a node.
func explain(ctx context.Context, t *testing.T, d *DB, query string, args []any) string {
	t.Helper()
	rows, err := d.sql.QueryContext(ctx, `EXPLAIN `+query, args...)
	if err != nil {
		t.Fatalf("EXPLAIN: %v", err)
	}
	defer rows.Close()
	var lines []string
	for rows.Next() {
		var line string
		if err := rows.Scan(&line); err != nil {
			t.Fatalf("EXPLAIN: %v", err)
		}
		lines = append(lines, line)
	}
	if err := rows.Err(); err != nil {
		t.Fatalf("EXPLAIN: %v", err)
	}
	return strings.Join(lines, "\n")
}
