package engine

import (
	"sort"
	"strings"
)

// SecretMasker returns a function that replaces, in a string, every value
// of values in every spelling a page, a URL or a form body may carry it in
// (secretForms: form-urlencoded, percent-encoded, JSON- and HTML-escaped,
// other charsets) by SecretMask. It is the rule every write of a run
// holding secrets gets (secretStore), offered to what keeps text outside
// runs: a session's network capture masks the passwords typed on its page
// with it, so there is one rule for what a masked secret looks like. The
// spellings are computed once, here.
func SecretMasker(values []string) func(string) string {
	var all []string
	for _, v := range values {
		if v != "" {
			all = append(all, secretForms(v)...)
		}
	}
	// Longest first, so a form that contains another is replaced whole.
	sort.SliceStable(all, func(i, j int) bool { return len(all[i]) > len(all[j]) })
	return func(s string) string { return redactText(s, all) }
}

// SecretName reports whether a field, header or query parameter named
// name may hold a secret, by the words whose inputs run summaries never
// show (secretWords: password, token, apikey, cookie, pin, otp, code…),
// matched case-insensitively inside the name.
func SecretName(name string) bool {
	n := strings.ToLower(name)
	if n == "" {
		return false
	}
	for _, w := range secretWords() {
		if strings.Contains(n, w) {
			return true
		}
	}
	return false
}
