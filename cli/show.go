package cli

import (
	"context"
	"fmt"
	"io"
)

// cmdShow prints one run as JSON.
func cmdShow(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	sub := &cmdFlags{usage: `Usage: browsertask show RUN [flags]

Prints the run as JSON (the same object get_task_run returns). RUN is the
run id, or a unique prefix of it after "run_" such as the 8 characters the
dashboard shows.

Examples:
  browsertask show run_0b7c...
  browsertask show 0b7c41d2`, minArgs: 1, maxArgs: 1}
	a, err := openForCLI(ctx, "show", args, getenv, stderr, sub)
	if err != nil {
		return err
	}
	defer a.close()
	id, err := resolveRunID(ctx, a.engine, sub.args[0])
	if err != nil {
		return err
	}
	r, err := a.engine.Get(ctx, id)
	if err != nil {
		return domainErr(err)
	}
	if err := printJSON(stdout, r); err != nil {
		return err
	}
	if q := r.Question; q != nil {
		fmt.Fprintf(stderr, "%s: %s; answer it with: browsertask answer %s --request %s\n", r.RunID, statusText(r), r.RunID, q.RequestID)
	}
	return nil
}
