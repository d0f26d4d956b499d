package content

import (
	"bytes"
	"strings"
	"testing"

	"golang.org/x/net/html"
	"golang.org/x/text/unicode/norm"
)

// FuzzExtract feeds arbitrary bytes as a page and any string as its URL:
// Extract must answer (a result, or an error with a message) without
// panicking past its recover and without hanging, and a result's
// Markdown never holds a <script> element that was in the page's markup
// (its body text is marked and searched for), nor a mark character of
// marks.go that the page did not hold.
func FuzzExtract(f *testing.F) {
	f.Add([]byte(`<html><body><article><h1>T</h1><p>text <a href="../a">link</a></p><pre class="language-go">x := 1</pre><table><tr><th>a</th></tr><tr><td>1</td></tr></table></article></body></html>`), "http://127.0.0.1/d/p")
	f.Add([]byte(`<base href="http://127.0.0.1/b/"><p><img data-src="i.png"><code>c</code></p><script>s()</script><style>p{}</style>`), "")
	f.Add([]byte(strings.Repeat("<ul><li>", 300)), "http://[::1]/")
	f.Add([]byte(markedArticle), "http://127.0.0.1/site/")
	f.Add([]byte(`<p><a href="x">a <b>b</a> c</b> <img src="i.png"> 󰀀 <a href="y">􏿽</a></p>`), "http://127.0.0.1/")
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
		if !hasMarks(mustParse(t, body)) {
			for form, s := range map[string]string{"Markdown": res.Markdown, "Text": res.Text, "HTML": res.HTML} {
				if strings.IndexFunc(s, isMark) >= 0 {
					t.Fatalf("%s holds a mark the page did not: %q", form, s)
				}
			}
		}
		if strings.Contains(res.Markdown, mark+"()") && !strings.Contains(string(body), mark) {
			t.Fatalf("Markdown holds a script body: %q", res.Markdown)
		}
	})
}

// mustParse parses body as Extract does, for the mark check.
func mustParse(t *testing.T, body []byte) *html.Node {
	t.Helper()
	doc, err := html.ParseWithOptions(bytes.NewReader(norm.NFC.Bytes(body)), html.ParseOptionEnableScripting(true))
	if err != nil {
		t.Fatal(err)
	}
	return doc
}
