package templates

import (
	"net/url"
	"regexp"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/browsertask/browsertask/internal/extract/page"
	"github.com/browsertask/browsertask/internal/fuzzseed"
)

// FuzzNormalizeLink normalises any link as the crawl frontier does before
// deduplicating. Invariants: the result is "" or an absolute http(s) URL
// with a host and no fragment; normalising twice changes nothing (so a
// URL read back from a checkpoint dedups against the same key); the host
// is lower case; and linkTargets returns each normalised target once.
func FuzzNormalizeLink(f *testing.F) {
	for _, u := range fuzzseed.URLs(fuzzseed.Pages(f)) {
		f.Add(u)
	}
	f.Fuzz(func(t *testing.T, raw string) {
		n := normalizeLink(raw)
		if n == "" {
			return
		}
		if !strings.HasPrefix(n, "http://") && !strings.HasPrefix(n, "https://") {
			t.Fatalf("normalizeLink(%q) = %q: not http(s)", raw, n)
		}
		if strings.Contains(n, "#") {
			t.Fatalf("normalizeLink(%q) = %q keeps a fragment", raw, n)
		}
		u, err := url.Parse(n)
		if err != nil || u.Host == "" {
			t.Fatalf("normalizeLink(%q) = %q, which does not parse with a host: %v", raw, n, err)
		}
		if u.Host != strings.ToLower(u.Host) {
			t.Fatalf("normalizeLink(%q) = %q: host not lower case", raw, n)
		}
		if again := normalizeLink(n); again != n {
			t.Fatalf("not idempotent: %q → %q → %q", raw, n, again)
		}
		targets := linkTargets([]page.Link{{Href: raw}, {Href: n}, {Href: " " + raw + " "}})
		if len(targets) != 1 || targets[0] != n {
			t.Fatalf("linkTargets of three spellings of %q = %q, want [%q]", n, targets, n)
		}
	})
}

// FuzzGlobMatch checks crawl_site's include/exclude globs against the
// same glob translated to a regular expression (* any run, ? one
// character, anything else itself), on any glob and URL.
func FuzzGlobMatch(f *testing.F) {
	for _, s := range [][2]string{
		{"*", ""}, {"http://*/docs/*", "http://a.test/docs/x/y"}, {"*?q=*", "http://a/?q="},
		{"*.pdf", "http://a/b.pdf?x"}, {"http://a/???", "http://a/äöü"}, {"**a*b**", "xxaxxbxx"},
		{"http://*.example.com/*", "http://evil.test/?.example.com/"}, {"a*a*a*a*b", strings.Repeat("a", 40)},
	} {
		f.Add(s[0], s[1])
	}
	f.Fuzz(func(t *testing.T, glob, u string) {
		if !utf8.ValidString(glob) || !utf8.ValidString(u) {
			return // globs and URLs are JSON strings: UTF-8
		}
		var re strings.Builder
		re.WriteString(`(?s)\A`)
		for _, r := range glob {
			switch r {
			case '*':
				re.WriteString(`.*`)
			case '?':
				re.WriteString(`.`)
			default:
				re.WriteString(regexp.QuoteMeta(string(r)))
			}
		}
		re.WriteString(`\z`)
		want := regexp.MustCompile(re.String()).MatchString(u)
		if got := globMatch(glob, u); got != want {
			t.Fatalf("globMatch(%q, %q) = %v; the regular expression %s says %v", glob, u, got, re.String(), want)
		}
	})
}

// FuzzArtifactNames names artifacts after any list of page URLs (one per
// line). Invariants: one name per URL, unique without regard to case (two
// pages never share a file on a case-insensitive disk), each a safe file
// name (letters, digits, ".", "_", "-"; no leading dot or dash) within
// maxArtifactBase plus the extension, and the same list gives the same
// names.
func FuzzArtifactNames(f *testing.F) {
	f.Add("http://a.test/x\nhttp://A.test/X\nhttp://a.test:8080/x\nhttp://a.test/x?", "png")
	f.Add("mailto:x@y\n\n%zz\nhttp://[::1]/"+strings.Repeat("a", 120), "pdf")
	for _, u := range fuzzseed.URLs(fuzzseed.Pages(f)) {
		f.Add(u+"\n"+u+"/", "html")
	}
	safe := regexp.MustCompile(`\A[A-Za-z0-9_][A-Za-z0-9._-]*\z`)
	f.Fuzz(func(t *testing.T, list string, ext string) {
		if ext == "" || !safe.MatchString(ext) {
			return // the extensions are constants of the templates
		}
		urls := strings.Split(list, "\n")
		names := artifactNames(urls, ext)
		if len(names) != len(urls) {
			t.Fatalf("%d names for %d URLs", len(names), len(urls))
		}
		seen := map[string]bool{}
		for i, n := range names {
			stem, ok := strings.CutSuffix(n, "."+ext)
			if !ok || !safe.MatchString(stem) || strings.HasPrefix(stem, "-") {
				t.Fatalf("name %q of %q is not a safe file name", n, urls[i])
			}
			if len(stem) > maxArtifactBase {
				t.Fatalf("name %q has a stem of %d bytes, over %d", n, len(stem), maxArtifactBase)
			}
			if seen[strings.ToLower(n)] {
				t.Fatalf("name %q given twice in %q", n, names)
			}
			seen[strings.ToLower(n)] = true
		}
		if again := artifactNames(urls, ext); strings.Join(again, "\n") != strings.Join(names, "\n") {
			t.Fatalf("names differ between calls: %q then %q", names, again)
		}
	})
}
