package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"sort"
	"text/tabwriter"
	"time"

	"github.com/browsertask/browsertask/engine"
)

// openForCLI parses a read/cancel subcommand's flags and opens the app
// (database and engine, not started: nothing is claimed or executed).
func openForCLI(ctx context.Context, name string, sub *cmdFlags, args []string, getenv func(string) string, stderr io.Writer) (*app, error) {
	cfg, err := parseFlags(name, args, getenv, stderr, sub)
	if err != nil {
		return nil, err
	}
	return newApp(ctx, cfg, stderr)
}

// cmdRuns prints a table of runs, newest first.
func cmdRuns(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	var status, tpl string
	var limit int
	sub := &cmdFlags{usage: `Usage: browsertask runs [--status S] [--template T] [--limit N] [flags]

Lists runs in the shared database, newest first.

Examples:
  browsertask runs
  browsertask runs --status running
  browsertask runs --template batch_extract_pages --limit 100`, define: func(fs *flag.FlagSet) {
		fs.StringVar(&status, "status", "", "only runs in this status (queued, running, succeeded, failed, partial_success, canceled)")
		fs.StringVar(&tpl, "template", "", "only runs of this template")
		fs.IntVar(&limit, "limit", 20, "most runs listed (1..1000)")
	}}
	a, err := openForCLI(ctx, "runs", sub, args, getenv, stderr)
	if isHelp(err) {
		return nil
	}
	if err != nil {
		return err
	}
	defer a.close()
	list, err := a.engine.List(ctx, engine.ListQuery{Status: status, TemplateID: tpl, Limit: limit})
	if err != nil {
		return domainErr(err)
	}
	tw := tabwriter.NewWriter(stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "RUN ID\tSTATUS\tTEMPLATE\tPROGRESS\tCREATED\tDURATION")
	for _, r := range list.Runs {
		dur := "-"
		if r.StartedAt != nil {
			dur = (time.Duration(r.Metrics.ElapsedMs) * time.Millisecond).String()
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\n", r.RunID, r.Status, r.TemplateID, counts(r.Progress),
			time.UnixMilli(r.CreatedAt).Format("2006-01-02 15:04:05"), dur)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	if len(list.Runs) < list.Total {
		fmt.Fprintf(stderr, "%d of %d runs shown (use --limit)\n", len(list.Runs), list.Total)
	}
	return nil
}

// cmdShow prints one run as JSON.
func cmdShow(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	sub := &cmdFlags{usage: `Usage: browsertask show RUN [flags]

Prints the run as JSON (the same object get_task_run returns).

Example:
  browsertask show run_0b7c...`, minArgs: 1, maxArgs: 1}
	a, err := openForCLI(ctx, "show", sub, args, getenv, stderr)
	if isHelp(err) {
		return nil
	}
	if err != nil {
		return err
	}
	defer a.close()
	r, err := a.engine.Get(ctx, sub.args[0])
	if err != nil {
		return domainErr(err)
	}
	return printJSON(stdout, r)
}

// cmdCancel cancels a run wherever it executes: the canceled state is
// written to the database at once, and the process running it stops it on
// its next heartbeat.
func cmdCancel(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	var reason string
	sub := &cmdFlags{usage: `Usage: browsertask cancel RUN [--reason TEXT] [flags]

Cancels a queued or running run, whichever process executes it. Prints the
cancel result as JSON; exits 1 when the run was already finished.

Example:
  browsertask cancel run_0b7c... --reason "wrong URLs"`, minArgs: 1, maxArgs: 1, define: func(fs *flag.FlagSet) {
		fs.StringVar(&reason, "reason", "canceled from the command line", "why, recorded on the run")
	}}
	a, err := openForCLI(ctx, "cancel", sub, args, getenv, stderr)
	if isHelp(err) {
		return nil
	}
	if err != nil {
		return err
	}
	defer a.close()
	res, err := a.engine.Cancel(ctx, sub.args[0], reason)
	if err != nil {
		return domainErr(err)
	}
	if err := printJSON(stdout, res); err != nil {
		return err
	}
	if !res.Success {
		return exitError(1)
	}
	return nil
}

// cmdArtifact writes an artifact's bytes to a file or stdout.
func cmdArtifact(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	var out string
	sub := &cmdFlags{usage: `Usage: browsertask artifact ID [-o FILE] [flags]

Writes the artifact's bytes to FILE, or to stdout.

Examples:
  browsertask artifact art_1f2e... -o page.png
  browsertask artifact art_1f2e... | jq .`, minArgs: 1, maxArgs: 1, define: func(fs *flag.FlagSet) {
		fs.StringVar(&out, "o", "", "write to this file instead of stdout")
	}}
	a, err := openForCLI(ctx, "artifact", sub, args, getenv, stderr)
	if isHelp(err) {
		return nil
	}
	if err != nil {
		return err
	}
	defer a.close()
	id := sub.args[0]
	meta, err := a.engine.Artifact(ctx, id)
	if err != nil {
		return domainErr(err)
	}
	w := stdout
	if out != "" {
		f, err := os.Create(out)
		if err != nil {
			return err
		}
		defer f.Close()
		w = f
	}
	for off := int64(0); off < meta.Size; {
		b, err := a.engine.ArtifactBytes(ctx, id, off, 1<<20)
		if err != nil {
			return domainErr(err)
		}
		if len(b) == 0 {
			return fmt.Errorf("artifact %s ended at %d of %d bytes", id, off, meta.Size)
		}
		if _, err := w.Write(b); err != nil {
			return err
		}
		off += int64(len(b))
	}
	if out != "" {
		fmt.Fprintf(stderr, "wrote %s (%d bytes, %s)\n", out, meta.Size, meta.MimeType)
	}
	return nil
}

// cmdTemplates lists the templates.
func cmdTemplates(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	sub := &cmdFlags{usage: `Usage: browsertask templates [flags]

Lists the task templates (see the dashboard's /templates for schemas).

Example:
  browsertask templates --dev-templates`}
	a, err := openForCLI(ctx, "templates", sub, args, getenv, stderr)
	if isHelp(err) {
		return nil
	}
	if err != nil {
		return err
	}
	defer a.close()
	tw := tabwriter.NewWriter(stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "TEMPLATE\tVERSION\tTRUST\tRESUMABLE\tTITLE")
	for _, t := range a.engine.Templates() {
		fmt.Fprintf(tw, "%s\t%d\t%s\t%v\t%s\n", t.TemplateID, t.Version, t.TrustLevel, t.Resumable, t.Title)
	}
	return tw.Flush()
}

// cmdSessions lists the browser sessions used by queued and running runs.
func cmdSessions(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	sub := &cmdFlags{usage: `Usage: browsertask sessions [flags]

Lists the browser sessions that queued and running runs use.

Example:
  browsertask sessions`}
	a, err := openForCLI(ctx, "sessions", sub, args, getenv, stderr)
	if isHelp(err) {
		return nil
	}
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
