package fetch

import (
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/browsertask/browsertask/internal/fuzzseed"
)

// fuzzContentTypes are Content-Type seeds: none, the usual ones, legacy
// labels, a label the Encoding Standard maps elsewhere, UTF-16, and
// malformed parameter lists.
var fuzzContentTypes = []string{
	"", "text/html", "text/html; charset=utf-8", "text/html; charset=windows-1252",
	"text/html;charset=Shift_JIS", "text/html; charset=iso-8859-1", "text/html; charset=\"gbk\"",
	"text/html; charset=utf-16le", "text/plain; charset=x-user-defined", "text/html; charset=",
	"text/html; charset=bogus", "application/xhtml+xml; charset=euc-kr", "text/html; charset=utf-8; charset=latin1",
}

// FuzzDecodeBody decodes any body under any Content-Type as a fetched page
// is (BOM, header charset, <meta> prescan, windows-1252 default).
// Invariants: the text is always valid UTF-8 (package page and the
// database take it as such), an encoding name is always reported, and
// decoding is deterministic; a body declared UTF-8 (or with a UTF-8 BOM)
// that is valid UTF-8 comes back unchanged but for the BOM.
func FuzzDecodeBody(f *testing.F) {
	for i, p := range fuzzseed.Pages(f) {
		f.Add(p.Body, p.ContentType, true)
		f.Add(p.Body, fuzzContentTypes[i%len(fuzzContentTypes)], i%3 != 0)
	}
	f.Add([]byte("\xef\xbb\xbf<meta charset=shift_jis>\x82\xa0"), "", true)
	f.Add([]byte("\xff\xfe<\x00p\x00>\x00\x00\xd8"), "text/html; charset=utf-8", true)
	f.Add([]byte(`<meta http-equiv="Content-Type" content="text/html; charset='euc-jp'">\xa4\xa2`), "", true)
	f.Fuzz(func(t *testing.T, raw []byte, contentType string, isHTML bool) {
		text, name := decodeBody(raw, contentType, isHTML)
		if !utf8.ValidString(text) {
			t.Fatalf("decoded text is not UTF-8 (encoding %q): %q", name, text)
		}
		if name == "" {
			t.Fatal("no encoding name")
		}
		if again, name2 := decodeBody(raw, contentType, isHTML); again != text || name2 != name {
			t.Fatalf("not deterministic: %q/%q then %q/%q", name, text, name2, again)
		}
		if name == "utf-8" && utf8.Valid(raw) {
			if want := strings.TrimPrefix(string(raw), "\uFEFF"); text != want {
				t.Fatalf("valid UTF-8 changed in decoding: %q → %q", raw, text)
			}
		}
	})
}

// FuzzDecodeUTF8 checks the Encoding Standard's UTF-8 decoder against Go's
// own decoding: both keep exactly the same characters (a byte that breaks
// a sequence is never swallowed: it is read again), and the standard's
// one U+FFFD per maximal invalid subsequence never gives more
// replacement characters than Go's one per byte.
func FuzzDecodeUTF8(f *testing.F) {
	for _, s := range []string{"", "ascii", "é€😀", "\xef\xbb\xbfBOM", "\xef\xbb\xbf\xef\xbb\xbf", "\xe0\xa0A", "\xf0\x90\x80",
		"\xed\xa0\x80", "\xf4\x90\x80\x80", "\xc0\xaf", "\xff\xfe", "a\x80b", "\xe2\x82", "\xf0\x9f\x98\x80\xf0\x9f"} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		got := decodeUTF8(b)
		if !utf8.ValidString(got) {
			t.Fatalf("decodeUTF8(%q) = %q, not UTF-8", b, got)
		}
		in := strings.TrimPrefix(string(b), "\uFEFF") // both drop one leading BOM
		goKept := strings.ReplaceAll(strings.ToValidUTF8(in, ""), "\uFFFD", "")
		if kept := strings.ReplaceAll(got, "\uFFFD", ""); kept != goKept {
			t.Fatalf("decodeUTF8(%q) keeps %q; Go's decoding keeps %q", b, kept, goKept)
		}
		perByte := 0
		for _, r := range in {
			if r == utf8.RuneError {
				perByte++
			}
		}
		if n := strings.Count(got, "\uFFFD"); n > perByte {
			t.Fatalf("decodeUTF8(%q) gives %d U+FFFD, more than Go's %d", b, n, perByte)
		}
	})
}

// FuzzMetaCharset runs the <meta> prescan on any bytes: it never fails, is
// deterministic, and finds a label only in a page with a <meta> tag; the
// content attribute's parser returns a piece of the attribute.
func FuzzMetaCharset(f *testing.F) {
	for _, p := range fuzzseed.Pages(f) {
		f.Add(p.Body)
	}
	f.Add([]byte(`<meta http-equiv=content-type content="text/html;charset = 'koi8-r'">`))
	f.Fuzz(func(t *testing.T, raw []byte) {
		label := metaCharset(raw)
		if label != metaCharset(raw) {
			t.Fatal("not deterministic")
		}
		if label != "" && !strings.Contains(strings.ToLower(string(raw)), "<meta") {
			t.Fatalf("label %q without a <meta> tag", label)
		}
		if got := charsetFromContent(string(raw)); !strings.Contains(string(raw), got) {
			t.Fatalf("charsetFromContent returned %q, not a piece of its input", got)
		}
	})
}
