package content

import (
	"strings"
	"testing"
)

// markedArticle is a page whose article has a link with bold text in it,
// a plain link and an image, beside a navigation of links.
const markedArticle = `<!DOCTYPE html><html><head><title>Marks</title></head><body>
<nav><a href="/">Home</a> <a href="/blog">Blog</a></nav>
<article><h1>Kept links</h1>
<p>The first paragraph is long enough to be taken as the main content by the extractor, and it links to the <a href="/docs/a.html">first <b>guide</b> page</a> here.</p>
<p>A second paragraph that is also long enough to count, pointing at <a href="b.html">the second page</a> and explaining a little more about both of them.</p>
<img src="img/fig.png" alt="Figure one">
<p>A third paragraph closes the article with a few more words so the whole is clearly the page's main content.</p>
</article>
<footer>Copyright someone</footer></body></html>`

// TestExtractRestoresLinksAndImagesFromMarks: the selection is text-only
// (marks.go), and the links and the image of the chosen blocks come back
// absolute, a link whose text spans a <b> as one link per text piece, with
// no mark character left anywhere.
func TestExtractRestoresLinksAndImagesFromMarks(t *testing.T) {
	res, err := Extract([]byte(markedArticle), Options{PageURL: "http://127.0.0.1:8080/site/page.html"})
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"links to the [first](http://127.0.0.1:8080/docs/a.html) [**guide**](http://127.0.0.1:8080/docs/a.html) [page](http://127.0.0.1:8080/docs/a.html) here.",
		"[the second page](http://127.0.0.1:8080/site/b.html)",
		"![Figure one](http://127.0.0.1:8080/site/img/fig.png)",
	} {
		if !strings.Contains(res.Markdown, want) {
			t.Errorf("Markdown lacks %q:\n%s", want, res.Markdown)
		}
	}
	for form, s := range map[string]string{"Markdown": res.Markdown, "HTML": res.HTML, "Text": res.Text, "Title": res.Metadata.Title} {
		if strings.IndexFunc(s, isMark) >= 0 {
			t.Errorf("%s holds a mark character: %q", form, s)
		}
		if strings.Contains(s, "Blog") || strings.Contains(s, "Copyright") {
			t.Errorf("%s holds navigation or footer: %q", form, s)
		}
	}
	if !strings.Contains(res.Text, "links to the first guide page here.") {
		t.Errorf("Text = %q, want the link's text in its sentence", res.Text)
	}
}

// TestExtractPageWithMarkCharactersKeepsItsText: a page whose own text
// holds a character of the marks' range is selected with links and images
// on instead, and its character stays as written.
func TestExtractPageWithMarkCharactersKeepsItsText(t *testing.T) {
	page := strings.Replace(markedArticle, "closes the article", "closes the \U000F0001 article", 1)
	res, err := Extract([]byte(page), Options{PageURL: "http://127.0.0.1:8080/site/page.html"})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(res.Text, "closes the \U000F0001 article") {
		t.Errorf("Text lost the page's own character: %q", res.Text)
	}
	if !strings.Contains(res.Markdown, "[the second page](http://127.0.0.1:8080/site/b.html)") {
		t.Errorf("Markdown lacks the link:\n%s", res.Markdown)
	}
}
