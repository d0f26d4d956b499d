package cli

import (
	"errors"
	"flag"
	"fmt"
	"strings"

	"github.com/browsertask/browsertask/engine"
)

// commands are the subcommands dispatch knows, for suggestions.
var commands = []string{"serve", "mcp", "run", "runs", "show", "cancel", "answer", "artifact", "templates", "sessions", "doctor", "version", "help"}

// flagError turns a flag parse error into one that names the fix: an
// unknown flag suggests the nearest defined one, and every error ends
// with the command's one-line usage (not the whole help).
func flagError(fs *flag.FlagSet, err error, synopsis string) error {
	msg := err.Error()
	if name, ok := strings.CutPrefix(msg, "flag provided but not defined: "); ok {
		name = strings.TrimLeft(name, "-")
		var names []string
		fs.VisitAll(func(f *flag.Flag) { names = append(names, f.Name) })
		msg = fmt.Sprintf("unknown flag --%s", name)
		if n := engine.Nearest(name, names); n != "" {
			msg += fmt.Sprintf(": did you mean --%s?", n)
		}
	}
	return fmt.Errorf("%s\n%s", msg, synopsis)
}

// synopsisOf is the first line of a command's usage plus where the rest
// is: what an error prints instead of the whole help.
func synopsisOf(usage, cmd string) string {
	line, _, _ := strings.Cut(strings.TrimSpace(usage), "\n")
	return fmt.Sprintf("%s   (browsertask %s --help for more)", line, cmd)
}

// unknownCommand says a command does not exist, suggests the nearest and
// gives the one-line usage.
func unknownCommand(cmd string) error {
	msg := fmt.Sprintf("unknown command %q", cmd)
	if n := engine.Nearest(cmd, commands); n != "" {
		msg += fmt.Sprintf(": did you mean %q?", n)
	}
	return errors.New(msg + "\nUsage: browsertask COMMAND [flags]   (browsertask help lists the commands)")
}
