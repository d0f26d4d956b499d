package templates

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"unicode/utf8"

	"github.com/browsertask/browsertask/engine"
	"github.com/browsertask/browsertask/internal/extract/content"
	"github.com/browsertask/browsertask/internal/extract/modelfill"
	"github.com/browsertask/browsertask/internal/fixture"
)

// TestFormatsInputRules: an unknown format is INVALID_PARAMETER naming
// inputs.formats[i] and the allowed values, by the schema and by Check;
// screenshot only with render "browser"; maxChars within its bounds and
// only with markdown or html; extract_structured refuses text and links.
func TestFormatsInputRules(t *testing.T) {
	profile := engine.Profile{TrustLevel: "local", MaxURLs: 1000, MaxTabsPerSession: 20}
	batch, crawl, structured := NewBatchExtractPages(nil), NewCrawlSite(nil), NewExtractStructured(nil, nil)
	s, err := engine.CompileSchema(batch.Info().InputSchema)
	if err != nil {
		t.Fatal(err)
	}
	verr := engine.AsError(s.Validate(json.RawMessage(`{"urls":["http://127.0.0.1:1/"],"formats":["markdown","pdf"]}`), "inputs"))
	if verr == nil || verr.Code != engine.InvalidParameter || !strings.Contains(verr.Message, "inputs.formats[1]") || !strings.Contains(verr.Message, "'markdown'") {
		t.Fatalf("schema: %v", verr)
	}
	for _, tc := range []struct {
		tpl    engine.Template
		inputs string
		field  string
		words  string
	}{
		{batch, `{"urls":["http://127.0.0.1:1/"],"formats":["markdown","pdf"]}`, "inputs.formats[1]", "markdown, html, text, links, metadata, screenshot"},
		{batch, `{"urls":["http://127.0.0.1:1/"],"formats":["screenshot"],"render":"http"}`, "inputs.formats[0]", `render "browser"`},
		{crawl, `{"startUrl":"http://127.0.0.1:1/","formats":["markdown","screenshot"],"render":"auto"}`, "inputs.formats[1]", `render "browser"`},
		{batch, `{"urls":["http://127.0.0.1:1/"],"formats":["markdown"],"maxChars":99}`, "inputs.maxChars", "100 to 1000000"},
		{crawl, `{"startUrl":"http://127.0.0.1:1/","formats":["metadata"],"maxChars":500}`, "inputs.maxChars", `add "markdown"`},
		{structured, `{"urls":["http://127.0.0.1:1/"],"formats":["markdown","links"]}`, "inputs.formats[1]", "batch_extract_pages"},
	} {
		e := engine.AsError(tc.tpl.Check(json.RawMessage(tc.inputs), profile))
		if e == nil || e.Code != engine.InvalidParameter || e.Details["field"] != tc.field || !strings.Contains(e.Message, tc.words) {
			t.Errorf("%s %s: %v (details %v), want INVALID_PARAMETER on %s saying %q", tc.tpl.Info().TemplateID, tc.inputs, e, e.Details, tc.field, tc.words)
		}
	}
	for _, ok := range []struct {
		tpl    engine.Template
		inputs string
	}{
		{batch, `{"urls":["http://127.0.0.1:1/"],"formats":["markdown","screenshot","text","links","metadata","html"],"maxChars":100}`},
		{structured, `{"urls":["http://127.0.0.1:1/"],"formats":["markdown","metadata"],"render":"auto"}`},
	} {
		if err := ok.tpl.Check(json.RawMessage(ok.inputs), profile); err != nil {
			t.Errorf("%s: %v", ok.inputs, err)
		}
	}
}

// TestFormatsKeepTheDefault: without formats a page is what it was
// (batch_extract_pages' text by default, no links); with formats, text
// and links only when listed or asked for with includeText/includeLinks.
func TestFormatsKeepTheDefault(t *testing.T) {
	for _, tc := range []struct {
		inputs      string
		text, links bool
	}{
		{`{"urls":["u"]}`, true, false},
		{`{"urls":["u"],"includeLinks":true}`, true, true},
		{`{"urls":["u"],"formats":["markdown"]}`, false, false},
		{`{"urls":["u"],"formats":["markdown"],"includeText":true}`, true, false},
		{`{"urls":["u"],"formats":["text","links"]}`, true, true},
		{`{"urls":["u"],"formats":[],"includeText":false}`, false, false},
	} {
		in, err := parseBatchInputs(json.RawMessage(tc.inputs))
		if err != nil || *in.IncludeText != tc.text || in.IncludeLinks != tc.links {
			t.Errorf("%s: text %v links %v (%v), want %v %v", tc.inputs, *in.IncludeText, in.IncludeLinks, err, tc.text, tc.links)
		}
	}
	in, err := parseCrawlInputs(json.RawMessage(`{"startUrl":"u","formats":["text"]}`))
	if err != nil || !in.IncludeText || in.IncludeLinks {
		t.Fatalf("crawl formats [text]: text %v links %v (%v)", in.IncludeText, in.IncludeLinks, err)
	}
}

// TestFormatsMaxCharsCutsTheAnswerOnly: over HTTP (no browser), maxChars
// cuts each page's markdown and html in the result at that many
// characters with the marker; pages.json and pages.md keep them whole;
// metadata is content.Extract's. Without formats nothing is added.
func TestFormatsMaxCharsCutsTheAnswerOnly(t *testing.T) {
	srv := fixture.New(t)
	pageURL := srv.URL("/static/article.html")
	body, err := os.ReadFile(filepath.Join(fixture.SiteDir(), "article.html"))
	if err != nil {
		t.Fatal(err)
	}
	want, err := content.Extract(body, content.Options{PageURL: pageURL})
	if err != nil {
		t.Fatal(err)
	}
	env := newEnv(t, mustJSON(t, map[string]any{"urls": []string{pageURL}, "render": "http",
		"formats": []string{"markdown", "html", "metadata"}, "maxChars": 100}))
	out, err := NewBatchExtractPages(nil).Run(t.Context(), env)
	if err != nil {
		t.Fatal(err)
	}
	res := out.Result.(batchResult)
	p := res.Pages[0]
	cut := string([]rune(want.Markdown)[:100]) + "\n\n[… cut at 100 characters; the whole page is in pages.md]"
	if p.Markdown != cut || !p.MarkdownTruncated || *p.MarkdownBytes != len(want.Markdown) || !p.HTMLTruncated ||
		utf8.RuneCountInString(p.HTML) != 100+utf8.RuneCountInString("\n\n[… cut at 100 characters; the whole page is in pages.md]") {
		t.Fatalf("result page: markdown %q (truncated %v, bytes %v), html truncated %v", p.Markdown, p.MarkdownTruncated, *p.MarkdownBytes, p.HTMLTruncated)
	}
	if p.Metadata == nil || p.Metadata.Language != want.Metadata.Language || p.Metadata.Author != want.Metadata.Author || p.Metadata.Title != want.Metadata.Title {
		t.Fatalf("metadata %+v, want %+v", p.Metadata, want.Metadata)
	}
	whole := env.pagesJSON(t)[0]
	if whole.Markdown != want.Markdown || whole.MarkdownTruncated || whole.HTML != want.HTML || whole.Text != nil {
		t.Fatalf("pages.json: markdown whole %v, truncated %v, html whole %v, text %v", whole.Markdown == want.Markdown, whole.MarkdownTruncated, whole.HTML == want.HTML, whole.Text)
	}
	if md, _ := env.artifact("pages.md"); string(md) != "# "+pageURL+"\n\n"+want.Markdown+"\n\n" || res.MarkdownArtifactID != "art_pages.md" {
		t.Fatalf("pages.md (%s):\n%s", res.MarkdownArtifactID, md)
	}

	plain := newEnv(t, mustJSON(t, map[string]any{"urls": []string{pageURL}, "render": "http"}))
	out, err = NewBatchExtractPages(nil).Run(t.Context(), plain)
	if err != nil {
		t.Fatal(err)
	}
	raw, _ := json.Marshal(out.Result)
	for _, k := range []string{"markdown", "markdownBytes", "tokensEstimate", "html", "metadata", "markdownArtifactId"} {
		if strings.Contains(string(raw), `"`+k+`"`) {
			t.Errorf("without formats the result has %s: %s", k, raw)
		}
	}
	if md, _ := plain.artifact("pages.md"); md != nil || plain.pagesJSON(t)[0].Text == nil {
		t.Fatalf("without formats: pages.md %d bytes, text %v", len(md), plain.pagesJSON(t)[0].Text)
	}
}

// TestAutoEvidenceComparesMarkdown: with markdown asked for, a sample
// whose browser Markdown has what the HTML's lacks is JavaScript's doing;
// one whose browser Markdown is all in the HTML's (in order, whitespace
// and case aside) is a text rule; without markdown it is not compared.
func TestAutoEvidenceComparesMarkdown(t *testing.T) {
	page := func(md string) *pageOut {
		return &pageOut{URL: "u", FinalURL: "u", Title: "T", Fields: map[string]any{}, pageContent: pageContent{Markdown: md}}
	}
	a := &autoRender{markdown: true}
	if ev := a.evidence(page("# A\n\nshell"), page("# A\n\nshell\n\n- built by a script")); strings.Join(ev.js, ";") != "markdown differs" || len(ev.textRule) != 0 {
		t.Fatalf("more in the browser: js %v textRule %v", ev.js, ev.textRule)
	}
	if ev := a.evidence(page("# A\n\nHidden ¶ text"), page("# a\n\nhidden text")); len(ev.js) != 0 || strings.Join(ev.textRule, ",") != "markdown" {
		t.Fatalf("less in the browser: js %v textRule %v", ev.js, ev.textRule)
	}
	a.markdown = false
	if ev := a.evidence(page("x"), page("y")); len(ev.js)+len(ev.textRule) != 0 {
		t.Fatalf("markdown not asked for: %v %v", ev.js, ev.textRule)
	}
}

// FuzzCutRunes: a cut is valid UTF-8, at most n characters of s then the
// marker, a prefix of s, and s itself when it is short enough.
func FuzzCutRunes(f *testing.F) {
	f.Add("Brewing Guide ✓ é", 3)
	f.Add("", 0)
	f.Add("\xff\xfe abc", 1)
	f.Fuzz(func(t *testing.T, s string, n int) {
		if n < 0 || n > 1<<16 {
			return
		}
		got, cut := cutRunes(s, n, resultMarker)
		if !cut {
			if got != s || utf8.RuneCountInString(s) > n {
				t.Fatalf("not cut: %q from %q at %d", got, s, n)
			}
			return
		}
		marker := fmt.Sprintf(resultMarker, n)
		head, ok := strings.CutSuffix(got, marker)
		if !ok || !strings.HasPrefix(s, head) || utf8.RuneCountInString(head) != n || (utf8.ValidString(s) && !utf8.ValidString(got)) {
			t.Fatalf("cut %q from %q at %d", got, s, n)
		}
	})
}

// promptRecorder is a model that answers every question with answer and
// keeps the last prompt it was sent.
type promptRecorder struct {
	mu     sync.Mutex
	prompt string
	answer string
}

func (p *promptRecorder) Sample(_ context.Context, req modelfill.SampleRequest) (modelfill.SampleResponse, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.prompt = req.Messages[len(req.Messages)-1].Content
	return modelfill.SampleResponse{Text: p.answer}, nil
}

// TestFormatsStructuredModelReadsMarkdown: extract_structured with
// formats markdown gives the model the page's Markdown (no cookie banner,
// no footer) instead of its whole text, and the item carries it; without
// formats the model gets the page's text as before.
func TestFormatsStructuredModelReadsMarkdown(t *testing.T) {
	srv := fixture.New(t)
	pageURL := srv.URL("/static/article.html")
	schema := json.RawMessage(`{"type": "object", "required": ["greenMinutes"], "properties": {"greenMinutes": {"type": "integer"}}}`)
	md := articleMarkdown(t, pageURL)
	for _, formats := range [][]string{{"markdown"}, nil} {
		model := &promptRecorder{answer: `{"greenMinutes": 2}`}
		in := map[string]any{"urls": []string{pageURL}, "render": "http"}
		if formats != nil {
			in["formats"] = formats
		}
		env := schemaEnv{newEnv(t, mustJSON(t, in)), schema}
		out, err := runStructured(t, t.Context(), NewExtractStructured(nil, model), env)
		if err != nil {
			t.Fatal(err)
		}
		it := out.Result.(structuredResult).Items[0]
		if it.Error != nil || it.Object["greenMinutes"] != 2.0 && it.Object["greenMinutes"] != 2 {
			t.Fatalf("formats %v: item %+v", formats, it)
		}
		model.mu.Lock()
		prompt := model.prompt
		model.mu.Unlock()
		banner := strings.Contains(prompt, "Accept all cookies")
		if formats != nil && (banner || !strings.Contains(prompt, md[:200]) || it.Markdown != md) {
			t.Fatalf("with markdown: the prompt has the banner %v, the Markdown %v; item markdown %d bytes\n%s", banner, strings.Contains(prompt, md[:200]), len(it.Markdown), prompt)
		}
		if formats == nil && (!banner || it.Markdown != "") {
			t.Fatalf("without formats the model reads the page's text (banner %v), item markdown %q", banner, it.Markdown)
		}
	}
}
