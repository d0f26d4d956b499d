// Package extract is the parent of the browserless extraction pipeline
// the templates use for `render: "http"` and `"auto"` pages and for
// extract_structured. It holds no code; its children, in the order a page
// goes through them:
//
//   - fetch: the page over plain HTTP under the URL policy, decoded to
//     UTF-8 (a Fetcher per run);
//   - weburl: URLs parsed and resolved as a browser does;
//   - page: the HTML parsed and read like the browser's extraction script
//     (title, fields, text, links, meta);
//   - structured: a caller's JSON Schema filled from the page's own data
//     (schema hints, JSON-LD, microdata, RDFa Lite, meta tags);
//   - modelfill: a model asked for what structured left missing.
//
// They sit under one parent because only templates (and, for modelfill's
// sampler, cli and mcp) use them, and they share one contract: the same
// output as the browser path wherever a page does not need JavaScript.
package extract
