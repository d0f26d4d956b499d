package templates

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/browsertask/browsertask/engine"
	"github.com/browsertask/browsertask/internal/fixture"
)

// deepMessage is what the page error of a page nested past the parser's
// limit says.
const deepMessage = "nests elements deeper than the HTML parser's limit of 512 levels"

// checkTooDeep fails the test unless e is the page error of parseFailure
// for url with the given advice.
func checkTooDeep(t *testing.T, url string, e *engine.Error, advice string) {
	t.Helper()
	if e == nil || e.Code != engine.StepExecutionFailed || !strings.Contains(e.Message, deepMessage) ||
		!strings.HasPrefix(e.Message, url+": ") || !strings.Contains(e.Message, advice) ||
		e.Details["reason"] != reasonTooDeep || e.Details["stage"] != "parse" {
		t.Fatalf("error of %s = %+v, want STEP_EXECUTION_FAILED %q ending %q", url, e, deepMessage, advice)
	}
}

// Issue 26 item 1: a page of 513 nested <div>s (testdata/site/deep.html)
// made page.ParseString return nil and the worker goroutine
// panicked on it (Extract(nil)), killing the process. Now: render "http"
// fails that page naming the limit and reads the other; render "auto"
// reads it in the browser (not switching the host); render "browser" reads
// it as any page (Chromium has no such limit).
func TestDeepPageBatchExtract(t *testing.T) {
	srv := fixture.New(t)
	deep, normal := srv.URL("/static/deep.html"), srv.URL("/static/about.html")
	for _, render := range []string{"http", "auto", "browser"} {
		t.Run(render, func(t *testing.T) {
			env := newEnv(t, mustJSON(t, map[string]any{"urls": []string{deep, normal}, "render": render, "concurrency": 2,
				"fields": map[string]any{"name": "#name", "inner": map[string]any{"selector": "p.inner"}}}))
			out, err := runBatch(t, env)
			if err != nil {
				t.Fatal(err)
			}
			res := out.Result.(batchResult)
			if len(res.Pages) != 2 {
				t.Fatalf("%d pages", len(res.Pages))
			}
			dp, np := res.Pages[0], res.Pages[1]
			if np.Error != nil || np.Fields["name"] != "About" {
				t.Fatalf("normal page %+v (error %v)", np, np.Error)
			}
			if render == "http" {
				checkTooDeep(t, deep, dp.Error, `read it with render "browser"`)
				if !out.Partial || res.Summary != (batchSummary{Total: 2, Succeeded: 1, Failed: 1}) || dp.RenderedBy != "http" || dp.HTTPStatus != 200 {
					t.Fatalf("partial %v, summary %+v, deep page %+v", out.Partial, res.Summary, dp)
				}
				return
			}
			if dp.Error != nil || dp.Fields["name"] != "Deep Widget" || dp.Fields["inner"] != "bottom" || dp.RenderedBy != "browser" {
				t.Fatalf("deep page %+v (error %v)", dp, dp.Error)
			}
			if out.Partial || res.Summary != (batchSummary{Total: 2, Succeeded: 2}) {
				t.Fatalf("partial %v, summary %+v", out.Partial, res.Summary)
			}
			if render == "auto" && (dp.RenderReason != reasonTooDeep || np.RenderedBy != "browser" || np.RenderReason != reasonSample) {
				t.Fatalf("auto: deep page reason %q; normal page by %q (%q), want the first sample of an unswitched host",
					dp.RenderReason, np.RenderedBy, np.RenderReason)
			}
		})
	}
}

// crawlPage is a page of crawl_site's result, as far as these tests look.
type crawlPage struct {
	URL          string        `json:"url"`
	RenderedBy   string        `json:"renderedBy"`
	RenderReason string        `json:"renderReason"`
	Error        *engine.Error `json:"error"`
}

// A crawl reaching the deep page: render "http" fails it and crawls on;
// render "auto" reads it in the browser and follows its link (/page/1).
func TestDeepPageCrawlSite(t *testing.T) {
	for _, render := range []string{"http", "auto"} {
		t.Run(render, func(t *testing.T) {
			srv := fixture.New(t)
			env := newEnv(t, mustJSON(t, map[string]any{"startUrl": srv.URL("/static/to-deep.html"), "render": render,
				"maxPages": 4, "concurrency": 1, "fields": map[string]string{"name": "#name"}}))
			out, err := runTemplate(t, NewCrawlSite(testManager(t)), env)
			if err != nil {
				t.Fatal(err)
			}
			b, _ := json.Marshal(resultOf(t, out)["pages"])
			var pages []crawlPage
			if err := json.Unmarshal(b, &pages); err != nil {
				t.Fatal(err)
			}
			byURL := map[string]crawlPage{}
			for _, p := range pages {
				byURL[p.URL] = p
			}
			deep := byURL[srv.URL("/static/deep.html")]
			if render == "http" {
				// to-deep, deep (failed: its link is not read), about,
				// and about's link fields.html.
				if len(pages) != 4 || !out.Partial {
					t.Fatalf("partial %v, pages %+v", out.Partial, pages)
				}
				checkTooDeep(t, deep.URL, deep.Error, `read it with render "browser"`)
				if byURL[srv.URL("/static/about.html")].Error != nil || srv.Hits("/page/1") != 0 {
					t.Fatalf("about page %+v; /page/1 fetched %d times", byURL[srv.URL("/static/about.html")], srv.Hits("/page/1"))
				}
				return
			}
			if len(pages) != 4 || out.Partial || deep.Error != nil || deep.RenderReason != reasonTooDeep ||
				byURL[srv.URL("/page/1")].Error != nil {
				t.Fatalf("partial %v, pages %+v", out.Partial, pages)
			}
		})
	}
}

// extract_structured reads every page's data with our parser, the
// browser's HTML too: render "http" fails the deep page naming the limit;
// "auto" sends it to the browser, and the browser's HTML comes flattened
// below outerHTMLExpr's depth, so the page is read (its JSON-LD name) and,
// in a crawl, its link is followed (/page/1). The other pages are read and
// the run finishes.
func TestDeepPageExtractStructured(t *testing.T) {
	srv := fixture.New(t)
	deep := srv.URL("/static/deep.html")
	const schema = `{"type":"object","required":["name"],"properties":{"name":{"type":"string"}}}`
	cases := []struct {
		name   string
		inputs map[string]any
		total  int
	}{
		{"http", map[string]any{"urls": []string{deep, srv.URL("/products/jsonld")}, "render": "http"}, 2},
		{"auto", map[string]any{"urls": []string{deep, srv.URL("/products/jsonld")}, "render": "auto"}, 2},
		{"browser crawl", map[string]any{"startUrl": srv.URL("/static/to-deep.html"), "maxPages": 4}, 4},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			c.inputs["concurrency"] = 1
			env := schemaEnv{newEnv(t, mustJSON(t, c.inputs)), json.RawMessage(schema)}
			ctx, cancel := fixture.Context(t)
			defer cancel()
			out, err := runStructured(t, ctx, NewExtractStructured(testManager(t), nil), env)
			if err != nil {
				t.Fatal(err)
			}
			res := out.Result.(structuredResult)
			failed := 0
			if c.name == "http" {
				failed = 1
			}
			if out.Partial != (failed == 1) || res.Summary != (structuredSummary{Total: c.total, Succeeded: c.total - failed, Failed: failed}) {
				t.Fatalf("partial %v, summary %+v", out.Partial, res.Summary)
			}
			byURL := map[string]structuredEntry{}
			for _, it := range res.Items {
				byURL[it.URL] = it
				if it.URL != deep && it.Error != nil {
					t.Fatalf("%s: %v", it.URL, it.Error)
				}
			}
			d := byURL[deep]
			if c.name == "http" {
				checkTooDeep(t, deep, d.Error, `read it with render "browser"`)
				return
			}
			if d.Error != nil || d.RenderedBy != renderBrowser || d.Object["name"] != "Deep Widget" {
				t.Fatalf("deep page %+v", d)
			}
			if c.name == "browser crawl" && byURL[srv.URL("/page/1")].URL == "" {
				t.Fatalf("the deep page's link was not followed: %+v", res.Items)
			}
			items := itemsJSON(t, env.fakeEnv)
			for _, it := range items {
				if c.name == "auto" && it.URL == deep && it.RenderReason != reasonTooDeep {
					t.Fatalf("auto: deep page renderReason %q", it.RenderReason)
				}
			}
		})
	}
}
