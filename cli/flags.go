package cli

import (
	"flag"
	"fmt"
	"io"
	"os"
	"strings"

	"golang.org/x/term"
)

// cmdFlags describes a CLI subcommand for parseFlags: its own flags, its
// help text with examples, and how many positional arguments it takes.
// The shared flags (--db, --browser, --dev-templates, every serve flag) are
// accepted by every subcommand and read BROWSERTASK_* variables as usual.
type cmdFlags struct {
	usage   string // first lines of --help: synopsis, description, examples
	define  func(fs *flag.FlagSet)
	minArgs int
	maxArgs int
	// args receives the positional arguments; flags may come before,
	// between or after them.
	args []string
}

// parse defines the subcommand's flags on fs, parses args allowing
// interleaved positionals, then applies the environment to shared flags.
func (s *cmdFlags) parse(fs *flag.FlagSet, c *config, args []string, getenv func(string) string, stderr io.Writer, shared map[string]bool) error {
	if s.define != nil {
		s.define(fs)
	}
	// The CLI logs warnings only, unless --log-level says otherwise.
	if f := fs.Lookup("log-level"); f != nil {
		f.DefValue = "warn"
		_ = f.Value.Set("warn")
	}
	// The flag package's own messages are replaced: --help prints the
	// whole help, an error its fix and one line of usage.
	fs.SetOutput(io.Discard)
	fs.Usage = func() {}
	synopsis := synopsisOf(s.usage, strings.TrimPrefix(fs.Name(), "browsertask "))
	rest := args
	for {
		if err := fs.Parse(rest); err != nil {
			if isHelp(err) {
				s.printUsage(fs, stderr, shared)
				return err
			}
			return flagError(fs, err, synopsis)
		}
		if fs.NArg() == 0 {
			break
		}
		s.args = append(s.args, fs.Arg(0))
		rest = fs.Args()[1:]
	}
	if len(s.args) < s.minArgs || len(s.args) > s.maxArgs {
		if len(s.args) < s.minArgs {
			return fmt.Errorf("missing argument\n%s", synopsis)
		}
		return fmt.Errorf("unexpected argument %q\n%s", s.args[s.maxArgs], synopsis)
	}
	return applyEnv(fs, c, getenv, shared)
}

// printUsage prints the help: the command's text, its own flags, then the
// shared flags most people need.
func (s *cmdFlags) printUsage(fs *flag.FlagSet, w io.Writer, shared map[string]bool) {
	fmt.Fprintf(w, "%s\n", strings.TrimSpace(s.usage))
	own := flag.NewFlagSet("", flag.ContinueOnError)
	fs.VisitAll(func(f *flag.Flag) {
		if !shared[f.Name] {
			own.Var(f.Value, f.Name, f.Usage)
		}
	})
	n := 0
	own.VisitAll(func(*flag.Flag) { n++ })
	if n > 0 {
		fmt.Fprintln(w, "\nFlags:")
		own.SetOutput(w)
		own.PrintDefaults()
	}
	fmt.Fprintln(w, "\nShared flags (each also BROWSERTASK_<NAME>; see browsertask serve --help for all):")
	for _, name := range []string{"db", "browser", "dev-templates", "log-level"} {
		if f := fs.Lookup(name); f != nil {
			fmt.Fprintf(w, "  --%s\t%s%s\n", name, f.Usage, defaultNote(f))
		}
	}
}

// defaultNote is " (default X)" for a shared flag's help line, or "" when
// its usage already states the default (--browser: "system Chromium") or
// the default is off or empty, so each default is stated once.
func defaultNote(f *flag.Flag) string {
	if strings.Contains(f.Usage, "(default") || f.DefValue == "" || f.DefValue == "false" {
		return ""
	}
	return fmt.Sprintf(" (default %q)", f.DefValue)
}

// isTerminal reports whether w is a terminal, for the progress bar and
// the artifact command's refusal to print binary data; tests, pipes,
// files and /dev/null get plain output.
func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	return ok && term.IsTerminal(int(f.Fd()))
}
