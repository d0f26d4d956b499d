package page

import (
	"errors"
	"strings"
	"testing"
)

// parsed is ParseString for markup the test knows parses.
func parsed(t *testing.T, body, pageURL string) *Document {
	t.Helper()
	d, err := ParseString(body, pageURL)
	if err != nil {
		t.Fatalf("ParseString: %v", err)
	}
	return d
}

// nested is a page whose body holds n <div>s, each inside the last.
func nested(n int) string {
	return "<!doctype html><html><body>" + strings.Repeat("<div>", n) + "deep" + strings.Repeat("</div>", n) + "</body></html>"
}

// A page nested past the parser's limit is refused with a *DepthError
// naming the limit, never a nil Document without an error (issue 26 item
// 1: Extract(nil) panicked); one level less parses.
func TestParseTooDeepIsAnError(t *testing.T) {
	d, err := ParseString(nested(MaxDepth+1), "http://x/")
	var de *DepthError
	if !errors.As(err, &de) || d != nil {
		t.Fatalf("ParseString(%d divs) = %v, %v; want nil and a *DepthError", MaxDepth+1, d, err)
	}
	if want := "deeper than the HTML parser's limit of 512 levels"; !strings.Contains(err.Error(), want) {
		t.Errorf("error %q does not say %q", err, want)
	}
	if _, err := Extract(nested(MaxDepth+1), "http://x/", Options{Fields: map[string]Field{"d": {Selector: "div"}}}); !errors.As(err, &de) {
		t.Errorf("Extract: err = %v, want a *DepthError", err)
	}
	// html and body are open elements too: 510 divs is the most that parses.
	ok := parsed(t, nested(MaxDepth-2), "http://x/")
	if got, _ := ok.Text(100); got != "deep" {
		t.Errorf("Text of %d nested divs = %q, want %q", MaxDepth-2, got, "deep")
	}
}

// extracted is Extract for markup the test knows parses.
func extracted(t *testing.T, body, pageURL string, o Options) *Result {
	t.Helper()
	r, err := Extract(body, pageURL, o)
	if err != nil {
		t.Fatalf("Extract: %v", err)
	}
	return r
}
