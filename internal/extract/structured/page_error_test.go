package structured

import (
	"errors"
	"strings"
	"testing"

	"github.com/browsertask/browsertask/internal/extract/page"
)

// parsedPage is ParsePage for markup the test knows parses.
func parsedPage(t *testing.T, src, finalURL string) *Page {
	t.Helper()
	p, err := ParsePage(src, finalURL)
	if err != nil {
		t.Fatalf("ParsePage: %v", err)
	}
	return p
}

// A page nested past the parser's limit is an error, not an empty page
// that would read as a page without data (issue 26 item 1).
func TestParsePageTooDeep(t *testing.T) {
	src := `<script type="application/ld+json">{"@type":"Product","name":"X"}</script>` +
		strings.Repeat("<div>", page.MaxDepth+1)
	p, err := ParsePage(src, "https://x.example/")
	var de *page.DepthError
	if !errors.As(err, &de) || p != nil {
		t.Fatalf("ParsePage = %v, %v; want nil and a *page.DepthError", p, err)
	}
}
