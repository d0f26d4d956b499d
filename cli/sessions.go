package cli

import (
	"context"
	"flag"
	"fmt"
	"io"
	"sort"
	"text/tabwriter"
	"time"

	"github.com/browsertask/browsertask/engine"
)

const sessionsUsage = `Usage: browsertask sessions [list|new|import FILE|export ID -o FILE|close ID] [flags]

Browser sessions from a terminal (what create_browser_session,
export_session_state and close_browser_session do for MCP clients).

  list              the open sessions and the runs using them (the default)
  new               open a session and hold it: prints its ID on stdout, then
                    runs submitted with --session ID (from any terminal) run
                    in it, here, until Ctrl-C or "sessions close ID"; with
                    --save FILE its state (cookies, localStorage) is written
                    to FILE when it ends, and after each run that used it
  import FILE       "new" restoring a state FILE (--save-session of run,
                    --save of new, or export_session_state's artifact)
  export ID -o FILE write a session's state to FILE; the session must be
                    held by this command (a session held elsewhere is saved
                    by its holder: --save)
  close ID          close a session, whichever process holds it

A session lives in the process that opened it: for one run, simply use
"browsertask run TEMPLATE --session new --save-session FILE".

Examples:
  browsertask sessions
  browsertask sessions new --save login.json
  browsertask run login --session sess_… --input url=https://example.com/login --input username=alice
  browsertask sessions import login.json
  browsertask sessions close sess_…`

// cmdSessions lists, opens, imports, exports and closes browser sessions.
func cmdSessions(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	var save, out string
	sub := &cmdFlags{usage: sessionsUsage, maxArgs: 2, define: func(fs *flag.FlagSet) {
		fs.StringVar(&save, "save", "", "new/import: write the session's state to FILE when it ends and after each run in it (keep it private)")
		fs.StringVar(&out, "o", "", "export: the file to write the state to")
	}}
	a, err := openForCLI(ctx, "sessions", args, getenv, stderr, sub)
	if err != nil {
		return err
	}
	defer a.close()
	verb, arg := "list", ""
	if len(sub.args) > 0 {
		verb = sub.args[0]
	}
	if len(sub.args) > 1 {
		arg = sub.args[1]
	}
	need := func(what string) error {
		if arg == "" {
			return fmt.Errorf("sessions %s needs %s\n%s", verb, what, synopsisOf(sessionsUsage, "sessions"))
		}
		return nil
	}
	switch verb {
	case "list":
		return listSessions(ctx, a, stdout)
	case "new":
		return holdSession(ctx, a, "", save, stdout, stderr)
	case "import":
		if err := need("the state FILE"); err != nil {
			return err
		}
		return holdSession(ctx, a, arg, save, stdout, stderr)
	case "export":
		if err := need("a session ID"); err != nil {
			return err
		}
		if out == "" {
			return fmt.Errorf("sessions export needs -o FILE (the state holds login cookies: it is written to a file readable by you only, never to the terminal)")
		}
		if err := saveSessionState(ctx, a.engine, arg, out); err != nil {
			return fmt.Errorf("%w\n  (a session held by \"browsertask sessions new --save FILE\" is written to FILE by its holder)", err)
		}
		fmt.Fprintf(stderr, "wrote %s\n", out)
		return nil
	case "close":
		if err := need("a session ID"); err != nil {
			return err
		}
		if _, err := a.engine.CloseSession(ctx, arg); err != nil {
			return domainErr(err)
		}
		fmt.Fprintf(stderr, "closed %s\n", arg)
		return nil
	}
	msg := fmt.Sprintf("unknown sessions command %q", verb)
	if n := engine.Nearest(verb, []string{"list", "new", "import", "export", "close"}); n != "" {
		msg += fmt.Sprintf(": did you mean %q?", n)
	}
	return fmt.Errorf("%s\n%s", msg, synopsisOf(sessionsUsage, "sessions"))
}

// listSessions prints the open sessions and how many queued and running
// runs use each (a run's own session included).
func listSessions(ctx context.Context, a *app, stdout io.Writer) error {
	count := map[string]int{}
	state := map[string]string{}
	named, err := a.engine.ListSessions(ctx)
	if err != nil {
		return domainErr(err)
	}
	for _, s := range named {
		state[s.ID] = "idle"
	}
	for _, st := range []engine.RunStatus{engine.StatusRunning, engine.StatusQueued} {
		list, err := a.engine.List(ctx, engine.ListQuery{Status: string(st), Limit: 1000})
		if err != nil {
			return domainErr(err)
		}
		for _, r := range list.Runs {
			count[r.SessionID]++
			if s, ok := state[r.SessionID]; !ok || s == "idle" {
				state[r.SessionID] = string(st)
			}
		}
	}
	ids := make([]string, 0, len(state))
	for id := range state {
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

// holdPoll is how often a held session is looked at: closed elsewhere
// (sessions close), or a run in it ended (--save).
const holdPoll = 250 * time.Millisecond

// holdSession opens a session (restoring stateFile when given), prints
// its ID and runs the engine so runs submitted with it execute here,
// until ctx ends or the session is closed. save, when set, is written
// after each run in the session ends and when the hold ends.
func holdSession(ctx context.Context, a *app, stateFile, save string, stdout, stderr io.Writer) error {
	ectx, stopEngine := context.WithCancel(context.WithoutCancel(ctx))
	engineDone := make(chan error, 1)
	engine.Go(ectx, a.log, "cli.sessions.engine", func() { engineDone <- a.engine.Run(ectx) },
		func(p *engine.Panic) { engineDone <- p })
	defer func() { stopEngine(); <-engineDone }()
	flags := sessionFlags{id: "new", state: stateFile}
	id, err := flags.open(ctx, a.engine, nil, true)
	if err != nil {
		return err
	}
	fmt.Fprintln(stdout, id)
	fmt.Fprintf(stderr, "holding browser session %s: run templates in it with --session %s (from any terminal on this database); Ctrl-C or browsertask sessions close %s ends it\n", id, id, id)
	saveNow := func(why string) {
		if save == "" {
			return
		}
		if err := saveSessionState(context.WithoutCancel(ctx), a.engine, id, save); err != nil {
			fmt.Fprintf(stderr, "saving %s to %s failed: %v\n", id, save, err)
			return
		}
		fmt.Fprintf(stderr, "saved session %s to %s (%s)\n", id, save, why)
	}
	t := time.NewTicker(holdPoll)
	defer t.Stop()
	ended := endedRuns(ctx, a.engine, id)
	for {
		select {
		case <-ctx.Done():
			saveNow("the hold ended")
			if _, err := a.engine.CloseSession(context.WithoutCancel(ctx), id); err != nil && engine.CodeOf(err) != engine.SessionNotFound {
				return domainErr(err)
			}
			fmt.Fprintf(stderr, "closed %s\n", id)
			return nil
		case <-t.C:
		}
		if !sessionOpen(ctx, a.engine, id) {
			fmt.Fprintf(stderr, "session %s was closed\n", id)
			return nil
		}
		if now := endedRuns(ctx, a.engine, id); now > ended {
			ended = now
			saveNow("a run in it ended")
		}
	}
}

// sessionOpen reports whether session id is still open (a failed look-up
// counts as open: the next poll looks again).
func sessionOpen(ctx context.Context, eng *engine.Engine, id string) bool {
	all, err := eng.ListSessions(ctx)
	if err != nil {
		return true
	}
	for _, s := range all {
		if s.ID == id {
			return true
		}
	}
	return false
}

// endedRuns counts the runs in session id that reached a terminal status.
func endedRuns(ctx context.Context, eng *engine.Engine, id string) int {
	list, err := eng.List(ctx, engine.ListQuery{SessionID: id, Limit: 1000})
	if err != nil {
		return 0
	}
	n := 0
	for _, r := range list.Runs {
		if r.Status.Terminal() {
			n++
		}
	}
	return n
}
