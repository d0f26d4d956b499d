package templates

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/browsertask/browsertask/engine"
	"github.com/browsertask/browsertask/internal/extract/content"
	"github.com/browsertask/browsertask/internal/fixture"
)

// articleMarkdown is content.Extract of the fixture article as served at
// pageURL: what every template and render path must give.
func articleMarkdown(t *testing.T, pageURL string) string {
	t.Helper()
	body, err := os.ReadFile(filepath.Join(fixture.SiteDir(), "article.html"))
	if err != nil {
		t.Fatal(err)
	}
	res, err := content.Extract(body, content.Options{PageURL: pageURL})
	if err != nil {
		t.Fatal(err)
	}
	return res.Markdown
}

// checkArticleMarkdown asserts the lines of the article's Markdown that
// show headings, absolute links and images, and no boilerplate. The exact
// whole Markdown is held by internal/extract/content's own tests; here it
// is the same string on every path (want).
func checkArticleMarkdown(t *testing.T, what, got, want, origin string) {
	t.Helper()
	if got != want {
		t.Fatalf("%s: markdown differs from content.Extract of the page:\n got %q\nwant %q", what, got, want)
	}
	lines := strings.Split(got, "\n")
	for _, l := range []string{
		"# Brewing Guide",
		"## Temperatures",
		"Read the [notes on water](" + origin + "/static/about.html) before you start, and look at the kettle below.",
		"![A kettle](" + origin + "/static/pixel.svg)",
	} {
		if !containsLine(lines, l) {
			t.Errorf("%s: no line %q in\n%s", what, l, got)
		}
	}
	// The content package renders tables and fenced code with their
	// language (issue 29); the rows and the fence are asserted when it
	// does, the exact Markdown being its own test's.
	// Table cells may be padded to the column's width: a row is compared
	// with runs of spaces as one.
	if strings.Contains(want, "| Green") {
		spaced := make([]string, len(lines))
		for i, l := range lines {
			spaced[i] = strings.Join(strings.Fields(l), " ")
		}
		if !containsLine(spaced, "| Green | 80 °C | 2 |") {
			t.Errorf("%s: no table row | Green | 80 °C | 2 | in\n%s", what, got)
		}
		for _, l := range []string{"```go", `	fmt.Println("tea is ready")`, "```"} {
			if !containsLine(lines, l) {
				t.Errorf("%s: no line %q in\n%s", what, l, got)
			}
		}
	}
	for _, bad := range []string{"Accept all cookies", "All rights reserved", "Contact"} {
		if strings.Contains(got, bad) {
			t.Errorf("%s: boilerplate %q kept:\n%s", what, bad, got)
		}
	}
}

func containsLine(lines []string, l string) bool {
	for _, x := range lines {
		if x == l {
			return true
		}
	}
	return false
}

// formatsPage is what the formats add to one page of any template's
// result.
type formatsPage struct {
	URL          string `json:"url"`
	RenderedBy   string `json:"renderedBy"`
	RenderReason string `json:"renderReason"`
	pageContent
	Error *engine.Error `json:"error"`
}

// TestFormatsMarkdownOnEveryTemplateAndPath is issue 29's acceptance 1:
// formats: ["markdown"] on batch_extract_pages, crawl_site and
// extract_structured, with render "http", "browser" and "auto", gives the
// article's main content as content.Extract makes it from the page's
// HTML (the browser's from the serialized document), with markdownBytes,
// tokensEstimate and pages.md; auto's sample compares the Markdown and
// finds it the same.
func TestFormatsMarkdownOnEveryTemplateAndPath(t *testing.T) {
	srv := fixture.New(t)
	pageURL := srv.URL("/static/article.html")
	origin := strings.TrimSuffix(pageURL, "/static/article.html")
	want := articleMarkdown(t, pageURL)
	b := testManager(t)
	schema := json.RawMessage(`{"type": "object", "properties": {"headline": {"type": "string"}}}`)
	for _, render := range []string{renderHTTP, renderBrowser, renderAuto} {
		for _, tc := range []struct {
			name   string
			tpl    engine.Template
			inputs map[string]any
			list   string
		}{
			{"batch_extract_pages", NewBatchExtractPages(b), map[string]any{"urls": []string{pageURL}}, "pages"},
			{"crawl_site", NewCrawlSite(b), map[string]any{"startUrl": pageURL, "maxPages": 1}, "pages"},
			{"extract_structured", NewExtractStructured(b, nil), map[string]any{"urls": []string{pageURL}}, "items"},
		} {
			what := tc.name + " render " + render
			tc.inputs["formats"], tc.inputs["render"] = []string{"markdown"}, render
			env := schemaEnv{newEnv(t, mustJSON(t, tc.inputs)), schema}
			out, err := runStructured(t, t.Context(), tc.tpl, env)
			if err != nil {
				t.Fatalf("%s: %v", what, err)
			}
			raw, _ := json.Marshal(out.Result)
			var res map[string]json.RawMessage
			if err := json.Unmarshal(raw, &res); err != nil {
				t.Fatal(err)
			}
			var pages []formatsPage
			if err := json.Unmarshal(res[tc.list], &pages); err != nil || len(pages) != 1 {
				t.Fatalf("%s: %s %s (%v)", what, tc.list, res[tc.list], err)
			}
			p := pages[0]
			if p.Error != nil {
				t.Fatalf("%s: page failed: %v", what, p.Error)
			}
			checkArticleMarkdown(t, what, p.Markdown, want, origin)
			if p.MarkdownBytes == nil || *p.MarkdownBytes != len(want) || p.TokensEstimate == nil || *p.TokensEstimate != (len(want)+3)/4 || p.MarkdownTruncated {
				t.Errorf("%s: markdownBytes %v tokensEstimate %v truncated %v, want %d, %d, false", what, p.MarkdownBytes, p.TokensEstimate, p.MarkdownTruncated, len(want), (len(want)+3)/4)
			}
			wantBy := map[string]string{renderHTTP: renderHTTP, renderBrowser: renderBrowser, renderAuto: renderBrowser}[render]
			if p.RenderedBy != wantBy || (render == renderAuto && tc.name != "extract_structured" && p.RenderReason != reasonSample) {
				t.Errorf("%s: renderedBy %q renderReason %q, want %q (auto: the first page of a group is a sample whose Markdown agrees)", what, p.RenderedBy, p.RenderReason, wantBy)
			}
			var mdID string
			_ = json.Unmarshal(res["markdownArtifactId"], &mdID)
			md, mime := env.artifact("pages.md")
			if mdID != "art_pages.md" || mime != "text/markdown" || string(md) != "# "+pageURL+"\n\n"+want+"\n\n" {
				t.Errorf("%s: markdownArtifactId %q, pages.md (%s):\n%s", what, mdID, mime, md)
			}
			if _, ok := res["text"]; ok {
				t.Errorf("%s: text in the result", what)
			}
		}
	}
}

// TestFormatsScreenshotAndKeep: formats screenshot in the browser stores
// one PNG per page, named after it, in the page's screenshotArtifactId;
// Keep (a run stopped early) writes pages.md beside pages.json.
func TestFormatsScreenshotAndKeep(t *testing.T) {
	srv := fixture.New(t)
	urls := []string{srv.URL("/static/article.html"), srv.URL("/static/about.html")}
	env := newEnv(t, mustJSON(t, map[string]any{"urls": urls, "formats": []string{"markdown", "screenshot"}, "concurrency": 2}))
	out, err := runBatch(t, env)
	if err != nil {
		t.Fatal(err)
	}
	res := out.Result.(batchResult)
	names := artifactNames(urls, "png")
	for i, p := range res.Pages {
		png, mime := env.artifact(names[i])
		if p.Error != nil || p.ScreenshotArtifactID != "art_"+names[i] || mime != "image/png" || !strings.HasPrefix(string(png), "\x89PNG\r\n\x1a\n") {
			t.Fatalf("page %d: error %v, screenshotArtifactId %q, %s of %d bytes", i, p.Error, p.ScreenshotArtifactID, mime, len(png))
		}
	}
	md, _ := env.artifact("pages.md")
	env.mu.Lock()
	delete(env.artifacts, "pages.md")
	env.mu.Unlock()
	tpl := NewBatchExtractPages(nil).(engine.Keeper)
	if _, _, err := tpl.Keep(t.Context(), env, nil); err != nil {
		t.Fatal(err)
	}
	if kept, _ := env.artifact("pages.md"); len(md) == 0 || string(kept) != string(md) {
		t.Fatalf("Keep's pages.md:\n%s\nwant\n%s", kept, md)
	}
}

// TestRenderAutoComparesMarkdown: with formats markdown, render "auto"'s
// samples compare the Markdown too. On the mixed site's hybrid host
// (server-rendered, a script fills the price) no field is asked for, so
// only the Markdown tells: the first sample switches the section to the
// browser, and every page's Markdown has the price the script wrote.
// Without formats the same pages are served over HTTP after the samples.
// On a static host the Markdown agrees and the pages after the samples
// are read over HTTP, with their Markdown.
func TestRenderAutoComparesMarkdown(t *testing.T) {
	m := fixture.NewMixed(t)
	bases := map[string]string{}
	for _, h := range m.Hosts() {
		bases[h.Kind] = h.Base
	}
	run := func(kind string, formats []string) []pageSummary {
		urls := make([]string, 4)
		for n := range urls {
			urls[n] = fmt.Sprintf("%s/mixed/%d", bases[kind], n)
		}
		in := map[string]any{"urls": urls, "render": "auto", "concurrency": 1}
		if formats != nil {
			in["formats"] = formats
		}
		out, err := runBatch(t, newEnv(t, mustJSON(t, in)))
		if err != nil {
			t.Fatal(err)
		}
		return out.Result.(batchResult).Pages
	}
	for n, p := range run(fixture.MixedHybrid, []string{"markdown"}) {
		if p.RenderedBy != renderBrowser || p.RenderReason != "group /mixed/ needs JavaScript: /mixed/0: markdown differs" || !strings.Contains(p.Markdown, fmt.Sprintf("Price: %d.50", n)) {
			t.Fatalf("hybrid page %d with markdown: %s %q %q", n, p.RenderedBy, p.RenderReason, p.Markdown)
		}
	}
	for n, p := range run(fixture.MixedHybrid, nil) {
		if want := map[bool]string{true: renderBrowser, false: renderHTTP}[n < autoFirstPages]; p.RenderedBy != want || p.Markdown != "" {
			t.Fatalf("hybrid page %d without formats: %s %q, want %s", n, p.RenderedBy, p.RenderReason, want)
		}
	}
	for n, p := range run(fixture.MixedStatic, []string{"markdown"}) {
		want, reason := renderHTTP, ""
		if n < autoFirstPages {
			want, reason = renderBrowser, reasonSample
		}
		if p.RenderedBy != want || p.RenderReason != reason || !strings.Contains(p.Markdown, fmt.Sprintf("Price: %d.50", n)) {
			t.Fatalf("static page %d with markdown: %s %q %q, want %s %q", n, p.RenderedBy, p.RenderReason, p.Markdown, want, reason)
		}
	}
}
