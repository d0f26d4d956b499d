package templates

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/browsertask/browsertask/engine"
)

// The formats input: what each page carries besides the frozen contract's
// fields, one rule for batch_extract_pages, crawl_site and
// extract_structured (formatsSchema is the one schema fragment, and
// pageFormats.check the one check).
//
//   - Absent, every page is what it was before formats existed (the
//     frozen contract's fields, includeText/includeLinks/includeMeta as
//     their own defaults say).
//   - "markdown": the page's main content (content.Extract: the article
//     without navigation, footers and banners) as CommonMark, links and
//     images absolute, with markdownBytes and tokensEstimate. "html": the
//     same main content as cleaned HTML. "metadata": title, description,
//     language, canonical URL, author, published date, site name and the
//     Open Graph properties, as an object. The three are in pages.json
//     whole and in the run's result cut at maxChars (a visible marker
//     where it was cut); pages.md holds every page's whole Markdown.
//   - "text" and "links" are includeText and includeLinks: the visible
//     text and the links, in pages.json as those inputs put them. When
//     formats is given, text and links are in the pages only when listed
//     (or the include input is set to true), so formats: ["markdown"]
//     does not also carry batch_extract_pages' default text.
//   - "screenshot": a PNG of the viewport per page, stored as an artifact
//     named after the page, its id in the page's screenshotArtifactId.
//     Only a browser renders: with render "http" or "auto" it is refused
//     at submit (INVALID_PARAMETER naming formats[i]) rather than left out
//     of some pages; use render "browser".
//
// Both render paths give the same content: over HTTP content.Extract
// reads the fetched HTML, in the browser the document serialized after
// load (outerHTML), so a page built by JavaScript has Markdown too.

// The formats a page can carry.
const (
	formatMarkdown   = "markdown"
	formatHTML       = "html"
	formatText       = "text"
	formatLinks      = "links"
	formatMetadata   = "metadata"
	formatScreenshot = "screenshot"
)

// allFormats lists the formats in the order the schema names them.
var allFormats = []string{formatMarkdown, formatHTML, formatText, formatLinks, formatMetadata, formatScreenshot}

// Caps of the content formats. maxChars counts characters (Unicode code
// points), as every other text cap here does.
const (
	// defaultMaxChars is maxChars when the inputs give none: a page's
	// Markdown (and HTML) in the result is cut there; pages.json and
	// pages.md keep it whole.
	defaultMaxChars = 20000
	minMaxChars     = 100
	maxMaxChars     = 1000000
	// maxWholeChars bounds what a page keeps at all (checkpoint,
	// pages.json, pages.md): a page whose main content is longer is cut
	// there too, with its own marker.
	maxWholeChars = 2000000
	// bytesPerToken is the token estimate's rule: tokensEstimate =
	// ceil(markdownBytes / bytesPerToken), the usual rule of thumb for
	// English text and BPE tokenizers. It is an estimate to budget with,
	// not a count: no tokenizer is run, and text in other scripts has a
	// different ratio.
	bytesPerToken = 4
)

// formatsSchema is the schema text of the formats and maxChars inputs
// (two properties, to be placed among a template's others).
func formatsSchema() string {
	names := make([]string, len(allFormats))
	for i, f := range allFormats {
		names[i] = strconv.Quote(f)
	}
	return `"formats": {"type": "array", "maxItems": ` + strconv.Itoa(len(allFormats)) + `, "items": {"type": "string", "enum": [` + strings.Join(names, ", ") + `]},
      "description": "What each page carries besides url, status, title and fields; absent: as before (includeText/includeLinks/includeMeta decide). \"markdown\": the page's main content (no navigation, footers or banners) as CommonMark with absolute links and images, plus markdownBytes and tokensEstimate (ceil(markdownBytes / ` + strconv.Itoa(bytesPerToken) + `), a rough estimate); \"html\": the same main content as cleaned HTML; \"metadata\": {title, description, language, canonical, author, published, siteName, image, openGraph}; \"text\" and \"links\": the visible text and the links in pages.json (as includeText/includeLinks; with formats given they are included only when listed); \"screenshot\": a PNG of each page as an artifact (screenshotArtifactId), render \"browser\" only. Markdown, html and metadata are in the result's pages (whole pages while the answer's budget lasts, cut at maxChars each) and whole in pages.json; pages.md holds every page's Markdown under its URL. Over HTTP from the fetched HTML, in the browser from the document after load; with render \"auto\" the samples compare the Markdown too."},
    "maxChars": {"type": "integer", "minimum": ` + strconv.Itoa(minMaxChars) + `, "maximum": ` + strconv.Itoa(maxMaxChars) + `, "default": ` + strconv.Itoa(defaultMaxChars) +
		`, "description": "Characters of a page's markdown and html in the run's result (default ` + strconv.Itoa(defaultMaxChars) + `, at most ` + strconv.Itoa(maxMaxChars) + `): longer content is cut at a character boundary and ends with a marker \"[… cut at N characters; the whole page is in pages.md]\" (markdownTruncated/htmlTruncated: true). pages.md (and pages.json; extract_structured's items.json is cut like the result) keeps up to ` + strconv.Itoa(maxWholeChars) + ` characters of each page."}`
}

// pageFormats is the formats input as a run uses it. The zero value is
// "formats absent".
type pageFormats struct {
	Formats  []string `json:"formats"`
	MaxChars int      `json:"maxChars"`
}

// given reports whether the inputs named formats at all.
func (f *pageFormats) given() bool { return f.Formats != nil }

// has reports whether format name was asked for.
func (f *pageFormats) has(name string) bool { return slices.Contains(f.Formats, name) }

// content reports whether the page's main content must be extracted.
func (f *pageFormats) content() bool {
	return f.has(formatMarkdown) || f.has(formatHTML) || f.has(formatMetadata)
}

// cutChars is maxChars with its default applied.
func (f *pageFormats) cutChars() int {
	if f.MaxChars <= 0 {
		return defaultMaxChars
	}
	return f.MaxChars
}

// includes says whether the page carries its text and links: without
// formats, what the include inputs say (text and links, their values with
// their own defaults); with formats, listed or set to true explicitly
// (explicitText: includeText was given).
func (f *pageFormats) includes(text, explicitText, links bool) (bool, bool) {
	if !f.given() {
		return text, links
	}
	return f.has(formatText) || (explicitText && text), f.has(formatLinks) || links
}

// check refuses an unknown format, a maxChars out of bounds and a
// screenshot where no browser renders every page. Errors:
// INVALID_PARAMETER naming inputs.formats[i] or inputs.maxChars and the
// fix.
func (f *pageFormats) check(render string) error {
	for i, name := range f.Formats {
		field := fmt.Sprintf("inputs.formats[%d]", i)
		if !slices.Contains(allFormats, name) {
			return engine.Errorf(engine.InvalidParameter, "%s: unknown format %q; use one of %s", field, name, strings.Join(allFormats, ", ")).
				WithDetails(map[string]any{"field": field, "allowed": allFormats})
		}
		if name == formatScreenshot && render != renderBrowser {
			return engine.Errorf(engine.InvalidParameter, "%s: \"screenshot\" needs every page rendered in the browser, and render is %q; use render \"browser\", or leave screenshot out (screenshot_pages takes screenshots of a list of pages)", field, render).
				WithDetails(map[string]any{"field": field, "render": render})
		}
	}
	if f.MaxChars != 0 && (f.MaxChars < minMaxChars || f.MaxChars > maxMaxChars) {
		return engine.Errorf(engine.InvalidParameter, "inputs.maxChars: %d is out of bounds; give %d to %d characters (default %d)", f.MaxChars, minMaxChars, maxMaxChars, defaultMaxChars).
			WithDetails(map[string]any{"field": "inputs.maxChars"})
	}
	if f.MaxChars != 0 && !f.has(formatMarkdown) && !f.has(formatHTML) {
		return engine.Errorf(engine.InvalidParameter, "inputs.maxChars applies to the markdown and html formats; add \"markdown\" to inputs.formats or leave maxChars out").
			WithDetails(map[string]any{"field": "inputs.maxChars"})
	}
	return nil
}

// resultCut is what urlPool.cutChars is for these formats: maxChars when
// markdown or html is asked for, 0 (nothing to cut) otherwise.
func (f *pageFormats) resultCut() int {
	if f.has(formatMarkdown) || f.has(formatHTML) {
		return f.cutChars()
	}
	return 0
}

// pageContentSchema is the result schema of what the formats add to a
// page (pageContent), properties to be placed among a page's others.
const pageContentSchema = `"markdown": {"type": "string", "description": "With formats markdown: the page's main content as CommonMark, cut at maxChars (then ending with a marker and markdownTruncated: true); pages.md has it whole."},
          "markdownBytes": {"type": "integer", "description": "With formats markdown: UTF-8 bytes of the page's whole Markdown."},
          "tokensEstimate": {"type": "integer", "description": "With formats markdown: ceil(markdownBytes / 4), a rough token count to budget with (no tokenizer is run)."},
          "markdownTruncated": {"type": "boolean"},
          "html": {"type": "string", "description": "With formats html: the main content as cleaned HTML, cut at maxChars (htmlTruncated: true)."},
          "htmlTruncated": {"type": "boolean"},
          "metadata": {"type": "object", "description": "With formats metadata: title, description, language, canonical, author, published, siteName, image, openGraph (each when the page states it)."},
          "contentError": {"type": "string", "description": "Why a page that loaded has no main content (the page still succeeded)."},
          "contentOmitted": {"type": "boolean", "description": "true when the result had no room left for this page's content (8 MiB for all pages); pages.json and pages.md have it."},
          "screenshotArtifactId": {"type": "string", "description": "With formats screenshot: the artifact holding the page's PNG."},`

// markdownArtifactSchema is the result property naming pages.md.
const markdownArtifactSchema = `"markdownArtifactId": {"type": "string", "description": "With formats markdown: pages.md, every page's whole Markdown under a heading that is its URL, in the order of pages.json."},`

// formatsDescription ends the page templates' descriptions: the content
// formats, one word away.
const formatsDescription = ` For an article's text without navigation or boilerplate, as a model reads it, add formats: ["markdown"]: ` +
	`each page gets its main content as Markdown (absolute links, tables, code blocks) with markdownBytes and tokensEstimate, ` +
	`inline in the answer while it fits (cut at maxChars, default 20000) and whole in pages.md; "html", "metadata", "text", "links" ` +
	`and "screenshot" (render "browser") are the other formats.`
