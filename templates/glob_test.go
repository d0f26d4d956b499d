package templates

import "testing"

func TestGlobMatch(t *testing.T) {
	cases := []struct {
		glob, url string
		want      bool
	}{
		{"*", "http://a/b/c", true},
		{"http://a/*", "http://a/b/c", true},
		{"http://a/*", "http://b/c", false},
		{"*/page/5", "http://a/page/5", true},
		{"*/page/5", "http://a/page/50", false},
		{"*/page/5*", "http://a/page/50", true},
		{"http://a/p?ge", "http://a/page", true},
		{"http://a/p?ge", "http://a/pge", false},
		{"*.pdf", "http://a/x.pdf?y", false},
		{"*a*b*c", "xxaxxbxxc", true},
		{"*a*b*c", "xxaxxcxxb", false},
		{"", "", true},
		{"", "x", false},
		{"http://a/[x]", "http://a/[x]", true},
	}
	for _, c := range cases {
		if got := globMatch(c.glob, c.url); got != c.want {
			t.Errorf("globMatch(%q, %q) = %v, want %v", c.glob, c.url, got, c.want)
		}
	}
}
