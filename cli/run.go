package cli

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/browsertask/browsertask/engine"
)

const runUsage = `Usage: browsertask run TEMPLATE [--input key=value]... [--inputs FILE|-] [--session ID] [--async] [--timeout 2m] [flags]

Submits a run of TEMPLATE to the shared database and executes it in this
process (unless another browsertask process claims it first), showing
progress on stderr. Prints the terminal Run JSON on stdout. Exit status: 0
succeeded, 2 partial_success, 1 failed or canceled (or a bad submission).
With --async it prints the runId at once and leaves the run to a running
"browsertask serve" (or the next process that opens the database).
Ctrl-C cancels the run.

When the run asks a question (a one-time code, a confirmation), a terminal
on stdin is prompted (hidden input for a secret, y/n for confirm); without
one, a line on stderr says how to answer it from another terminal
(browsertask answer RUN ...) and the run keeps waiting, up to
--input-timeout-ms.

Examples:
  browsertask run batch_extract_pages --input urls=https://example.com,https://example.org
  browsertask run batch_extract_pages --inputs job.json --timeout 5m > run.json
  echo '{"urls":["https://example.com"]}' | browsertask run batch_extract_pages --inputs -
  browsertask run batch_extract_pages --input urls=https://example.com --async`

// cmdRun submits a run and, unless --async, executes and follows it.
func cmdRun(ctx context.Context, args []string, getenv func(string) string, stdin io.Reader, stdout, stderr io.Writer) error {
	var pairs inputFlags
	var inputsFile, session string
	var async bool
	var timeout time.Duration
	sub := &cmdFlags{usage: runUsage, minArgs: 1, maxArgs: 1, define: func(fs *flag.FlagSet) {
		fs.Var(&pairs, "input", "an input as key=value (repeatable; arrays take comma-separated values)")
		fs.StringVar(&inputsFile, "inputs", "", "JSON object of inputs from FILE, or - for stdin")
		fs.StringVar(&session, "session", "", "run inside this existing browser session")
		fs.BoolVar(&async, "async", false, "print the runId and return at once")
		fs.DurationVar(&timeout, "timeout", 0, "bound on the running phase, e.g. 2m (default: the profile's timeout)")
	}}
	a, err := openForCLI(ctx, "run", args, getenv, stderr, sub)
	if err != nil {
		return err
	}
	defer a.close()
	tplID := sub.args[0]
	var schema json.RawMessage
	for _, t := range a.engine.Templates() {
		if t.TemplateID == strings.SplitN(tplID, "@", 2)[0] {
			schema = t.InputSchema
		}
	}
	inputs, err := buildInputs(pairs, inputsFile, stdin, schema)
	if err != nil {
		return err
	}
	mode := engine.ModeSync
	if async {
		mode = engine.ModeAsync
	}
	res, err := a.engine.Submit(ctx, engine.SubmitRequest{TemplateID: tplID, SessionID: session, Inputs: inputs,
		Mode: mode, TimeoutMs: timeout.Milliseconds()})
	if err != nil {
		return domainErr(err)
	}
	run := res.Run
	if async {
		fmt.Fprintln(stdout, run.RunID)
		if alive, _ := a.engine.AnyPeerAlive(ctx); !alive {
			fmt.Fprintln(stderr, "note: no other browsertask process is running on this database; the run stays queued until one starts (browsertask serve)")
		}
		return nil
	}
	ectx, stopEngine := context.WithCancel(context.WithoutCancel(ctx))
	engineDone := make(chan error, 1)
	engine.Go(ectx, a.log, "cli.run.engine", func() { engineDone <- a.engine.Run(ectx) },
		func(p *engine.Panic) { engineDone <- p })
	defer func() { stopEngine(); <-engineDone }()

	bar := newProgressPrinter(stderr, isTerminal(stderr))
	// Questions the run asks are prompted for on a terminal; otherwise a
	// line says how to answer them (browsertask answer, the dashboard).
	var tty *terminal
	if inputsFile != "-" {
		tty = openTerminal(stdin, stderr)
	}
	questions := newRunQuestions(ctx, &runQuestions{eng: a.engine, runID: run.RunID, tty: tty, w: stderr, bar: bar,
		how: answerHow(a.cfg, getenv), dashboard: a.dashboardURL(ctx, run.RunID)})
	final, err := a.engine.Wait(ctx, run.RunID, questions.update)
	questions.close()
	if err != nil && ctx.Err() != nil {
		// Interrupted: cancel the run, then report how it ended.
		cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
		defer cancel()
		if _, cerr := a.engine.Cancel(cctx, run.RunID, "interrupted on the command line"); cerr != nil {
			return domainErr(cerr)
		}
		final, err = a.engine.Get(cctx, run.RunID)
	}
	if err != nil {
		return domainErr(err)
	}
	bar.done(final)
	if err := printJSON(stdout, final); err != nil {
		return err
	}
	switch final.Status {
	case engine.StatusSucceeded:
		return nil
	case engine.StatusPartialSuccess:
		return ExitError(2)
	}
	return ExitError(1)
}
