package templates

import (
	"strconv"
	"unicode"
	"unicode/utf8"

	"github.com/browsertask/browsertask/engine"
)

// crawlScope is where a crawl goes: its start and its limits, in the
// inputs of crawl_site and of extract_structured with startUrl.
type crawlScope struct {
	StartURL   string   `json:"startUrl"`
	MaxPages   int      `json:"maxPages"`
	MaxDepth   *int     `json:"maxDepth"`
	SameOrigin *bool    `json:"sameOrigin"`
	Include    []string `json:"include"`
	Exclude    []string `json:"exclude"`
}

// The crawl limits' defaults and bounds, in one place: applyDefaults
// applies them and crawlScopeSchema states them to clients, for both
// templates that crawl.
const (
	defaultCrawlPages = 50
	maxCrawlPages     = 100000
	defaultCrawlDepth = 10
	maxCrawlDepth     = 100
	maxCrawlGlobs     = 50
)

// applyDefaults fills the limits left out: maxPages defaultCrawlPages,
// maxDepth defaultCrawlDepth, sameOrigin true.
func (c *crawlScope) applyDefaults() {
	if c.MaxPages <= 0 {
		c.MaxPages = defaultCrawlPages
	}
	if c.MaxDepth == nil {
		d := defaultCrawlDepth
		c.MaxDepth = &d
	}
	if c.SameOrigin == nil {
		t := true
		c.SameOrigin = &t
	}
}

// crawlScopeSchema is the schema text of the crawl limits (maxPages,
// maxDepth, sameOrigin, include, exclude: properties to put in an input
// schema's "properties", without braces) that crawl_site and
// extract_structured share. qualifier starts every description
// ("With startUrl: " where the limits apply to one way of giving pages
// only; "" for none).
func crawlScopeSchema(qualifier string) string {
	desc := func(s string) string { return strconv.Quote(qualified(qualifier, s)) }
	glob := `{"type": "array", "maxItems": ` + strconv.Itoa(maxCrawlGlobs) + `, "items": {"type": "string", "minLength": 1, "maxLength": 1000},
      "description": `
	return `"maxPages": {"type": "integer", "minimum": 1, "maximum": ` + strconv.Itoa(maxCrawlPages) + `, "default": ` + strconv.Itoa(defaultCrawlPages) +
		`, "description": ` + desc("Most pages visited. The server's maxUrls ("+strconv.Itoa(engine.DefaultConfig().MaxURLs)+
		" unless its config says otherwise) applies: a larger value is refused with INVALID_PARAMETER.") + `},
    "maxDepth": {"type": "integer", "minimum": 0, "maximum": ` + strconv.Itoa(maxCrawlDepth) + `, "default": ` + strconv.Itoa(defaultCrawlDepth) +
		`, "description": ` + desc("Most link hops from the start page.") + `},
    "sameOrigin": {"type": "boolean", "default": true, "description": ` + desc("Follow only links to the start page's origin.") + `},
    "include": ` + glob + desc("URL globs a link must match one of to be followed (* = any characters, ? = one); empty = all.") + `},
    "exclude": ` + glob + desc("URL globs of links never followed (* = any characters, ? = one).") + `}`
}

// qualified is s after qualifier, its first word lower-cased when it is
// an ordinary capitalised word ("Most" → "most"; "URL" stays).
func qualified(qualifier, s string) string {
	if qualifier == "" {
		return s
	}
	first, n := utf8.DecodeRuneInString(s)
	second, _ := utf8.DecodeRuneInString(s[n:])
	if unicode.IsUpper(first) && !unicode.IsUpper(second) {
		s = string(unicode.ToLower(first)) + s[n:]
	}
	return qualifier + s
}
