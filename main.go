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
		var ee cli.ExitError
		if errors.As(err, &ee) {
			os.Exit(int(ee)) // the command already said why
		}
		fmt.Fprintln(os.Stderr, "browsertask:", err)
		os.Exit(1)
	}
}
