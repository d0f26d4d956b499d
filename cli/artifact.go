package cli

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
)

// cmdArtifact writes an artifact's bytes to a file or stdout.
func cmdArtifact(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	var out string
	sub := &cmdFlags{usage: `Usage: browsertask artifact ID [-o FILE] [flags]

Writes the artifact's bytes to FILE, or to stdout.

Examples:
  browsertask artifact art_1f2e... -o page.png
  browsertask artifact art_1f2e... | jq .`, minArgs: 1, maxArgs: 1, define: func(fs *flag.FlagSet) {
		fs.StringVar(&out, "o", "", "write to this file instead of stdout")
	}}
	a, err := openForCLI(ctx, "artifact", args, getenv, stderr, sub)
	if err != nil {
		return err
	}
	defer a.close()
	id := sub.args[0]
	meta, err := a.engine.Artifact(ctx, id)
	if err != nil {
		return domainErr(err)
	}
	w := stdout
	if out != "" {
		f, err := os.Create(out)
		if err != nil {
			return err
		}
		defer f.Close()
		w = f
	}
	for off := int64(0); off < meta.Size; {
		b, err := a.engine.ArtifactBytes(ctx, id, off, 1<<20)
		if err != nil {
			return domainErr(err)
		}
		if len(b) == 0 {
			return fmt.Errorf("artifact %s ended at %d of %d bytes", id, off, meta.Size)
		}
		if _, err := w.Write(b); err != nil {
			return err
		}
		off += int64(len(b))
	}
	if out != "" {
		fmt.Fprintf(stderr, "wrote %s (%d bytes, %s)\n", out, meta.Size, meta.MimeType)
	}
	return nil
}
