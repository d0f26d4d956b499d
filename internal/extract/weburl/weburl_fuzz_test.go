package weburl

import (
	"strings"
	"testing"

	"github.com/browsertask/browsertask/internal/fuzzseed"
)

// FuzzParseRef parses any reference against any base, as package page
// resolves a page's links and the final URL. Invariants of the URL
// Standard the callers rely on: a serialized URL is printable ASCII and
// parses back to itself (so a URL stored, compared or deduplicated keeps
// its identity), Resolve and Normalize agree with ParseRef, a URL without
// its fragment has no "#", and the empty reference gives the base without
// its fragment.
func FuzzParseRef(f *testing.F) {
	pages := fuzzseed.Pages(f)
	bases := []string{"http://example.com/a/b/c?q=1#frag", "https://127.0.0.1:8443/", "file:///C:/dir/", "non-spec://h/p/q", "mailto:x@y"}
	for i, ref := range fuzzseed.URLs(pages) {
		f.Add(ref, bases[i%len(bases)])
		f.Add(bases[i%len(bases)], ref)
	}
	f.Fuzz(func(t *testing.T, ref, base string) {
		b, err := Parse(base)
		if err != nil {
			b = nil
		} else {
			checkSerialization(t, b)
		}
		u, err := ParseRef(ref, b)
		if err != nil {
			if _, ok := Resolve(base, ref); ok && b != nil {
				t.Fatalf("Resolve(%q, %q) succeeded where ParseRef failed: %v", base, ref, err)
			}
			return
		}
		checkSerialization(t, u)
		if b != nil {
			got, ok := Resolve(base, ref)
			if !ok || got != u.String() {
				t.Fatalf("Resolve(%q, %q) = %q, %v; ParseRef gives %q", base, ref, got, ok, u.String())
			}
			if !b.OpaquePath {
				if e, err := ParseRef("", b); err != nil || e.String() != b.WithoutFragment().String() {
					t.Fatalf("empty reference against %q gives %v, %v; want the base without its fragment", b, e, err)
				}
			}
		} else if n, ok := Normalize(ref); !ok || n != u.String() {
			t.Fatalf("Normalize(%q) = %q, %v; Parse gives %q", ref, n, ok, u.String())
		}
	})
}

// checkSerialization asserts that u serializes to printable ASCII, that
// the serialization parses back to itself, and that the copy without
// fragment has no "#".
func checkSerialization(t *testing.T, u *URL) {
	t.Helper()
	s := u.String()
	for i := 0; i < len(s); i++ {
		if s[i] < 0x20 || s[i] > 0x7e {
			t.Fatalf("serialization %q has byte %#x at %d, outside printable ASCII", s, s[i], i)
		}
	}
	again, err := Parse(s)
	if err != nil {
		t.Fatalf("serialization %q does not parse: %v", s, err)
	}
	if again.String() != s {
		t.Fatalf("serialization not idempotent: %q parses to %q", s, again.String())
	}
	if nf := u.WithoutFragment().String(); strings.Contains(nf, "#") {
		t.Fatalf("without fragment %q still has a #", nf)
	}
}
