package templates

import (
	"encoding/json"
	"fmt"
	"net/url"

	"github.com/browsertask/browsertask/engine"
)

// Each template says in one line what a run of it works on
// (engine.InputsSummarizer), from its stored inputs, where secrets are
// "***" already. Only URLs and counts are shown: other strings may be
// answers, notes or PINs, and URLs lose their user info. Inputs that do
// not decode give "" and the engine's generic summary.

var (
	_ engine.InputsSummarizer = (*BatchExtractPages)(nil)
	_ engine.InputsSummarizer = (*ScreenshotPages)(nil)
	_ engine.InputsSummarizer = (*SavePDF)(nil)
	_ engine.InputsSummarizer = (*CrawlSite)(nil)
	_ engine.InputsSummarizer = (*Login)(nil)
	_ engine.InputsSummarizer = (*RunSteps)(nil)
	_ engine.InputsSummarizer = (*ExtractStructured)(nil)
)

// InputsSummary is the first URL and how many more
// ("https://shop.example/ and 149 more").
func (t *BatchExtractPages) InputsSummary(inputs json.RawMessage) string {
	return urlListSummary(inputs)
}

// InputsSummary is the first URL and how many more.
func (t *ScreenshotPages) InputsSummary(inputs json.RawMessage) string {
	return urlListSummary(inputs)
}

// InputsSummary is the first URL and how many more.
func (t *SavePDF) InputsSummary(inputs json.RawMessage) string {
	return urlListSummary(inputs)
}

// InputsSummary is where the crawl starts and its page bound when given
// ("from https://docs.example/, up to 200 pages").
func (t *CrawlSite) InputsSummary(inputs json.RawMessage) string {
	var in crawlScope
	if json.Unmarshal(inputs, &in) != nil {
		return ""
	}
	return in.summary()
}

// InputsSummary is the host the login signs in to ("log in at
// accounts.example"); never the username.
func (t *Login) InputsSummary(inputs json.RawMessage) string {
	var in struct {
		URL string `json:"url"`
	}
	if json.Unmarshal(inputs, &in) != nil || in.URL == "" {
		return ""
	}
	return "log in at " + summaryHost(in.URL)
}

// InputsSummary is the step count and where the flow starts: startUrl, or
// the first navigate step ("2 steps from https://a.example/").
func (t *RunSteps) InputsSummary(inputs json.RawMessage) string {
	var in struct {
		StartURL string `json:"startUrl"`
		Steps    []struct {
			Action string `json:"action"`
			URL    string `json:"url"`
		} `json:"steps"`
	}
	if json.Unmarshal(inputs, &in) != nil || in.Steps == nil {
		return ""
	}
	s := countOf(len(in.Steps), "step")
	from := in.StartURL
	for _, st := range in.Steps {
		if from == "" && st.Action == "navigate" {
			from = st.URL
			break
		}
	}
	if from != "" {
		s += " from " + shownURL(from)
	}
	return s
}

// InputsSummary is the first URL and how many more, or the crawl's start
// and page bound.
func (t *ExtractStructured) InputsSummary(inputs json.RawMessage) string {
	if s := urlListSummary(inputs); s != "" {
		return s
	}
	var in crawlScope
	if json.Unmarshal(inputs, &in) != nil {
		return ""
	}
	return in.summary()
}

// summary is "from <startUrl>", with ", up to N pages" when maxPages was
// given ("" without a start).
func (c crawlScope) summary() string {
	if c.StartURL == "" {
		return ""
	}
	s := "from " + shownURL(c.StartURL)
	if c.MaxPages > 0 {
		s += fmt.Sprintf(", up to %d pages", c.MaxPages)
	}
	return s
}

// urlListSummary is inputs.urls as its first URL and how many more ("" when
// there is none).
func urlListSummary(inputs json.RawMessage) string {
	var in struct {
		URLs []string `json:"urls"`
	}
	if json.Unmarshal(inputs, &in) != nil || len(in.URLs) == 0 {
		return ""
	}
	s := shownURL(in.URLs[0])
	if n := len(in.URLs) - 1; n > 0 {
		s += fmt.Sprintf(" and %d more", n)
	}
	return s
}

// shownURL is u without user info (which may hold a password).
func shownURL(u string) string {
	p, err := url.Parse(u)
	if err != nil {
		return "(not a URL)"
	}
	p.User = nil
	return p.String()
}

// summaryHost is u's host (with its port), or u without user info when it has
// none.
func summaryHost(u string) string {
	p, err := url.Parse(u)
	if err != nil || p.Host == "" {
		return shownURL(u)
	}
	return p.Host
}

// countOf is "1 step", "12 steps".
func countOf(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return fmt.Sprintf("%d %ss", n, noun)
}
