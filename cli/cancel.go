package cli

import (
	"context"
	"flag"
	"io"
)

// cmdCancel cancels a run wherever it executes: the canceled state is
// written to the database at once, and the process running it stops it on
// its next heartbeat.
func cmdCancel(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	var reason string
	sub := &cmdFlags{usage: `Usage: browsertask cancel RUN [--reason TEXT] [flags]

Cancels a queued or running run, whichever process executes it. Prints the
cancel result as JSON; exits 1 when the run was already finished. RUN is
the run id, or a unique prefix of it after "run_" such as the 8 characters
the dashboard shows.

Examples:
  browsertask cancel run_0b7c... --reason "wrong URLs"
  browsertask cancel 0b7c41d2`, minArgs: 1, maxArgs: 1, define: func(fs *flag.FlagSet) {
		fs.StringVar(&reason, "reason", "canceled from the command line", "why, recorded on the run")
	}}
	a, err := openForCLI(ctx, "cancel", args, getenv, stderr, sub)
	if err != nil {
		return err
	}
	defer a.close()
	id, err := resolveRunID(ctx, a.engine, sub.args[0])
	if err != nil {
		return err
	}
	res, err := a.engine.Cancel(ctx, id, reason)
	if err != nil {
		return domainErr(err)
	}
	if err := printJSON(stdout, res); err != nil {
		return err
	}
	if !res.Success {
		return ExitError(1)
	}
	return nil
}
