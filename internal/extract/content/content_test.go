package content

import (
	"errors"
	"os"
	"reflect"
	"strings"
	"testing"

	"golang.org/x/net/html"

	"github.com/browsertask/browsertask/internal/extract/page"
)

// TestExtractGuideExactMarkdown is acceptance 1's exact-Markdown check at
// package level: a page with a nav, a footer, scripts and styles, headings,
// a nested list, a table, a Go code block, a relative link and a relative
// image gives exactly this Markdown and this metadata.
func TestExtractGuideExactMarkdown(t *testing.T) {
	body, err := os.ReadFile("testdata/guide.html")
	if err != nil {
		t.Fatal(err)
	}
	res, err := Extract(body, Options{PageURL: "http://127.0.0.1:8080/docs/guide/page.html"})
	if err != nil {
		t.Fatal(err)
	}
	want := "# Parsing recipes\n\n" +
		"This guide explains how to parse recipe pages into structured data. It covers the steps from fetching to storing, with an example for each step and a note on the pitfalls that people meet first.\n\n" +
		"## Steps\n\n" +
		"1. Fetch the page\n\n" +
		"   - over HTTP\n" +
		"   - or in a browser\n" +
		"2. Read the [field reference](http://127.0.0.1:8080/docs/reference/fields.html)\n" +
		"3. Store the result\n\n" +
		"## Units\n\n" +
		"| Unit  | Grams |\n" +
		"|-------|-------|\n" +
		"| cup   | 240   |\n" +
		"| spoon | 15    |\n\n" +
		"### Example code\n\n" +
		"```go\nfunc main() {\n\tfmt.Println(\"hello\")\n}\n```\n\n" +
		"The diagram below shows the flow from one step to the next in more detail than the list above.\n\n" +
		"![Flow diagram](http://127.0.0.1:8080/docs/guide/img/flow.png)\n\n" +
		"That is all there is to it; the rest of the documentation covers each part in more depth for readers who want it."
	if res.Markdown != want {
		t.Errorf("Markdown:\n%s\n--- want:\n%s", res.Markdown, want)
	}
	wantMeta := Metadata{
		Title: "Parsing recipes", Description: "How to parse recipe pages step by step.", Language: "en",
		Canonical: "http://127.0.0.1:8080/docs/guide/parsing", Author: "Ada Lovelace", Published: "2024-03-05",
		SiteName: "Example Docs", Image: "http://127.0.0.1:8080/img/cover.png",
		OpenGraph: map[string]string{"title": "Parsing recipes", "type": "article", "site_name": "Example Docs",
			"image": "http://127.0.0.1:8080/img/cover.png"},
	}
	if !reflect.DeepEqual(res.Metadata, wantMeta) {
		t.Errorf("Metadata:\n%+v\nwant\n%+v", res.Metadata, wantMeta)
	}
	for _, leak := range []string{"Home", "Blog", "Copyright", "Privacy", "do-not-leak", "footer script body", "font-family"} {
		for form, s := range map[string]string{"Markdown": res.Markdown, "HTML": res.HTML, "Text": res.Text} {
			if strings.Contains(s, leak) {
				t.Errorf("%s holds %q (navigation, footer, script or style)", form, leak)
			}
		}
	}
	if !strings.Contains(res.HTML, `<pre><code class="language-go">`) || !strings.Contains(res.HTML, "<thead>") {
		t.Errorf("HTML lacks the code block's language or the table header: %s", res.HTML)
	}
	if !strings.Contains(res.Text, "Read the field reference\nStore the result") {
		t.Errorf("Text keeps no line structure: %q", res.Text)
	}
}

// TestExtractShortPageKeepsParagraphs: a page too short for go-trafilatura's
// threshold is not flattened into one run-on line by its baseline rescue.
func TestExtractShortPageKeepsParagraphs(t *testing.T) {
	body := `<html><head><title>T</title></head><body><nav><a href="/">Home</a></nav><article><h1>Hello</h1><p>Some long paragraph about things.</p><p>Second paragraph.</p></article><footer>Copyright</footer></body></html>`
	res, err := Extract([]byte(body), Options{PageURL: "http://127.0.0.1/a"})
	if err != nil {
		t.Fatal(err)
	}
	if want := "Some long paragraph about things.\n\nSecond paragraph."; res.Markdown != want {
		t.Errorf("Markdown = %q, want %q", res.Markdown, want)
	}
}

// TestExtractDeepNestingIsAnError: markup past page.MaxDepth levels is a
// *page.DepthError, not a panic or a hang.
func TestExtractDeepNestingIsAnError(t *testing.T) {
	body := "<html><body>" + strings.Repeat("<div>", page.MaxDepth+1) + "deep" + strings.Repeat("</div>", page.MaxDepth+1) + "</body></html>"
	_, err := Extract([]byte(body), Options{PageURL: "http://127.0.0.1/"})
	var de *page.DepthError
	if !errors.As(err, &de) {
		t.Fatalf("err = %v, want a *page.DepthError", err)
	}
}

// TestExtractTooLarge: a page over MaxInputBytes is refused with a
// *TooLargeError naming the size, before any parsing.
func TestExtractTooLarge(t *testing.T) {
	body := make([]byte, MaxInputBytes+1)
	_, err := Extract(body, Options{})
	var tl *TooLargeError
	if !errors.As(err, &tl) || tl.Size != MaxInputBytes+1 {
		t.Fatalf("err = %v, want a *TooLargeError of %d bytes", err, MaxInputBytes+1)
	}
}

// TestExtractDropsUnsafeLinksAndDataImages: javascript: links keep their
// text only; data: images are dropped; code without a language has a bare
// fence.
func TestExtractDropsUnsafeLinksAndDataImages(t *testing.T) {
	para := "<p>This paragraph is long enough to be taken as the main content of the page by the extractor, with a few more words to be safe.</p>"
	body := `<html><body><article>` + para + `<p>Click <a href="javascript:alert(1)">here</a> now, please, and read on for more text that matters.</p>` +
		`<p><img src="data:image/png;base64,AAAA" alt="dot"></p><pre><code>plain code
line two</code></pre>` + para + `</article></body></html>`
	res, err := Extract([]byte(body), Options{PageURL: "http://127.0.0.1/x/"})
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(res.Markdown, "javascript:") || strings.Contains(res.Markdown, "data:image") {
		t.Errorf("Markdown keeps an unsafe URL:\n%s", res.Markdown)
	}
	if !strings.Contains(res.Markdown, "Click here now") {
		t.Errorf("the link's text is lost:\n%s", res.Markdown)
	}
	if !strings.Contains(res.Markdown, "```\nplain code\nline two\n```") {
		t.Errorf("the code block is not fenced as written:\n%s", res.Markdown)
	}
}

// TestExtractDropsHeadingPermalinks: the permalink anchors documentation
// generators put in headings (Sphinx's "¶", GitHub's "#" and its <svg>
// icon) are not in the Markdown; a footnote reference and an in-page
// table of contents, which show words, stay links.
func TestExtractDropsHeadingPermalinks(t *testing.T) {
	para := "<p>This paragraph is long enough to be taken as the main content of the page by the extractor, with a few more words to be safe.</p>"
	body := `<html><body><article>` +
		`<h1>Setup<a class="headerlink" href="#setup" title="Permalink to this heading">¶</a></h1>` + para +
		`<h2><a class="anchor" aria-hidden="true" href="#usage"><svg viewBox="0 0 16 16"><path d="M0 0"></path></svg></a>Usage</h2>` + para +
		`<h2 id="more">More <a href="#more">#</a></h2>` +
		`<p>See <a href="#setup">Setup</a> above and the note<sup><a href="#fn1">1</a></sup>, which explains the rest of this long sentence.</p>` + para +
		`</article></body></html>`
	res, err := Extract([]byte(body), Options{PageURL: "http://127.0.0.1/guide/"})
	if err != nil {
		t.Fatal(err)
	}
	for _, bad := range []string{"¶", "Setup[", "[](", "#usage", "#more"} {
		if strings.Contains(res.Markdown, bad) {
			t.Errorf("the Markdown keeps a permalink (%q):\n%s", bad, res.Markdown)
		}
	}
	for _, want := range []string{"# Setup\n", "## Usage\n", "## More\n", "[Setup](http://127.0.0.1/guide/#setup)", "[1](http://127.0.0.1/guide/#fn1)"} {
		if !strings.Contains(res.Markdown, want) {
			t.Errorf("the Markdown lacks %q:\n%s", want, res.Markdown)
		}
	}
}

// TestJoinSplitLinks: the pieces a text-only selection leaves of one link
// (links per text piece, some inside spans) are one link again; links to
// other addresses and links with text between them stay apart.
func TestJoinSplitLinks(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{`<p>see <span><a href="#n">[</a></span><a href="#n">1</a><span><a href="#n">]</a></span> here</p>`, `<p>see <a href="#n">[1]</a> here</p>`},
		{`<p><a href="#a">x</a><a href="#a">y</a></p>`, `<p><a href="#a">xy</a></p>`},
		{`<p><a href="#a">x</a><a href="#b">y</a></p>`, `<p><a href="#a">x</a><a href="#b">y</a></p>`},
		{`<p><a href="#a">x</a> and <a href="#a">y</a></p>`, `<p><a href="#a">x</a> and <a href="#a">y</a></p>`},
		{`<p><span><a href="#a">x</a> more</span><a href="#a">y</a></p>`, `<p><span><a href="#a">x</a> more</span><a href="#a">y</a></p>`},
	} {
		doc, err := html.Parse(strings.NewReader(c.in))
		if err != nil {
			t.Fatal(err)
		}
		p := findElement(doc, "p")
		joinSplitLinks(p)
		var b strings.Builder
		if err := html.Render(&b, p); err != nil {
			t.Fatal(err)
		}
		if b.String() != c.want {
			t.Errorf("joinSplitLinks(%s) = %s, want %s", c.in, b.String(), c.want)
		}
	}
}

// TestExtractCanonicalIsAWebAddress: a canonical link naming a file of the
// machine the page was built on (Debian's documentation packages) is no
// canonical address; an https one is kept.
func TestExtractCanonicalIsAWebAddress(t *testing.T) {
	para := "<p>This paragraph is long enough to be taken as the main content of the page by the extractor, with a few more words to be safe.</p>"
	for canon, want := range map[string]string{
		"file:///usr/share/doc/python3.11/html/library/json.html": "",
		"https://docs.python.org/3/library/json.html":             "https://docs.python.org/3/library/json.html",
		"/library/json.html": "http://127.0.0.1:8765/library/json.html",
	} {
		body := `<html><head><link rel="canonical" href="` + canon + `"></head><body><article>` + para + para + `</article></body></html>`
		res, err := Extract([]byte(body), Options{PageURL: "http://127.0.0.1:8765/library/json.html"})
		if err != nil {
			t.Fatal(err)
		}
		if res.Metadata.Canonical != want {
			t.Errorf("canonical %q read as %q, want %q", canon, res.Metadata.Canonical, want)
		}
	}
}
