package sqlcommon

import (
	"context"
	"fmt"

	"github.com/browsertask/browsertask/engine"
)

// Query is one statement with its arguments: the stores build ListRuns'
// text differently (SQLite names only the filters set, PostgreSQL keeps
// one text with every filter), so they hand over the finished statements.
type Query struct {
	SQL  string
	Args []any
}

// ListRuns is engine.Store.ListRuns on q (run it in one read
// transaction): count counts the runs the filter matches and page selects
// RunColumns of one page of them; the page's artifact ids come with them.
func ListRuns(ctx context.Context, q Querier, ids ArtifactIDsStatement, count, page Query) ([]*engine.Run, int, error) {
	var total int
	if err := q.QueryRowContext(ctx, count.SQL, count.Args...).Scan(&total); err != nil {
		return nil, 0, fmt.Errorf("db: count runs: %w", err)
	}
	runs, err := QueryRuns(ctx, q, ids, page.SQL, page.Args...)
	if err != nil {
		return nil, 0, err
	}
	return runs, total, nil
}
