package cli

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"time"

	"github.com/browsertask/browsertask/engine"
)

// followOptions is what followRun needs beyond the app.
type followOptions struct {
	stdin    io.Reader
	stderr   io.Writer
	getenv   func(string) string
	prompt   bool // stdin may be a terminal to prompt on (no flag read it)
	notifier runNotifier
}

// runNotifier is told when a followed run starts waiting for a person and
// when it ends (internal/notify through notifyFlags; nil: nobody).
type runNotifier interface {
	Waiting(ctx context.Context, r *engine.Run)
	Ended(ctx context.Context, r *engine.Run)
}

// stopWait bounds how long an interrupted command waits for the canceled
// run to end: the template writes what it kept (pages.json) as it stops,
// and the Run JSON must name those artifacts.
const stopWait = 30 * time.Second

// followRun shows a run's progress on stderr, prompts for (or hints at)
// its questions, and returns it once terminal. When ctx ends first
// (Ctrl-C) the run is canceled and followRun still waits for its terminal
// state, so what the run kept is listed whichever way it ended. A run that
// continues an earlier one says so once on stderr.
func followRun(ctx context.Context, a *app, run *engine.Run, o followOptions) (*engine.Run, error) {
	bar := newProgressPrinter(o.stderr, isTerminal(o.stderr))
	var tty *terminal
	if o.prompt {
		tty = openTerminal(o.stdin, o.stderr)
	}
	questions := newRunQuestions(ctx, &runQuestions{eng: a.engine, runID: run.RunID, tty: tty, w: o.stderr, bar: bar,
		how: answerHow(a.cfg, o.getenv), dashboard: a.dashboardURL(ctx, run.RunID)})
	adopted := &adoptNotice{eng: a.engine, runID: run.RunID, w: o.stderr}
	waitingFor := ""
	onChange := func(r *engine.Run) {
		adopted.check(ctx, r)
		questions.update(r)
		if o.notifier == nil {
			return
		}
		if q := r.Question; q != nil && q.RequestID != waitingFor {
			waitingFor = q.RequestID
			o.notifier.Waiting(context.WithoutCancel(ctx), r)
		} else if q == nil {
			waitingFor = ""
		}
	}
	final, err := a.engine.Wait(ctx, run.RunID, onChange)
	questions.close()
	if err != nil && ctx.Err() != nil {
		// Interrupted: cancel the run, then wait for how it ended.
		cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), stopWait)
		defer cancel()
		if _, cerr := a.engine.Cancel(cctx, run.RunID, "interrupted on the command line"); cerr != nil {
			return nil, domainErr(cerr)
		}
		if final, err = a.engine.Wait(cctx, run.RunID, nil); err != nil {
			final, err = a.engine.Get(cctx, run.RunID)
		}
	}
	if err != nil {
		return nil, domainErr(err)
	}
	if final.Status == engine.StatusCanceled {
		final = settleCanceled(context.WithoutCancel(ctx), a.engine, final)
	}
	adopted.check(context.WithoutCancel(ctx), final)
	bar.done(final)
	listArtifacts(context.WithoutCancel(ctx), a.engine, o.stderr, final)
	if o.notifier != nil {
		o.notifier.Ended(context.WithoutCancel(ctx), final)
	}
	return final, nil
}

// adoptNotice prints "continuing run_…: 49 pages already done" once when
// the followed run adopted an earlier run's checkpoints (engine/adopt.go),
// so running the same command again after a stop never continues in
// silence.
type adoptNotice struct {
	eng    *engine.Engine
	runID  string
	w      io.Writer
	seq    int64
	done   bool
	checks int
}

// maxAdoptChecks bounds the event reads: adopting happens when the first
// attempt starts, so a run that shows none in its first updates has none.
const maxAdoptChecks = 50

// check reads the run's new events for an "adopted" one while the run is
// young.
func (n *adoptNotice) check(ctx context.Context, r *engine.Run) {
	if n.done || r.Status == engine.StatusQueued || n.checks >= maxAdoptChecks {
		return
	}
	n.checks++
	events, next, _, err := n.eng.EventsAfter(ctx, n.runID, n.seq, 100)
	if err != nil {
		return
	}
	n.seq = next
	for _, ev := range events {
		if ev.Type != "adopted" {
			continue
		}
		var d struct {
			FromRunID string `json:"fromRunId"`
			Items     int    `json:"items"`
		}
		if json.Unmarshal(ev.Data, &d) == nil {
			fmt.Fprintf(n.w, "continuing %s: %d pages already done (the same inputs stopped there; they are not fetched again)\n", d.FromRunID, d.Items)
			n.done = true
			return
		}
	}
}

// listArtifacts prints on stderr what the run kept, one line per artifact
// with the command that saves it, whatever way the run ended.
func listArtifacts(ctx context.Context, eng *engine.Engine, w io.Writer, r *engine.Run) {
	if len(r.ArtifactIDs) == 0 {
		return
	}
	fmt.Fprintf(w, "kept %d artifact(s):\n", len(r.ArtifactIDs))
	for _, id := range r.ArtifactIDs {
		a, err := eng.Artifact(ctx, id)
		if err != nil || a == nil {
			fmt.Fprintf(w, "  %s\n", id)
			continue
		}
		fmt.Fprintf(w, "  %s  %s  %s  (browsertask artifact %s -o %s)\n", a.ID, a.Name, byteSize(a.Size), a.ID, a.Name)
	}
}

// byteSize is n in B, KiB or MiB for a person.
func byteSize(n int64) string {
	switch {
	case n >= 1<<20:
		return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20))
	case n >= 1<<10:
		return fmt.Sprintf("%.1f KiB", float64(n)/(1<<10))
	}
	return fmt.Sprintf("%d B", n)
}

// submitErr is domainErr for a refused submission, with the terminal's
// own fix where MCP's advice names a tool a terminal cannot call: a
// template that needs a session is told --session new.
func submitErr(err error, sessionID string) error {
	var e *engine.Error
	if errors.As(err, &e) && e.Code == engine.InvalidParameter && sessionID == "" && e.Details["field"] == "sessionId" {
		return fmt.Errorf("%s: this template runs inside a browser session that outlives the run\n  recovery: add --session new (and --save-session FILE to keep the login for later runs with --session-state FILE), or start one with browsertask sessions new and pass --session ID", e.Code)
	}
	if errors.As(err, &e) && e.Code == engine.InvalidParameter && sessionID != "" && strings.Contains(e.Message, "secrets never leave") {
		return fmt.Errorf("%s: %s\n  recovery: a run with secret inputs (a password) runs in the process that opens its session: use --session new here (--save-session FILE keeps the login; later runs take --session-state FILE, or hold it with browsertask sessions import FILE)", e.Code, e.Message)
	}
	return domainErr(err)
}

// settlePoll is how often settleCanceled looks at the execution.
const settlePoll = 50 * time.Millisecond

// settleCanceled returns the canceled run once what it kept is recorded:
// a cancel is written at once, and the process executing the run stores
// the pages it finished (pages.json) and adds them to the run moments
// later (engine/keep.go). Printed before that, the Run would say
// artifactIds [] although the pages are kept. It waits, up to stopWait,
// for this process to stop executing the run, then for a "kept" event
// when the run had finished steps but names no artifact yet (a peer
// executed it).
func settleCanceled(ctx context.Context, eng *engine.Engine, r *engine.Run) *engine.Run {
	ctx, cancel := context.WithTimeout(ctx, stopWait)
	defer cancel()
	t := time.NewTicker(settlePoll)
	defer t.Stop()
	for slices.Contains(eng.Running(), r.RunID) {
		select {
		case <-ctx.Done():
			return r
		case <-t.C:
		}
	}
	if fresh, err := eng.Get(ctx, r.RunID); err == nil {
		r = fresh
	}
	if len(r.ArtifactIDs) > 0 || r.Progress.DoneSteps+r.Progress.FailedSteps == 0 {
		return r
	}
	// A peer keeps it: wait a little for its "kept" event.
	kctx, kcancel := context.WithTimeout(ctx, 5*time.Second)
	defer kcancel()
	var seq int64
	for {
		evs, next, _, err := eng.WaitEvents(kctx, r.RunID, seq, time.Second)
		if err != nil {
			return r
		}
		seq = next
		for _, ev := range evs {
			if ev.Type == "kept" {
				if fresh, err := eng.Get(ctx, r.RunID); err == nil {
					return fresh
				}
				return r
			}
		}
		if len(evs) == 0 {
			// A terminal run's complete log answers at once: poll.
			select {
			case <-kctx.Done():
				return r
			case <-t.C:
			}
		}
	}
}
