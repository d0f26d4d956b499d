package templates

import (
	"context"
	"encoding/json"
	"fmt"
	"unicode/utf8"

	"github.com/browsertask/browsertask/browser"
	"github.com/browsertask/browsertask/engine"
	"github.com/browsertask/browsertask/internal/extract/content"
)

// pageContent is what the markdown, html, metadata and screenshot formats
// add to a page (formats.go). It is embedded in pageOut (checkpoints and
// pages.json: whole, up to maxWholeChars) and in the result's pages
// (cut at maxChars by cutContent); every field is absent when its format
// was not asked for.
type pageContent struct {
	Markdown string `json:"markdown,omitempty"`
	// MarkdownBytes is the UTF-8 length of the page's whole Markdown and
	// TokensEstimate ceil(MarkdownBytes / bytesPerToken); both are set
	// (0 included) whenever markdown was asked for.
	MarkdownBytes     *int   `json:"markdownBytes,omitempty"`
	TokensEstimate    *int   `json:"tokensEstimate,omitempty"`
	MarkdownTruncated bool   `json:"markdownTruncated,omitempty"`
	HTML              string `json:"html,omitempty"`
	HTMLTruncated     bool   `json:"htmlTruncated,omitempty"`
	// Metadata is what the page says about itself (format metadata).
	Metadata *content.Metadata `json:"metadata,omitempty"`
	// ContentError says why a page that loaded has no main content (the
	// extractor found none, or the markup could not be read); the page
	// itself still succeeded.
	ContentError string `json:"contentError,omitempty"`
	// ContentOmitted is true in a result whose pages passed
	// maxResultBytes: this page's content is in pages.json and pages.md.
	ContentOmitted bool `json:"contentOmitted,omitempty"`
	// ScreenshotArtifactID names the page's screenshot (format screenshot).
	ScreenshotArtifactID string `json:"screenshotArtifactId,omitempty"`
}

// addContent extracts the main content of body (the page's HTML as
// UTF-8: fetched, or the browser's serialized document) at pageURL and
// sets the formats f asks for.
func addContent(c *pageContent, f *pageFormats, body []byte, pageURL string) {
	if !f.content() {
		return
	}
	res, err := content.Extract(body, content.Options{PageURL: pageURL})
	if f.has(formatMarkdown) {
		zero := 0
		c.MarkdownBytes, c.TokensEstimate = &zero, &zero
	}
	if err != nil {
		c.ContentError = err.Error()
		return
	}
	if f.has(formatMarkdown) {
		c.Markdown, _ = cutRunes(res.Markdown, maxWholeChars, wholeMarker)
		n := len(res.Markdown)
		tokens := (n + bytesPerToken - 1) / bytesPerToken
		c.MarkdownBytes, c.TokensEstimate = &n, &tokens
	}
	if f.has(formatHTML) {
		c.HTML, _ = cutRunes(res.HTML, maxWholeChars, wholeMarker)
	}
	if f.has(formatMetadata) {
		m := res.Metadata
		c.Metadata = &m
	}
}

// outerHTMLOnly serializes the loaded document as the browser holds it
// (after its scripts ran).
const outerHTMLOnly = `document.documentElement ? document.documentElement.outerHTML : ''`

// addBrowserContent reads the document in tab tb (loaded, extracted) and
// adds the content formats to out, and the screenshot when asked for
// (stored through env as "<page slug>.png"). A failure is the content's
// (ContentError), never the page's: its fields were read. A screenshot
// that cannot be taken fails the page (as in screenshot_pages), naming
// the stage.
func addBrowserContent(ctx context.Context, env engine.Env, tb *browser.Tab, f *pageFormats, out *pageOut, timeoutMs int) {
	base := out.FinalURL
	if base == "" {
		base = out.URL
	}
	if e := browserContent(ctx, env, tb, f, &out.pageContent, out.URL, base, timeoutMs); e != nil && out.Error == nil {
		out.Error = e
	}
}

// browserContent is addBrowserContent for any page's content c: url is
// the page as asked for (it names the screenshot), base its final URL.
// It returns the screenshot's failure.
func browserContent(ctx context.Context, env engine.Env, tb *browser.Tab, f *pageFormats, out *pageContent, url, base string, timeoutMs int) *engine.Error {
	if f.content() {
		xctx, cancel := context.WithTimeout(ctx, timeoutDur(timeoutMs))
		raw, err := tb.Eval(xctx, outerHTMLOnly)
		cancel()
		var doc string
		if err == nil {
			err = json.Unmarshal(raw, &doc)
		}
		if err != nil {
			out.ContentError = fmt.Sprintf("reading the document failed: %v", err)
		} else {
			addContent(out, f, []byte(doc), base)
		}
	}
	if !f.has(formatScreenshot) {
		return nil
	}
	id, e := pageScreenshot(ctx, env, tb, url, timeoutMs)
	out.ScreenshotArtifactID = id
	return e
}

// pageScreenshot takes a PNG of the viewport of the page loaded in tb
// and stores it. Errors (the page's): STEP_EXECUTION_FAILED when the
// capture does not finish within timeoutMs, EXECUTION_ERROR when it
// cannot be stored.
func pageScreenshot(ctx context.Context, env engine.Env, tb *browser.Tab, url string, timeoutMs int) (string, *engine.Error) {
	png, err := captureWithin(ctx, func(cctx context.Context) ([]byte, error) {
		return tb.Screenshot(cctx, browser.ScreenshotOptions{Format: "png"})
	}, "screenshot", url, "inputs.perPageTimeoutMs", timeoutMs)
	if err != nil {
		return "", engine.AsError(err)
	}
	id, err := env.PutArtifact(ctx, pageSlug(url)+".png", "image/png", png)
	if err != nil {
		return "", engine.AsError(err)
	}
	return id, nil
}

// wholeMarker ends content cut at maxWholeChars.
const wholeMarker = "\n\n[… cut at %d characters: browsertask keeps at most that much of a page]"

// resultMarker ends content cut at maxChars in the run's result.
const resultMarker = "\n\n[… cut at %d characters; the whole page is in pages.md]"

// cutRunes is s cut to at most n characters (code points, never inside
// one), followed by marker (a format with one %d, the n), and whether it
// was cut.
func cutRunes(s string, n int, marker string) (string, bool) {
	if utf8.RuneCountInString(s) <= n {
		return s, false
	}
	end, k := 0, 0
	for i := range s {
		if k == n {
			end = i
			break
		}
		k++
	}
	return s[:end] + fmt.Sprintf(marker, n), true
}

// cutContent is a slim output (JSON object) with its markdown and html
// cut at n characters for the run's result (urlPool.kept); anything else
// passes as it is.
func cutContent(raw json.RawMessage, n int) json.RawMessage {
	var m map[string]json.RawMessage
	if n <= 0 || json.Unmarshal(raw, &m) != nil || m == nil {
		return raw
	}
	changed := false
	for _, k := range []struct{ text, flag string }{{"markdown", "markdownTruncated"}, {"html", "htmlTruncated"}} {
		var s string
		if m[k.text] == nil || json.Unmarshal(m[k.text], &s) != nil {
			continue
		}
		cut, ok := cutRunes(s, n, resultMarker)
		if !ok {
			continue
		}
		m[k.text], _ = json.Marshal(cut)
		m[k.flag] = json.RawMessage("true")
		changed = true
	}
	if !changed {
		return raw
	}
	b, err := json.Marshal(m)
	if err != nil {
		return raw
	}
	return b
}
