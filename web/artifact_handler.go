package web

import (
	"fmt"
	"mime"
	"net/http"
	"path"
	"strconv"
	"strings"
)

// inlineTypes are the artifact types a browser may show on the dashboard's
// origin: raster images, PDF, plain text and JSON (none can run script).
// Everything else, HTML and SVG included, is sent as an attachment.
var inlineTypes = map[string]bool{
	"image/png": true, "image/jpeg": true, "image/gif": true, "image/webp": true, "image/avif": true,
	"application/pdf": true, "text/plain": true, "application/json": true,
}

// extensions name downloaded files by type.
var extensions = map[string]string{
	"image/png": ".png", "image/jpeg": ".jpg", "image/gif": ".gif", "image/webp": ".webp", "image/avif": ".avif",
	"application/pdf": ".pdf", "text/plain": ".txt", "application/json": ".json", "text/html": ".html",
	"application/x-ndjson": ".ndjson", "text/csv": ".csv", "image/svg+xml": ".svg", "text/markdown": ".md",
}

// baseType is the media type without parameters, lower-cased.
func baseType(mimeType string) string {
	t, _, err := mime.ParseMediaType(mimeType)
	if err != nil {
		return ""
	}
	return t
}

// inlineImage reports whether the artifact is an image shown as a thumbnail.
func inlineImage(mimeType string) bool {
	t := baseType(mimeType)
	return strings.HasPrefix(t, "image/") && inlineTypes[t]
}

// artifact streams an artifact's bytes. Every response carries nosniff and
// Content-Security-Policy: sandbox, so even a captured HTML page opened
// directly runs in an opaque origin; HTML, SVG and unknown types are also
// sent as attachments (and ?download=1 forces one for any type). Errors:
// 404 ARTIFACT_NOT_FOUND, 410 ARTIFACT_EXPIRED.
func (d *Dashboard) artifact(w http.ResponseWriter, r *http.Request) {
	id := r.PathValue("id")
	a, err := d.eng.Artifact(r.Context(), id)
	if err != nil {
		d.fail(w, r, err)
		return
	}
	t := baseType(a.MimeType)
	ctype := a.MimeType
	if t == "" {
		ctype = "application/octet-stream"
	}
	name := safeName(a.Name, t)
	disposition := "inline"
	if !inlineTypes[t] || r.URL.Query().Get("download") == "1" {
		disposition = "attachment"
	}
	h := w.Header()
	h.Set("Content-Type", ctype)
	h.Set("Content-Length", strconv.FormatInt(a.Size, 10))
	h.Set("Content-Disposition", mime.FormatMediaType(disposition, map[string]string{"filename": name}))
	h.Set("Content-Security-Policy", "sandbox")
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Cache-Control", "private, max-age=300")
	if r.Method == http.MethodHead {
		return
	}
	const piece = 256 << 10
	for off := int64(0); off < a.Size; {
		b, err := d.eng.ArtifactBytes(r.Context(), id, off, piece)
		if err != nil || len(b) == 0 {
			// Headers are gone; the short body tells the client.
			d.log.Warn("artifact download cut short", "artifactId", id, "offset", off, "err", err)
			return
		}
		if _, err := w.Write(b); err != nil {
			return
		}
		off += int64(len(b))
	}
}

// safeName is the artifact's name reduced to a harmless file name with an
// extension that matches its type.
func safeName(name, t string) string {
	name = path.Base(strings.ReplaceAll(name, "\\", "/"))
	var b strings.Builder
	for _, r := range name {
		if r == '.' || r == '-' || r == '_' || (r >= 'a' && r <= 'z') || (r >= 'A' && r <= 'Z') || (r >= '0' && r <= '9') {
			b.WriteRune(r)
		}
	}
	s := strings.Trim(b.String(), ".")
	if s == "" {
		s = "artifact"
	}
	if ext := extensions[t]; ext != "" && !strings.HasSuffix(strings.ToLower(s), ext) {
		s += ext
	}
	if len(s) > 120 {
		s = s[len(s)-120:]
	}
	return fmt.Sprint(s)
}
