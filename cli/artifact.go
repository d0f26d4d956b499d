package cli

import (
	"context"
	"flag"
	"fmt"
	"io"
	"mime"
	"os"
	"strings"
)

// cmdArtifact writes an artifact's bytes to a file or stdout.
func cmdArtifact(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	var out string
	sub := &cmdFlags{usage: `Usage: browsertask artifact ID [-o FILE] [flags]

Writes the artifact's bytes to FILE, or to stdout. ID is the artifact id,
or a unique prefix of it after "art_". A binary artifact (an image, a PDF)
is not written to a terminal: save it with -o FILE, or redirect stdout.

Examples:
  browsertask artifact art_1f2e... -o page.png
  browsertask artifact art_1f2e... | jq .
  browsertask artifact 1f2e09ab -o pages.json`, minArgs: 1, maxArgs: 1, define: func(fs *flag.FlagSet) {
		fs.StringVar(&out, "o", "", "write to this file instead of stdout")
	}}
	a, err := openForCLI(ctx, "artifact", args, getenv, stderr, sub)
	if err != nil {
		return err
	}
	defer a.close()
	id, err := resolveArtifactID(ctx, a.engine, sub.args[0])
	if err != nil {
		return err
	}
	meta, err := a.engine.Artifact(ctx, id)
	if err != nil {
		return domainErr(err)
	}
	w := stdout
	if out == "" && !textMime(meta.MimeType) && isTerminal(stdout) {
		return fmt.Errorf("artifact %s (%s) is %s, %d bytes: binary data is not written to a terminal; save it with -o FILE (e.g. browsertask artifact %s -o %s) or redirect stdout",
			id, meta.Name, meta.MimeType, meta.Size, id, suggestedName(meta.Name, meta.MimeType))
	}
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

// textMime reports whether an artifact of this media type is text a
// terminal can show: text/*, JSON, XML, JavaScript, YAML, CSV.
func textMime(mt string) bool {
	base, _, err := mime.ParseMediaType(mt)
	if err != nil {
		base = strings.ToLower(strings.TrimSpace(mt))
	}
	switch {
	case strings.HasPrefix(base, "text/"),
		strings.HasSuffix(base, "+json"), strings.HasSuffix(base, "+xml"):
		return true
	}
	switch base {
	case "application/json", "application/x-ndjson", "application/xml", "application/javascript",
		"application/yaml", "application/x-yaml", "application/csv":
		return true
	}
	return false
}

// suggestedName is a file name for -o in the refusal: the artifact's name
// with the media type's usual extension when it has none.
func suggestedName(name, mt string) string {
	if name == "" {
		name = "artifact"
	}
	name = strings.Map(func(r rune) rune {
		if r == '/' || r == ' ' || r < 0x20 {
			return '_'
		}
		return r
	}, name)
	if strings.Contains(name, ".") {
		return name
	}
	base, _, _ := mime.ParseMediaType(mt)
	switch base {
	case "image/png":
		return name + ".png"
	case "image/jpeg":
		return name + ".jpg"
	case "application/pdf":
		return name + ".pdf"
	}
	if exts, err := mime.ExtensionsByType(base); err == nil && len(exts) > 0 {
		return name + exts[0]
	}
	return name
}
