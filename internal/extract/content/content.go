// Package content finds a page's main content (the article, without
// navigation, footers, cookie banners and other boilerplate) and renders it
// as Markdown, cleaned HTML and text, with the page's metadata.
//
// The main content and the metadata come from go-trafilatura (a port of the
// trafilatura extractor, with readability and DOM distiller as fallbacks);
// the Markdown from html-to-markdown v2 (CommonMark with tables). Both work
// on the same input on every render path: the fetched HTML over HTTP, the
// serialized DOM after load in the browser.
package content

import (
	"fmt"
	"strings"

	trafilatura "github.com/markusmobius/go-trafilatura"
	"golang.org/x/net/html"
)

// Metadata is what a page says about itself: its <title> and meta tags,
// JSON-LD and Open Graph. Empty strings are omitted from JSON.
type Metadata struct {
	Title       string `json:"title,omitempty"`
	Description string `json:"description,omitempty"`
	Language    string `json:"language,omitempty"`
	Canonical   string `json:"canonical,omitempty"`
	Author      string `json:"author,omitempty"`
	Published   string `json:"published,omitempty"`
	SiteName    string `json:"siteName,omitempty"`
	Image       string `json:"image,omitempty"`
	// OpenGraph holds the page's og:* properties by their name without
	// the prefix (title, type, image, url, …).
	OpenGraph map[string]string `json:"openGraph,omitempty"`
}

// Result is a page's main content in every form a caller can ask for.
type Result struct {
	Markdown string
	HTML     string
	Text     string
	Metadata Metadata
}

// Options tune one extraction.
type Options struct {
	// PageURL is the page's final URL; relative links and images in the
	// Markdown resolve against it (and the page's <base href>).
	PageURL string
}

// Extract finds the main content of the HTML page body (UTF-8). An error
// means the page could not be parsed (a *page.DepthError for markup nested
// deeper than page.MaxDepth), is larger than MaxInputBytes (a
// *TooLargeError), or holds no content the extractor recognises. It never
// panics: a panic inside the libraries becomes an error.
//
// What it keeps: the text blocks go-trafilatura scores as the page's main
// content (with readability and DOM distiller as fallbacks when its own
// pass finds little), with headings, lists, tables, code blocks (their
// language put back from the page's language-X class), quotes, links and
// images made absolute. What it drops: navigation, headers, footers,
// sidebars, comments sections, cookie and share banners, forms, scripts,
// styles, embeds, data: images and javascript: links (their text stays).
//
// Before extraction, a page that is UTF-8 but was read as windows-1252
// (it declared no encoding) is read as UTF-8 again (mojibake.go) and soft
// hyphens leave the text (prepare.go). Metadata.Published is a date the
// page states for its publication, never a copyright year (published.go).
func Extract(body []byte, o Options) (res Result, err error) {
	defer func() {
		if p := recover(); p != nil {
			res, err = Result{}, fmt.Errorf("content extraction failed: %v", p)
		}
	}()
	if len(body) > MaxInputBytes {
		return Result{}, &TooLargeError{Size: len(body)}
	}
	prep, err := prepare(body, o.PageURL)
	if err != nil {
		return Result{}, err
	}
	published := publishedDate(prep.doc, prep.address(o.PageURL))
	var m marking
	withMedia := hasMarks(prep.doc)
	if !withMedia {
		m.mark(prep.doc)
	}
	tr, err := extractMain(prep.doc, o.PageURL, withMedia)
	if err != nil {
		return Result{}, fmt.Errorf("content extraction: %w", err)
	}
	if !withMedia {
		m.unmark(tr.ContentNode)
	}
	clean := restore(tr.ContentNode, prep.codeLangs)
	var b strings.Builder
	for c := clean.FirstChild; c != nil; c = c.NextSibling {
		if err := html.Render(&b, c); err != nil {
			return Result{}, fmt.Errorf("content extraction: %w", err)
		}
	}
	res.HTML = b.String()
	res.Text = plainText(clean)
	if res.Markdown, err = toMarkdown(clean, o.PageURL); err != nil {
		return Result{}, err
	}
	res.Metadata = metadataOf(tr.Metadata, prep)
	res.Metadata.Published = published
	return res, nil
}

// metadataOf fills Metadata from go-trafilatura's reading of the page
// (title, description, author, site name, image from meta tags, JSON-LD
// and Open Graph; language from the text) and the prepare pass (the
// page's own canonical link and og:* properties). Canonical is the page's
// <link rel=canonical> only: go-trafilatura's URL falls back to og:url or
// the page's address, which says nothing about canonicity. Published is
// not go-trafilatura's date (which falls back to a copyright year) but
// publishedDate's, set by Extract.
func metadataOf(m trafilatura.Metadata, p *prepared) Metadata {
	return Metadata{
		Title: unmarkString(m.Title), Description: unmarkString(m.Description), Language: m.Language,
		Canonical: p.canonical, Author: unmarkString(m.Author), SiteName: unmarkString(m.Sitename), Image: m.Image,
		OpenGraph: p.openGraph,
	}
}
