package templates

import "strconv"

// batchInputSchema is batch_extract_pages' input JSON Schema. The page-load
// inputs are the fragments every page template shares (common.go), their
// numbers written from the Go constants the run applies.
func batchInputSchema() string {
	return `{
  "$schema": "https://json-schema.org/draft/2020-12/schema",
  "type": "object",
  "additionalProperties": false,
  "required": ["urls"],
  "properties": {
    "urls": {
      "type": "array", "minItems": 1, "maxItems": ` + strconv.Itoa(batchMaxURLs) + `,
      "description": "Absolute http(s) URLs to open; duplicates are removed, order is kept. The server's maxUrls also applies.",
      "items": {"type": "string", "minLength": 1, "maxLength": 8192}
    },
    "fields": {
      "type": "object",
      "description": "Values to extract from every page, by name: a CSS selector (text of the first match), or {selector, attr?, all?}. attr names an attribute (href and src come back absolute), or \"text\" (default) or \"html\" (innerHTML). all: true returns every match as a list. A missing element gives null (or []). Values are capped: one value at 20000 characters, an all list at 1000 values and 50000 characters together, all fields of a page at 200000 characters (fields in name order); a capped field is named in the page's fieldsCapped {matches, kept, cut}.",
      "maxProperties": 100,
      "additionalProperties": {
        "oneOf": [
          {"type": "string", "minLength": 1, "maxLength": 1000},
          {
            "type": "object", "additionalProperties": false, "required": ["selector"],
            "properties": {
              "selector": {"type": "string", "minLength": 1, "maxLength": 1000},
              "attr": {"type": "string", "minLength": 1, "maxLength": 200},
              "all": {"type": "boolean", "default": false}
            }
          }
        ]
      }
    },
    "render": {"type": "string", "enum": ["browser", "http", "auto"], "default": "browser", "description": "How pages are read: \"browser\" loads each in Chromium (pages built by JavaScript, the default); \"http\" fetches the HTML with an HTTP client and extracts it without a browser (no renderer per page; for server-rendered pages: documentation, articles, listings): the same fields, text, links and meta, but nothing scripts add; \"auto\" fetches over HTTP and uses the browser only where needed: per section of a site (host and first path directory: /library/, / for root pages) it renders the first pages (and 1 in 20 later ones, until 4 matched) both ways and switches a section whose HTML lacks what the browser shows to the browser; an app shell page (noscript) goes to the browser alone; each page says renderedBy and renderReason. Prefer \"auto\" for many pages on sites you do not know (several times faster than \"browser\" on server-rendered sites, the same fields); \"browser\" for a few pages or pages known to need JavaScript. In a named session (sessionId) the browser is used."},
    "includeText": {"type": "boolean", "default": true, "description": "Include the page's visible text in pages.json (at most 20000 characters; textTruncated: true when the page had more)."},
    "includeLinks": {"type": "boolean", "default": false, "description": "Include the page's links [{href, text}] in pages.json (the first 1000 distinct links, each text cut at 200 characters; a page with more says linksTruncated: true and linksCapped {found, kept})."},
    "includeMeta": {"type": "boolean", "default": false, "description": "Include the meta tags (name/property → content), lang and canonical URL in pages.json; the meta tags also in the result's pages."},
    ` + formatsSchema() + `,
    "blockResources": ` + blockResourcesSchema + `,
    "concurrency": ` + concurrencySchema() + `,
    "perPageTimeoutMs": ` + perPageTimeoutSchema() + `,
    "waitFor": ` + waitForSchema + `,
    ` + politenessSchema() + `
  }
}`
}

// batchResultSchema is batch_extract_pages' result JSON Schema.
const batchResultSchema = `{
  "$schema": "https://json-schema.org/draft/2020-12/schema",
  "type": "object",
  "required": ["summary", "pages", "artifactId"],
  "properties": {
    "summary": {
      "type": "object", "required": ["total", "succeeded", "failed"],
      "properties": {"total": {"type": "integer"}, "succeeded": {"type": "integer"}, "failed": {"type": "integer"}}
    },
    "pages": {
      "type": "array",
      "items": {
        "type": "object", "required": ["url", "finalUrl", "httpStatus", "title", "fields", "error"],
        "properties": {
          "url": {"type": "string"},
          "finalUrl": {"type": "string"},
          "httpStatus": {"type": "integer"},
          "title": {"type": "string"},
          "fields": {"type": "object"},
          "fieldsOmitted": {"type": "boolean", "description": "true when the run's result had no room left for this page's fields (the fields of all pages in a result stop at 8 MiB); pages.json has them."},
          "fieldsCapped": {"type": "object", "description": "The fields whose value was capped (see inputs.fields), name → {matches: elements matched, kept: values returned, cut: values shortened}; absent when none was."},
          "linksCapped": {"type": "object", "description": "With includeLinks, when the page had more than 1000 distinct links: {found: distinct links on the page, kept: links in pages.json}; absent otherwise."},
          "meta": {"type": "object", "description": "The page's meta tags, with includeMeta."},
          "renderedBy": {"type": "string", "enum": ["browser", "http"], "description": "How the page was read (inputs.render)."},
          "renderReason": {"type": "string", "description": "With render \"auto\": why the browser read this page (\"sample\", \"group /shop/ needs JavaScript: /shop/1: fields differ (price)\": the section, the page that proved it, what differed; \"app shell: …\", \"not HTML (…)\")."},
          "attempts": {"type": "integer", "description": "How many times the page was requested: 1, or more after transient failures (inputs.retries)."},
          "failedAttempts": {"type": "array", "description": "The attempts before the last that failed transiently, each {attempt, httpStatus, error, waitedMs, retryAfterMs}; absent when the first attempt was the last."},
          ` + pageContentSchema + `
          "error": ` + errorObjectSchema + `
        }
      }
    },
    "artifactId": {"type": "string", "description": "pages.json: every page with text, links and meta when requested."},
    ` + markdownArtifactSchema + `
    "truncated": {"type": "boolean", "description": "Set in an answer whose pages were cut to the answer budget (itemsInline of itemsTotal inline; artifactId has them all)."},
    "itemsInline": {"type": "integer"},
    "itemsTotal": {"type": "integer"}
  }
}`
