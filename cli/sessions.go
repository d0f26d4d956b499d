package cli

import (
	"context"
	"fmt"
	"io"
	"sort"
	"text/tabwriter"

	"github.com/browsertask/browsertask/engine"
)

// cmdSessions lists the browser sessions used by queued and running runs.
func cmdSessions(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	sub := &cmdFlags{usage: `Usage: browsertask sessions [flags]

Lists the browser sessions that queued and running runs use.

Example:
  browsertask sessions`}
	a, err := openForCLI(ctx, "sessions", args, getenv, stderr, sub)
	if err != nil {
		return err
	}
	defer a.close()
	count := map[string]int{}
	state := map[string]engine.RunStatus{}
	for _, st := range []engine.RunStatus{engine.StatusRunning, engine.StatusQueued} {
		list, err := a.engine.List(ctx, engine.ListQuery{Status: string(st), Limit: 1000})
		if err != nil {
			return domainErr(err)
		}
		for _, r := range list.Runs {
			count[r.SessionID]++
			if _, ok := state[r.SessionID]; !ok {
				state[r.SessionID] = st
			}
		}
	}
	ids := make([]string, 0, len(count))
	for id := range count {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	tw := tabwriter.NewWriter(stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "SESSION\tSTATE\tRUNS")
	for _, id := range ids {
		fmt.Fprintf(tw, "%s\t%s\t%d\n", id, state[id], count[id])
	}
	return tw.Flush()
}
