// Package static holds the dashboard's assets, embedded in the binary so the
// dashboard works offline with no CDN: the stylesheet, the favicon (our own
// SVG, also served at /favicon.ico), a few lines of script
// (copy buttons; the live view's frames and input), and htmx and its SSE
// extension vendored untouched from the npm packages htmx.org and
// htmx-ext-sse with their licenses (refresh with refresh-htmx.sh).
package static

import "embed"

// FS holds the assets served under /static/. It is read-only.
//
//go:embed app.css app.js live.js favicon.svg htmx.min.js htmx.LICENSE htmx.VERSION htmx-ext-sse.js htmx-ext-sse.LICENSE htmx-ext-sse.VERSION
var FS embed.FS
