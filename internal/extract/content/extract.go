package content

import (
	"net/url"

	trafilatura "github.com/markusmobius/go-trafilatura"
	"golang.org/x/net/html"
)

// extractMain runs go-trafilatura on the prepared tree (which it copies
// before changing).
//
// Options, measured on its own comparison set (go run ./bench -only
// content): fallbacks on (readability and DOM distiller compete when
// trafilatura's own pass finds little; the library's best published
// figure), comments excluded (they are not the page's content, and the
// benchmark scores without them), the balanced focus. Links and images
// are kept (withMedia) only when the page could not be marked (see
// marks.go); otherwise the selection is text-only, which scores best, and
// the marks bring them back. On the 983 pages (HTTP path, 2026-11-27):
// F 0.903 selecting with links and images, 0.909 text-only with marks;
// without the precision retry below 0.908. With prepare's repair of UTF-8
// pages read as windows-1252 and its removal of soft hyphens, 0.913
// (precision 0.908, recall 0.918; go-trafilatura's script on the same
// pages: 0.910).
//
// When its pass and the fallbacks find under 250 characters, go-trafilatura
// rescues the page with a "baseline" that flattens it: the whole <article>
// or <body> text as one paragraph, the structure gone ("HelloSome long
// paragraph…"). A short page deserves its headings and paragraphs too, so
// a flat answer is asked again with the precision focus, which skips that
// rescue; the second answer is kept when it found any text (plain paragraphs are
// flat too, so only the first answer is tested for the shape).
func extractMain(doc *html.Node, pageURL string, withMedia bool) (*trafilatura.ExtractResult, error) {
	var u *url.URL
	if pageURL != "" {
		if pu, err := url.Parse(pageURL); err == nil && pu.IsAbs() {
			u = pu
		}
	}
	opts := trafilatura.Options{
		OriginalURL:     u,
		EnableFallback:  true,
		ExcludeComments: true,
		IncludeImages:   withMedia,
		IncludeLinks:    withMedia,
		// The date is publishedDate's (published.go), read once before
		// the page is marked; go-trafilatura's would be a second search.
		HtmlDateMode: trafilatura.Disabled,
	}
	res, err := trafilatura.ExtractDocument(doc, opts)
	if err != nil || !flat(res.ContentNode) {
		return res, err
	}
	opts.Focus = trafilatura.FavorPrecision
	again, err := trafilatura.ExtractDocument(doc, opts)
	if err != nil || again.ContentText == "" {
		return res, nil
	}
	again.Metadata = res.Metadata
	return again, nil
}

// flat reports whether root holds only <p> elements with text and no
// markup: the shape of go-trafilatura's baseline rescue. The marks of
// links and images (marks.go) are text here: the baseline's paragraphs
// hold them too, so they cannot tell it apart.
func flat(root *html.Node) bool {
	if root == nil {
		return false
	}
	for c := root.FirstChild; c != nil; c = c.NextSibling {
		if c.Type != html.ElementNode {
			continue
		}
		if c.Data != "p" {
			return false
		}
		for g := c.FirstChild; g != nil; g = g.NextSibling {
			if g.Type == html.ElementNode {
				return false
			}
		}
	}
	return true
}
