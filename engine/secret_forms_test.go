package engine

import (
	"encoding/json"
	"strings"
	"testing"
)

// TestSecretMaskedInEveryEncoding (issue 9, defect 5): a login form
// submitted with GET puts the password URL-encoded in finalUrl and error
// messages; a page may echo it HTML- or JSON-escaped. Every spelling is
// masked in results, errors and logs.
func TestSecretMaskedInEveryEncoding(t *testing.T) {
	const pw = `Pa ss@w0rd!&<"é~*'`
	v := newSecretVault()
	v.put("run_1", nil, []string{pw})
	values := v.get("run_1").values
	cases := []string{
		"http://127.0.0.1:1/login?user=bob&password=Pa+ss%40w0rd%21%26%3C%22%C3%A9%7E*%27", // Chromium form GET
		"http://x/?p=Pa+ss%40w0rd%21%26%3c%22%c3%a9%7e*%27",                                // lower-case hex
		"http://x/?p=Pa%20ss%40w0rd!%26%3C%22%C3%A9~*'",                                    // encodeURIComponent
		"http://x/?p=Pa+ss%40w0rd%21%26%3C%22%C3%A9~%2A%27",                                // Go QueryEscape
		`{"echo":"Pa ss@w0rd!\u0026\u003c\"é~*'"}`,                                         // JSON, HTML-safe
		`<p>Pa ss@w0rd!&amp;&lt;&#34;é~*&#39;</p>`,                                         // HTML entities
		"plain " + pw,
	}
	for _, c := range cases {
		got := redactText(c, values)
		if !strings.Contains(got, SecretMask) || strings.Contains(got, "w0rd") {
			t.Errorf("not masked:\n  in  %s\n  out %s", c, got)
		}
	}
	doc := maskJSON(json.RawMessage(`{"finalUrl":"http://h/?password=Pa+ss%40w0rd%21%26%3C%22%C3%A9%7E*%27&x=1"}`), values)
	if strings.Contains(string(doc), "w0rd") || !strings.Contains(string(doc), "x=1") {
		t.Errorf("maskJSON: %s", doc)
	}
}
