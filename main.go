// Command browsertask runs browser automation for AI agents as durable,
// observable, cancellable runs, served over MCP (stdio and Streamable HTTP).
// The commands live in package cli; docs/architecture.md maps the packages.
package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"github.com/browsertask/browsertask/cli"
)

func main() {
	// A broken stdout or stderr must not kill the process. Go's runtime
	// exits on SIGPIPE (status 141 in a shell) when a write to fd 1 or 2
	// hits a closed pipe, unless the program handles SIGPIPE; handled, the
	// write fails with EPIPE instead. Ctrl-C on `serve 2>&1 | tee log`
	// ends tee too: the daemon's shutdown logs then go nowhere, but its
	// grace runs and its runs are handed back as on any SIGINT. In `mcp`,
	// a closed stdout ends the session as a closed stdin does (the SDK's
	// write fails). Notify, not Ignore: an ignored signal stays ignored in
	// the browser processes this one starts. The channel is never read; a
	// signal it has no room for is dropped, which is all that is wanted.
	signal.Notify(make(chan os.Signal, 1), syscall.SIGPIPE)
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	go func() {
		// A second signal exits at once.
		<-ctx.Done()
		stop()
		again := make(chan os.Signal, 1)
		signal.Notify(again, os.Interrupt, syscall.SIGTERM)
		<-again
		fmt.Fprintln(os.Stderr, "browsertask: second signal, exiting now")
		os.Exit(1)
	}()
	if err := cli.Run(ctx, os.Args, os.Getenv, os.Stdin, os.Stdout, os.Stderr); err != nil {
		if errors.Is(err, syscall.EPIPE) {
			// The reader of stdout went away (`browsertask runs | head`):
			// end as quietly as the SIGPIPE death a shell expects, with
			// its status.
			os.Exit(128 + int(syscall.SIGPIPE))
		}
		var ee cli.ExitError
		if errors.As(err, &ee) {
			os.Exit(int(ee)) // the command already said why
		}
		fmt.Fprintln(os.Stderr, "browsertask:", err)
		os.Exit(1)
	}
}
