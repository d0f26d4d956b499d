// Package fidelity compares what the HTTP path reads of a page with what
// Chromium reads, on real pages nobody here wrote (the corpora of
// internal/fixture/corpus.go), and sorts every difference into a class that
// says where it comes from: text hidden by CSS, <noscript>, content written
// by scripts, whitespace, charset, link resolution, a page that failed on
// one path… The bench (`go run ./bench -only fidelity`) runs it on every
// page of every corpus; templates' TestCorpusFidelitySample on a fixed
// sample, against the thresholds of this package.
//
// Both sides come from the real template: batch_extract_pages with render
// "http" and render "browser" and the same inputs (Inputs).
package fidelity

import (
	"encoding/json"
	"fmt"
)

// Page is what the comparison reads of one page of batch_extract_pages'
// pages.json (the fields it compares, with the template's JSON names).
type Page struct {
	URL            string            `json:"url"`
	FinalURL       string            `json:"finalUrl"`
	HTTPStatus     int               `json:"httpStatus"`
	Title          string            `json:"title"`
	Fields         map[string]any    `json:"fields"`
	Text           *string           `json:"text"`
	TextTruncated  bool              `json:"textTruncated"`
	Links          []Link            `json:"links"`
	LinksTruncated bool              `json:"linksTruncated"`
	Meta           map[string]string `json:"meta"`
	RenderedBy     string            `json:"renderedBy"`
	Error          *PageError        `json:"error"`
}

// Link is one link of a page, as pages.json lists it.
type Link struct {
	Href string `json:"href"`
	Text string `json:"text"`
}

// PageError is a page's error in pages.json.
type PageError struct {
	ErrorCode string `json:"errorCode"`
	Message   string `json:"message"`
}

// Fields is the fixed field set asked of every page: the first h1, every
// h2 and the title element, read as text (what crawls of documentation
// ask for, and where the rules that hide text show first).
var Fields = map[string]any{
	"h1":      "h1",
	"h2s":     map[string]any{"selector": "h2", "all": true},
	"titleEl": "title",
}

// Inputs are batch_extract_pages' inputs for one side of the comparison:
// the same on both sides except render ("http" or "browser").
func Inputs(urls []string, render string, tabs int) map[string]any {
	return map[string]any{
		"urls": urls, "fields": Fields, "render": render, "concurrency": tabs,
		"includeText": true, "includeLinks": true, "includeMeta": true,
	}
}

// DecodePages reads pages.json.
func DecodePages(data []byte) ([]Page, error) {
	var pages []Page
	if err := json.Unmarshal(data, &pages); err != nil {
		return nil, fmt.Errorf("pages.json: %w", err)
	}
	return pages, nil
}
