package cli

import (
	"encoding/json"
	"flag"
	"fmt"
	"io"

	"github.com/browsertask/browsertask/engine"
)

// outputFlags shape the Run JSON `browsertask run` prints: by default its
// result is cut to the answer budget MCP answers obey (the profile's
// maxInlineBytes, cut to whole items with truncated/itemsTotal, the
// artifacts holding everything), so a terminal or a script is not handed
// megabytes it did not ask for; --full prints the whole result.
type outputFlags struct {
	full bool
	json bool
}

// define registers --full and --json.
func (o *outputFlags) define(fs *flag.FlagSet) {
	fs.BoolVar(&o.full, "full", false, "print the whole result, not one cut to the answer budget (--max-inline-bytes; the artifacts always hold everything)")
	fs.BoolVar(&o.json, "json", true, "print the Run as JSON on stdout (the default; progress and messages go to stderr)")
}

// print writes the Run JSON, its result within the budget unless --full.
// A cut result is said on stderr.
func (o *outputFlags) print(w, stderr io.Writer, p engine.Profile, r *engine.Run) error {
	if !o.json {
		return nil
	}
	if o.full || len(r.Result) == 0 {
		return printJSON(w, r)
	}
	shell := *r
	shell.Result = nil
	rest, err := json.Marshal(&shell)
	if err != nil {
		return err
	}
	budget := max(int(p.MaxInlineBytes)-len(rest)+len("null"), 256)
	cut, truncated := engine.InlineResult(r.Result, budget)
	shell.Result = cut
	if err := printJSON(w, &shell); err != nil {
		return err
	}
	if truncated {
		fmt.Fprintf(stderr, "the result above is cut to the answer budget (%d bytes, --max-inline-bytes); --full prints it whole, the artifacts hold everything\n", p.MaxInlineBytes)
	}
	return nil
}
