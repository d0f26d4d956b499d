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

// TestSecretMaskedInFormCharsets (issue 26, item 4): a form on a
// windows-1252, ISO-8859-1, Shift_JIS (or any legacy charset) page
// submits the secret's bytes in that charset, characters it lacks as
// decimal references; the query string carries them percent-encoded with
// "+" or "%20" for the space and either case of hex. Every spelling is
// masked, as the UTF-8 one was.
func TestSecretMaskedInFormCharsets(t *testing.T) {
	const pin = `Zq9 x+y/é%&<"'K2`
	const jp = "Zq9 ソフト€x" // € is not in Shift_JIS: sent as &#8364;
	v := newSecretVault()
	v.put("run_1", nil, []string{pin, jp})
	values := v.get("run_1").values
	cases := map[string]string{
		"windows-1252":       "http://127.0.0.1:1/page?pin=Zq9+x%2By%2F%E9%25%26%3C%22%27K2&go=1",
		"iso-8859-1 lower":   "http://127.0.0.1:1/page?pin=Zq9+x%2by%2f%e9%25%26%3c%22%27K2&go=1",
		"windows-1252 %20":   "http://127.0.0.1:1/page?pin=Zq9%20x%2By%2F%E9%25%26%3C%22%27K2&go=1",
		"utf-8 %20":          "http://127.0.0.1:1/page?pin=Zq9%20x%2By%2F%C3%A9%25%26%3C%22%27K2&go=1",
		"shift_jis":          "http://127.0.0.1:1/page?pin=Zq9+%83%5C%83t%83g%26%238364%3Bx&go=1",
		"shift_jis lower":    "http://127.0.0.1:1/page?pin=Zq9+%83%5c%83t%83g%26%238364%3bx&go=1",
		"koi8-r é as NCR":    "http://127.0.0.1:1/page?pin=Zq9+x%2By%2F%26%23233%3B%25%26%3C%22%27K2&go=1",
		"euc-jp":             "http://127.0.0.1:1/page?pin=Zq9+%A5%BD%A5%D5%A5%C8%26%238364%3Bx&go=1",
		"windows-1252 bytes": "pin=Zq9 x+y/\xe9%&<\"'K2;",
	}
	for name, c := range cases {
		got := redactText(c, values)
		if !strings.Contains(got, SecretMask) || strings.Contains(got, "Zq9") {
			t.Errorf("%s: not masked:\n  in  %s\n  out %s", name, c, got)
		}
		if strings.HasPrefix(c, "http") && !strings.HasSuffix(got, "pin=***&go=1") {
			t.Errorf("%s: %s, want pin=***&go=1", name, got)
		}
	}
}
