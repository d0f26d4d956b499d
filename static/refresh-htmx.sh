#!/bin/sh
# Refreshes the vendored htmx and its SSE extension (untouched dist files + licenses) from the npm packages htmx.org 2.x and htmx-ext-sse 2.x: sh static/refresh-htmx.sh
cd "$(dirname "$0")" || exit 1
vendor() { # package, dist file, local name
	t=$(mktemp -d) && (cd "$t" && npm pack --silent "$1" >/dev/null && tar xzf ./*.tgz) &&
		cp "$t/package/dist/$2" "$3.js" && cp "$t/package/LICENSE" "$3.LICENSE" &&
		grep -o '"version": *"[^"]*"' "$t/package/package.json" > "$3.VERSION" && rm -rf "$t"
}
vendor htmx.org@2 htmx.min.js htmx.min && mv htmx.min.LICENSE htmx.LICENSE && mv htmx.min.VERSION htmx.VERSION
vendor htmx-ext-sse@2 sse.js htmx-ext-sse
