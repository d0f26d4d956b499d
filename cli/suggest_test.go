package cli

import (
	"path/filepath"
	"strings"
	"testing"
)

func TestCLIUnknownFlagsAndCommandsSuggestTheNearest(t *testing.T) {
	db := filepath.Join(t.TempDir(), "bt.db")
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"runz"}, "browsertask: unknown command \"runz\": did you mean \"run\"?\nUsage: browsertask COMMAND [flags]   (browsertask help lists the commands)\n"},
		{[]string{"templtes"}, "browsertask: unknown command \"templtes\": did you mean \"templates\"?\n"},
		{[]string{"frobnicate"}, "browsertask: unknown command \"frobnicate\"\nUsage: browsertask COMMAND"},
		{[]string{"run", "dev_echo", "--inptu", "items=1", "--db", db}, "browsertask: unknown flag --inptu: did you mean --input?\nUsage: browsertask run TEMPLATE "},
		{[]string{"run", "dev_echo", "--idempotency", "k", "--db", db}, "unknown flag --idempotency: did you mean --idempotency-key?\n"},
		{[]string{"serve", "--adr", "127.0.0.1:1"}, "browsertask: unknown flag --adr: did you mean --addr?\nUsage: browsertask serve [flags]   (browsertask serve --help for more)\n"},
		{[]string{"show", "--db", db}, "browsertask: missing argument\nUsage: browsertask show RUN [flags]   (browsertask show --help for more)\n"},
	} {
		out, errs, code := cli(t, "", c.args...)
		if code != 1 || out != "" || !strings.HasPrefix(errs, c.want) && !strings.Contains(errs, c.want) {
			t.Errorf("%q: exit %d, stdout %q\nstderr %q\nwant %q", c.args, code, out, errs, c.want)
		}
		// One line of usage, never the whole help.
		if n := strings.Count(errs, "\n"); n > 2 {
			t.Errorf("%q: %d lines on stderr, want the error and one line of usage:\n%s", c.args, n, errs)
		}
	}
}
