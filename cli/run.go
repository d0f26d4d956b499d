package cli

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"strings"

	"github.com/browsertask/browsertask/engine"
)

const runUsage = `Usage: browsertask run TEMPLATE [--input key=value]... [--inputs FILE|-] [--options FILE|JSON] [--session ID|new] [flags]

Submits a run of TEMPLATE to the shared database and executes it in this
process (unless another browsertask process claims it first), showing
progress on stderr. Prints the terminal Run JSON on stdout, its result cut
to the answer budget as MCP answers are (--full prints it whole), and on
stderr the artifacts it kept, however it ended. Exit status: 0 succeeded,
2 partial_success, 1 failed or canceled (or a bad submission).
With --async (--mode async) it prints the runId at once and leaves the run
to a running "browsertask serve" (or the next process that opens the
database). Ctrl-C cancels the run and still lists what it kept. Running the
same command after a stop continues where it stopped, and says so.

The options of run_task_template are flags: --output-schema, --mode,
--timeout, --idempotency-key, or all at once with --options FILE|JSON
(flags win). A template that needs a browser session (login) takes
--session new; --save-session FILE keeps the login, --session-state FILE
starts the next run logged in.

When the run asks a question (a one-time code, a confirmation), a terminal
on stdin is prompted (hidden input for a secret, y/n for confirm); without
one, a line on stderr says how to answer it from another terminal
(browsertask answer RUN ...) and the run keeps waiting, up to
--input-timeout-ms. --notify and --notify-url say when the run ends or
waits for you.

Examples:
  browsertask run batch_extract_pages --input urls=https://example.com,https://example.org --render auto
  browsertask run batch_extract_pages --inputs job.json --timeout 5m > run.json
  echo '{"urls":["https://example.com"]}' | browsertask run batch_extract_pages --inputs -
  browsertask run extract_structured --input urls=https://shop.example/p/1 --output-schema product.schema.json
  browsertask run login --input url=https://example.com/login --input username=alice --session new --save-session session.json
  browsertask run crawl_site --input startUrl=https://example.com/docs/ --session-state session.json --notify
  browsertask run batch_extract_pages --input urls=https://example.com --async --idempotency-key nightly-2026-07-01`

// cmdRun submits a run and, unless async, executes and follows it.
func cmdRun(ctx context.Context, args []string, getenv func(string) string, stdin io.Reader, stdout, stderr io.Writer) error {
	var pairs inputFlags
	var inputsFile string
	var opts runOptions
	var sess sessionFlags
	var out outputFlags
	var note notifyFlags
	sub := &cmdFlags{usage: runUsage, minArgs: 1, maxArgs: 1, define: func(fs *flag.FlagSet) {
		fs.Var(&pairs, "input", "an input as key=value (repeatable; arrays take comma-separated values)")
		fs.StringVar(&inputsFile, "inputs", "", "JSON object of inputs from FILE, or - for stdin")
		opts.define(fs)
		sess.define(fs)
		out.define(fs)
		note.define(fs)
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
	if inputs, err = opts.setRender(inputs, tplID, schema); err != nil {
		return err
	}
	req := engine.SubmitRequest{TemplateID: tplID, Inputs: inputs}
	async, err := opts.apply(&req, stdin, inputsFile == "-")
	if err != nil {
		return err
	}
	notifier, err := note.open(getenv, stderr)
	if err != nil {
		return err
	}
	if async && notifier != nil {
		return fmt.Errorf("--notify and --notify-url tell when a run followed here ends: leave out --async (a daemon's runs are followed with browsertask show, or MCP resources/subscribe)")
	}
	if async && (sess.isNew() || sess.save != "") {
		return fmt.Errorf("--session new and --save-session need the run to end in this process: leave out --async (or start a session with browsertask sessions new)")
	}
	if req.SessionID, err = sess.open(ctx, a.engine, stdin, inputsFile == "-" || opts.usesStdin()); err != nil {
		return err
	}
	res, err := a.engine.Submit(ctx, req)
	if err != nil {
		return submitErr(err, req.SessionID)
	}
	run := res.Run
	if async {
		fmt.Fprintln(stdout, run.RunID)
		if alive, _ := a.engine.AnyPeerAlive(ctx); !alive {
			fmt.Fprintln(stderr, "note: no other browsertask process is running on this database; the run stays queued until one starts (browsertask serve)")
		}
		return nil
	}
	if res.Deduplicated {
		fmt.Fprintf(stderr, "%s already exists for this idempotency key (%s): following it\n", run.RunID, run.Status)
	}
	ectx, stopEngine := context.WithCancel(context.WithoutCancel(ctx))
	engineDone := make(chan error, 1)
	engine.Go(ectx, a.log, "cli.run.engine", func() { engineDone <- a.engine.Run(ectx) },
		func(p *engine.Panic) { engineDone <- p })
	defer func() { stopEngine(); <-engineDone }()

	final, err := followRun(ctx, a, run, followOptions{stdin: stdin, stderr: stderr, getenv: getenv,
		prompt: inputsFile != "-" && !opts.usesStdin(), notifier: notifier})
	if err != nil {
		return err
	}
	if err := sess.finish(context.WithoutCancel(ctx), a.engine, stderr); err != nil {
		return err
	}
	if err := out.print(stdout, stderr, a.engine.Profile(), final); err != nil {
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
