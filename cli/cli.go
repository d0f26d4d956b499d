package cli

import (
	"context"
	"fmt"
	"io"
)

// Version is the release version reported by `browsertask version` and the
// runtime profile.
const Version = "0.1.0"

// ExitError carries a specific process exit code.
type ExitError int

func (e ExitError) Error() string { return fmt.Sprintf("exit status %d", int(e)) }

// Run dispatches a subcommand. It owns the whole lifecycle so tests can call
// it directly. A command's --help prints its usage and succeeds.
func Run(ctx context.Context, args []string, getenv func(string) string, stdin io.Reader, stdout, stderr io.Writer) error {
	if err := dispatch(ctx, args, getenv, stdin, stdout, stderr); !isHelp(err) {
		return err
	}
	return nil
}

// dispatch runs the subcommand args[1] names.
func dispatch(ctx context.Context, args []string, getenv func(string) string, stdin io.Reader, stdout, stderr io.Writer) error {
	if len(args) < 2 {
		usage(stderr)
		return ExitError(2)
	}
	switch cmd, rest := args[1], args[2:]; cmd {
	case "serve":
		return cmdServe(ctx, rest, getenv, stdout, stderr)
	case "mcp":
		return cmdMCP(ctx, rest, getenv, stdin, stdout, stderr)
	case "run":
		return cmdRun(ctx, rest, getenv, stdin, stdout, stderr)
	case "runs":
		return cmdRuns(ctx, rest, getenv, stdout, stderr)
	case "show":
		return cmdShow(ctx, rest, getenv, stdout, stderr)
	case "cancel":
		return cmdCancel(ctx, rest, getenv, stdout, stderr)
	case "answer":
		return cmdAnswer(ctx, rest, getenv, stdin, stdout, stderr)
	case "artifact":
		return cmdArtifact(ctx, rest, getenv, stdout, stderr)
	case "templates":
		return cmdTemplates(ctx, rest, getenv, stdout, stderr)
	case "profiles":
		return cmdProfiles(ctx, rest, getenv, stdout, stderr)
	case "sessions":
		return cmdSessions(ctx, rest, getenv, stdout, stderr)
	case "doctor":
		return cmdDoctor(ctx, rest, getenv, stdout, stderr)
	case "version", "--version", "-v":
		fmt.Fprintln(stdout, "browsertask", Version)
		return nil
	case "help", "--help", "-h":
		usage(stdout)
		return nil
	default:
		return unknownCommand(cmd)
	}
}

func usage(w io.Writer) {
	fmt.Fprint(w, `browsertask — durable browser automation runs for AI agents (MCP)

Usage:
  browsertask serve [flags]          the daemon: engine + MCP over HTTP at /mcp + dashboard at /
  browsertask mcp [flags]            MCP over stdio for one client (+ HTTP if the port is free)
  browsertask run TEMPLATE [flags]   run a template here; progress on stderr, Run JSON on stdout
  browsertask runs [flags]           list runs
  browsertask show RUN               print a run as JSON
  browsertask cancel RUN             cancel a run, whichever process executes it
  browsertask answer RUN [VALUE]     answer the question a run waits on (a code, yes/no)
  browsertask artifact ID [-o FILE]  save an artifact
  browsertask templates              list templates
  browsertask sessions               list browser sessions in use
  browsertask profiles new|list|import|delete  persistent browser profiles (sign in once)
  browsertask doctor                 check browser, database and listener; print client config
  browsertask version                print the version

Every command takes --help. Run "browsertask serve --help" for every flag; each
flag can also be set with the BROWSERTASK_<NAME> environment variable (e.g.
BROWSERTASK_DB, BROWSERTASK_ADDR). All commands share one database (--db).

Examples:
  browsertask serve --addr 127.0.0.1:7788
  browsertask mcp --db ~/.local/share/browsertask/browsertask.db
  browsertask run batch_extract_pages --input urls=https://example.com
  browsertask runs --status running
  browsertask answer run_0b7c...     # type the one-time code the run asks for, hidden
`)
}
