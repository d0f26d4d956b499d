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
	"bytes"
	"fmt"
	"net/url"
	"strings"
	"time"

	htmltomarkdown "github.com/JohannesKaufmann/html-to-markdown/v2"
	"github.com/JohannesKaufmann/html-to-markdown/v2/converter"
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
// means the page could not be parsed (markup nested too deep) or holds no
// content the extractor recognises.
func Extract(body []byte, o Options) (res Result, err error) {
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("content extraction failed: %v", p)
		}
	}()
	var pageURL *url.URL
	if o.PageURL != "" {
		if u, perr := url.Parse(o.PageURL); perr == nil {
			pageURL = u
		}
	}
	tr, err := trafilatura.Extract(bytes.NewReader(body), trafilatura.Options{
		OriginalURL:    pageURL,
		EnableFallback: true,
		IncludeImages:  true,
		IncludeLinks:   true,
	})
	if err != nil {
		return Result{}, fmt.Errorf("content extraction: %w", err)
	}
	if tr.ContentNode != nil {
		var b strings.Builder
		if err := html.Render(&b, tr.ContentNode); err == nil {
			res.HTML = b.String()
		}
	}
	res.Text = tr.ContentText
	md, err := htmltomarkdown.ConvertString(res.HTML, converterOptions(o.PageURL)...)
	if err != nil {
		return Result{}, fmt.Errorf("markdown conversion: %w", err)
	}
	res.Markdown = strings.TrimSpace(md)
	m := tr.Metadata
	res.Metadata = Metadata{
		Title: m.Title, Description: m.Description, Language: m.Language,
		Canonical: m.URL, Author: m.Author, SiteName: m.Sitename, Image: m.Image,
	}
	if !m.Date.IsZero() {
		res.Metadata.Published = m.Date.Format(time.DateOnly)
	}
	return res, nil
}

func converterOptions(pageURL string) []converter.ConvertOptionFunc {
	if pageURL == "" {
		return nil
	}
	return []converter.ConvertOptionFunc{converter.WithDomain(pageURL)}
}
