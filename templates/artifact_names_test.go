package templates

import (
	"reflect"
	"regexp"
	"strings"
	"testing"
)

// safeName is what an artifact name may hold: a stem of A–Z a–z 0–9 . _ -
// that starts with neither "." nor "-", then the extension.
var safeName = regexp.MustCompile(`^[A-Za-z0-9_][A-Za-z0-9._-]*\.[a-z]+$`)

func TestArtifactNamesSayWhatThePageIs(t *testing.T) {
	for _, c := range []struct {
		url, want string
	}{
		{"https://example.com/", "example.com-index.png"},
		{"https://example.com", "example.com-index.png"},
		{"https://Shop.Example:8443/products/blue-mug?color=blue#reviews", "shop.example-products-blue-mug-color-blue.png"},
		{"http://user:secret@example.com/a%20b/c/", "example.com-a-b-c.png"},
		{"http://127.0.0.1:41234/page/7", "127.0.0.1-page-7.png"},
		{"https://example.com/café/../<script>", "example.com-caf-..-script.png"},
		{"https://example.com/.hidden", "example.com-.hidden.png"},
		{"file:///tmp/report.html", "tmp-report.html.png"},
		{"::not a url", "not-a-url.png"},
		{"https://[::1]:8080/", "1-index.png"},
	} {
		got := artifactNames([]string{c.url}, "png")
		if len(got) != 1 || got[0] != c.want {
			t.Errorf("artifactNames(%q) = %q, want %q", c.url, got, c.want)
		}
		if !safeName.MatchString(got[0]) {
			t.Errorf("artifactNames(%q) = %q has unsafe characters", c.url, got[0])
		}
	}
}

func TestArtifactNamesAreUniqueAndBounded(t *testing.T) {
	// The same path on two ports, two paths that differ in case only, and
	// a page whose own slug is the suffixed name of another.
	urls := []string{"http://h:1/page/1", "http://h:2/page/1", "http://h/x", "http://h/a", "http://h/A", "http://h/a-4"}
	want := []string{"h-page-1-1.pdf", "h-page-1-2.pdf", "h-x.pdf", "h-a-4.pdf", "h-A-5.pdf", "h-a-4-6-2.pdf"}
	if got := artifactNames(urls, "pdf"); !reflect.DeepEqual(got, want) {
		t.Fatalf("artifactNames = %q\nwant %q", got, want)
	}

	// Long URLs are cut to maxArtifactBase; two cut alike get positions.
	long := "https://example.com/" + strings.Repeat("segment/", 40)
	names := artifactNames([]string{long + "a", long + "b", "https://example.com/short"}, "png")
	if names[2] != "example.com-short.png" {
		t.Errorf("short name %q", names[2])
	}
	seen := map[string]bool{}
	for i, n := range names {
		stem := strings.TrimSuffix(n, ".png")
		if len(stem) > maxArtifactBase || !safeName.MatchString(n) {
			t.Errorf("name %d %q: %d characters before .png (max %d) or unsafe", i, n, len(stem), maxArtifactBase)
		}
		if seen[strings.ToLower(n)] {
			t.Errorf("name %d %q repeats", i, n)
		}
		seen[strings.ToLower(n)] = true
	}
	if !strings.HasSuffix(names[0], "-1.png") || !strings.HasSuffix(names[1], "-2.png") || !strings.HasPrefix(names[0], "example.com-segment-segment") {
		t.Errorf("cut names %q, want the cut slug with -1 and -2", names[:2])
	}

	// The names depend on the list alone: a resumed run names alike.
	if again := artifactNames(urls, "pdf"); !reflect.DeepEqual(again, want) {
		t.Fatalf("second call = %q", again)
	}
}
