package cli

import (
	"context"
	"flag"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/browsertask/browsertask/engine"
)

// cmdRuns prints a table of runs, newest first.
func cmdRuns(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	var status, tpl string
	var limit int
	var all bool
	sub := &cmdFlags{usage: `Usage: browsertask runs [--status S] [--template T] [--limit N] [--all] [flags]

Lists runs in the shared database, newest first; --all adds the history of
runs already forgotten (--run-ttl-ms after they ended; kept --history-ttl),
marked expired, with the artifacts of theirs that still exist.

Examples:
  browsertask runs
  browsertask runs --status running
  browsertask runs --all
  browsertask runs --template batch_extract_pages --limit 100`, define: func(fs *flag.FlagSet) {
		fs.StringVar(&status, "status", "", "only runs in this status (queued, running, succeeded, failed, partial_success, canceled)")
		fs.StringVar(&tpl, "template", "", "only runs of this template")
		fs.IntVar(&limit, "limit", 20, "most runs listed (1..1000)")
		fs.BoolVar(&all, "all", false, "also list the history of forgotten runs")
	}}
	a, err := openForCLI(ctx, "runs", args, getenv, stderr, sub)
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
		progress := counts(r.Progress)
		if progress == "" {
			progress = "-" // nothing counted yet: never "0/0"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\n", r.RunID, statusText(r), r.TemplateID, progress,
			time.UnixMilli(r.CreatedAt).Format("2006-01-02 15:04:05"), dur)
	}
	var hist *engine.HistoryList
	if all {
		if hist, err = a.engine.History(ctx, limit, 0); err != nil {
			return domainErr(err)
		}
		for _, h := range hist.Runs {
			if (status != "" && string(h.Status) != status) || (tpl != "" && h.TemplateID != tpl) {
				continue
			}
			dur := "-"
			if h.StartedAt != nil && h.FinishedAt != nil {
				dur = (time.Duration(*h.FinishedAt-*h.StartedAt) * time.Millisecond).String()
			}
			progress := counts(h.Progress)
			if progress == "" {
				progress = "-"
			}
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\n", h.RunID, string(h.Status)+" (expired)", h.TemplateID, progress,
				time.UnixMilli(h.CreatedAt).Format("2006-01-02 15:04:05"), dur)
		}
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	if len(list.Runs) < list.Total {
		fmt.Fprintf(stderr, "%d of %d runs shown (use --limit)\n", len(list.Runs), list.Total)
	}
	if hist != nil {
		historyNotes(stdout, hist)
	}
	return nil
}

// historyNotes says, under the table, what an expired run was about and
// which of its artifacts can still be read.
func historyNotes(w io.Writer, hist *engine.HistoryList) {
	for _, h := range hist.Runs {
		line := h.RunID + ": " + h.InputsSummary
		if h.ErrorCode != "" {
			line += " — " + h.ErrorCode + ": " + h.ErrorMessage
		}
		fmt.Fprintln(w, line)
		for _, a := range h.Artifacts {
			fmt.Fprintf(w, "  %s  %s  %s  (browsertask artifact %s -o %s)\n", a.ID, a.Name, a.MimeType, a.ID, a.Name)
		}
	}
}

// statusText is a run's status for a table: a running run that waits for
// a person says so, "running (waiting for input: Enter the code)".
func statusText(r *engine.Run) string {
	if r.Question == nil {
		return string(r.Status)
	}
	msg := strings.Join(strings.Fields(r.Question.Message), " ")
	if msg == "" {
		msg = r.Question.RequestID
	}
	if rs := []rune(msg); len(rs) > 40 {
		msg = strings.TrimSpace(string(rs[:39])) + "…"
	}
	return fmt.Sprintf("%s (waiting for input: %s)", r.Status, msg)
}
