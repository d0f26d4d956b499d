// Package static holds the dashboard's assets, embedded in the binary so the
// dashboard works offline with no CDN: the stylesheet, a few lines of script
// (copy buttons), and htmx vendored untouched from the npm package htmx.org
// with its license (refresh with refresh-htmx.sh).
package static

import "embed"

// FS holds the assets served under /static/. It is read-only.
//
//go:embed app.css app.js htmx.min.js htmx.LICENSE htmx.VERSION
var FS embed.FS
