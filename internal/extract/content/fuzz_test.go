package content

import (
	"strings"
	"testing"
)

// FuzzExtract feeds arbitrary bytes as a page and any string as its URL:
// Extract must answer (a result, or an error with a message) without
// panicking past its recover and without hanging, and a result's
// Markdown never holds a <script> element that was in the page's markup
// (its body text is marked and searched for).
func FuzzExtract(f *testing.F) {
	f.Add([]byte(`<html><body><article><h1>T</h1><p>text <a href="../a">link</a></p><pre class="language-go">x := 1</pre><table><tr><th>a</th></tr><tr><td>1</td></tr></table></article></body></html>`), "http://127.0.0.1/d/p")
	f.Add([]byte(`<base href="http://127.0.0.1/b/"><p><img data-src="i.png"><code>c</code></p><script>s()</script><style>p{}</style>`), "")
	f.Add([]byte(strings.Repeat("<ul><li>", 300)), "http://[::1]/")
	f.Fuzz(func(t *testing.T, body []byte, pageURL string) {
		const mark = "fuzzscriptbodymark"
		page := append(append([]byte(nil), body...), []byte("<script>"+mark+"()</script>")...)
		res, err := Extract(page, Options{PageURL: pageURL})
		if err != nil {
			if err.Error() == "" {
				t.Fatal("an error without a message")
			}
			return
		}
		if strings.Contains(res.Markdown, mark+"()") && !strings.Contains(string(body), mark) {
			t.Fatalf("Markdown holds a script body: %q", res.Markdown)
		}
	})
}
