#!/bin/sh
# Refreshes the vendored htmx (untouched dist file + license) from the npm package htmx.org 2.x: sh static/refresh-htmx.sh
cd "$(dirname "$0")" && t=$(mktemp -d) && (cd "$t" && npm pack --silent htmx.org@2 >/dev/null && tar xzf htmx.org-*.tgz) && cp "$t/package/dist/htmx.min.js" htmx.min.js && cp "$t/package/LICENSE" htmx.LICENSE && grep -o '"version": *"[^"]*"' "$t/package/package.json" > htmx.VERSION && rm -rf "$t"
