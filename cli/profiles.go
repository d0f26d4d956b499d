package cli

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/browsertask/browsertask/browser"
	"github.com/browsertask/browsertask/engine"
)

// cmdProfiles manages persistent browser profiles: new (a person signs
// in through the dashboard of a running daemon), list, import, delete.
func cmdProfiles(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	if len(args) == 0 {
		fmt.Fprint(stderr, profilesUsage)
		return ExitError(2)
	}
	switch args[0] {
	case "new":
		return cmdProfilesNew(ctx, args[1:], getenv, stdout, stderr)
	case "list":
		return cmdProfilesList(ctx, args[1:], getenv, stdout, stderr)
	case "import":
		return cmdProfilesImport(ctx, args[1:], getenv, stdout, stderr)
	case "delete":
		return cmdProfilesDelete(ctx, args[1:], getenv, stdout, stderr)
	case "help", "--help", "-h":
		fmt.Fprint(stdout, profilesUsage)
		return nil
	}
	fmt.Fprintf(stderr, "unknown profiles command %q\n%s", args[0], profilesUsage)
	return ExitError(2)
}

const profilesUsage = `Usage: browsertask profiles new|list|import|delete ...

Persistent browser profiles: Chromium user-data directories beside the
database (profiles/NAME, mode 0700) that a person signs into by hand once;
runs then use them by name (run_task_template's profile).

  browsertask profiles new NAME --open URL [--note TEXT]
      create NAME (or sign into it again) and print the dashboard page where
      you sign in; waits until you press Done there (needs a running
      browsertask serve or mcp on the same database)
  browsertask profiles list                       names, sites, sizes
  browsertask profiles import NAME FILE           cookies from a Playwright
      storageState JSON or a Netscape cookies.txt (created when missing)
  browsertask profiles delete NAME                the profile and its directory
`

// cmdProfilesNew submits the sign-in run and waits for the person.
func cmdProfilesNew(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	var open, note string
	sub := &cmdFlags{usage: `Usage: browsertask profiles new NAME --open URL [--note TEXT] [flags]

Creates profile NAME (or signs into it again) and opens URL in its browser
for you: the command prints the dashboard page of the sign-in, where you
sign in by hand and press Done. A browsertask serve (or mcp) on the same
database runs the browser and serves that page.

Example:
  browsertask profiles new work --open https://mail.example.com/login`, minArgs: 1, maxArgs: 1, define: func(fs *flag.FlagSet) {
		fs.StringVar(&open, "open", "", "the sign-in page to open (required)")
		fs.StringVar(&note, "note", "", "what the profile is for")
	}}
	a, err := openForCLI(ctx, "profiles new", args, getenv, stderr, sub)
	if err != nil {
		return err
	}
	defer a.close()
	if open == "" {
		return fmt.Errorf("--open URL is required: the page where you sign in")
	}
	if alive, err := a.engine.AnyPeerAlive(ctx); err == nil && !alive {
		return fmt.Errorf("no browsertask serve or mcp runs on %s: start `browsertask serve` first; it shows the browser you sign in with", a.cfg.dbPath)
	}
	_, res, err := a.engine.SignInProfile(ctx, sub.args[0], note, open, engine.ModeAsync)
	if err != nil {
		return domainErr(err)
	}
	return waitSignIn(ctx, a.engine, res.Run.RunID, sub.args[0], stdout)
}

// runWaiter is what waiting for a sign-in needs of the engine.
type runWaiter interface {
	Wait(ctx context.Context, runID string, onChange func(*engine.Run)) (*engine.Run, error)
}

// waitSignIn prints the dashboard page of sign-in run id as soon as the
// run asks for the person, then waits for the run's end. It waits through
// Engine.Wait, not a poll of its own: Wait wakes on every change the
// engine learns of (at once for this process's changes and for peers that
// signal through the store, PostgreSQL's NOTIFY; otherwise at its own
// peer interval). A run that did not succeed is the command's error; an
// interrupted command leaves the run waiting on the dashboard.
func waitSignIn(ctx context.Context, eng runWaiter, id, name string, stdout io.Writer) error {
	shown := false
	onChange := func(r *engine.Run) {
		if q := r.Question; q != nil && q.URL != "" && !shown {
			fmt.Fprintf(stdout, "Sign in here, then press Done: %s\n", q.URL)
			shown = true
		}
	}
	run, err := eng.Wait(ctx, id, onChange)
	if err != nil {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		return domainErr(err)
	}
	if run.Status != engine.StatusSucceeded {
		if run.Error != nil {
			return domainErr(run.Error)
		}
		return fmt.Errorf("the sign-in run %s ended %s", id, run.Status)
	}
	fmt.Fprintf(stdout, "Profile %s is signed in; use it with profile: %q\n", name, name)
	return nil
}

// cmdProfilesList prints the profiles.
func cmdProfilesList(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	sub := &cmdFlags{usage: "Usage: browsertask profiles list [flags]\n\nLists the browser profiles: name, sites, last use, size, note."}
	a, err := openForCLI(ctx, "profiles list", args, getenv, stderr, sub)
	if err != nil {
		return err
	}
	defer a.close()
	list, err := a.engine.Profiles(ctx)
	if err != nil {
		return domainErr(err)
	}
	tw := tabwriter.NewWriter(stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "PROFILE\tSITES\tLAST USED\tSIZE\tNOTE")
	for _, p := range list {
		last := "never"
		if p.LastUsedAt > 0 {
			last = time.UnixMilli(p.LastUsedAt).UTC().Format(time.RFC3339)
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%d\t%s\n", p.Name, strings.Join(p.Sites, ","), last, p.SizeBytes, p.Note)
	}
	return tw.Flush()
}

// cmdProfilesImport imports a cookie file into a profile.
func cmdProfilesImport(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	sub := &cmdFlags{usage: `Usage: browsertask profiles import NAME FILE [flags]

Imports cookies (and a storageState's localStorage) into profile NAME,
creating it when missing. FILE is a Playwright storageState JSON (what
export_session_state saves) or a Netscape cookies.txt.

Example:
  browsertask profiles import work cookies.txt`, minArgs: 2, maxArgs: 2}
	a, err := openForCLI(ctx, "profiles import", args, getenv, stderr, sub)
	if err != nil {
		return err
	}
	defer a.close()
	data, err := os.ReadFile(sub.args[1])
	if err != nil {
		return err
	}
	st, err := browser.ParseCookieFile(data)
	if err != nil {
		return domainErr(err)
	}
	name := sub.args[0]
	if _, err := a.engine.GetProfile(ctx, name); err != nil {
		if _, err := a.engine.CreateProfile(ctx, name, ""); err != nil {
			return domainErr(err)
		}
	}
	if err := a.browser.ImportProfile(ctx, name, st); err != nil {
		return domainErr(err)
	}
	fmt.Fprintf(stdout, "Imported %d cookies into profile %s\n", len(st.Cookies), name)
	return nil
}

// cmdProfilesDelete deletes a profile and its directory.
func cmdProfilesDelete(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	sub := &cmdFlags{usage: "Usage: browsertask profiles delete NAME [flags]\n\nDeletes the profile and its directory (refused while a run uses it).", minArgs: 1, maxArgs: 1}
	a, err := openForCLI(ctx, "profiles delete", args, getenv, stderr, sub)
	if err != nil {
		return err
	}
	defer a.close()
	if err := a.engine.DeleteProfile(ctx, sub.args[0]); err != nil {
		return domainErr(err)
	}
	fmt.Fprintf(stdout, "Deleted profile %s\n", sub.args[0])
	return nil
}
