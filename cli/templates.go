package cli

import (
	"context"
	"fmt"
	"io"
	"text/tabwriter"
)

// cmdTemplates lists the templates.
func cmdTemplates(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	sub := &cmdFlags{usage: `Usage: browsertask templates [flags]

Lists the task templates (see the dashboard's /templates for schemas).

Example:
  browsertask templates --dev-templates`}
	a, err := openForCLI(ctx, "templates", args, getenv, stderr, sub)
	if err != nil {
		return err
	}
	defer a.close()
	tw := tabwriter.NewWriter(stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "TEMPLATE\tVERSION\tTRUST\tRESUMABLE\tTITLE")
	for _, t := range a.engine.Templates() {
		fmt.Fprintf(tw, "%s\t%d\t%s\t%v\t%s\n", t.TemplateID, t.Version, t.TrustLevel, t.Resumable, t.Title)
	}
	return tw.Flush()
}
