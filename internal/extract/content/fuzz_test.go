package content

import (
	"errors"
	"strings"
	"testing"

	"github.com/browsertask/browsertask/internal/extract/page"
)

// FuzzExtract feeds arbitrary bytes as a page: Extract must return (a
// result or an error) without panicking, and the Markdown must never
// carry a <script> or <style> element.
func FuzzExtract(f *testing.F) {
	f.Add([]byte(`<html><body><article><h1>T</h1><p>text <a href="../a">link</a></p><pre class="language-go">x := 1</pre><table><tr><th>a</th></tr><tr><td>1</td></tr></table></article></body></html>`), "http://127.0.0.1/d/p")
	f.Add([]byte(`<base href="http://127.0.0.1/b/"><p><img data-src="i.png"><code>c</code></p><script>s()</script><style>p{}</style>`), "")
	f.Add([]byte(strings.Repeat("<ul><li>", 300)), "http://[::1]/")
	f.Fuzz(func(t *testing.T, body []byte, pageURL string) {
		res, err := Extract(body, Options{PageURL: pageURL})
		if err != nil {
			var de *page.DepthError
			if errors.As(err, &de) {
				return
			}
			return
		}
		low := strings.ToLower(res.Markdown)
		if strings.Contains(low, "<script") || strings.Contains(low, "<style") {
			t.Fatalf("Markdown holds a script or style element: %q", res.Markdown)
		}
	})
}
