package templates

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"sync"
	"testing"

	"github.com/browsertask/browsertask/engine"
	"github.com/browsertask/browsertask/internal/fixture"
)

// listingCrawl is the crawl of the fixture's product listing from
// /products/ in breadth-first order: path and depth.
var listingCrawl = []struct {
	path  string
	depth int
}{
	{"/products/", 0}, {"/products/jsonld", 1}, {"/products/microdata", 1}, {"/products/og", 1},
	{"/products/page2", 1}, {"/products/hinted", 2}, {"/products/noprice", 2},
}

// itemDepth is an item's depth, -1 when it has none.
func itemDepth(d *int) int {
	if d == nil {
		return -1
	}
	return *d
}

// TestExtractStructuredCrawl: startUrl crawls the product listing as
// crawl_site does (breadth first, the off-site link not followed, each
// page once) and fills, for every product page, the same object the urls
// list gives; each item says its depth; the two listing pages and the
// page without a price fail naming the missing properties.
func TestExtractStructuredCrawl(t *testing.T) {
	srv := fixture.New(t)
	m := testManager(t)
	ctx, cancel := fixture.Context(t)
	defer cancel()

	listEnv := schemaEnv{newEnv(t, mustJSON(t, map[string]any{"urls": productURLs(srv), "concurrency": 2})), json.RawMessage(structuredSchema)}
	out, err := runStructured(t, ctx, NewExtractStructured(m, nil), listEnv)
	if err != nil {
		t.Fatal(err)
	}
	byURL := map[string]structuredEntry{}
	for _, it := range out.Result.(structuredResult).Items {
		byURL[it.URL] = it
	}

	env := schemaEnv{newEnv(t, mustJSON(t, map[string]any{"startUrl": srv.URL("/products/"), "concurrency": 2})), json.RawMessage(structuredSchema)}
	out, err = runStructured(t, ctx, NewExtractStructured(m, nil), env)
	if err != nil {
		t.Fatal(err)
	}
	res := out.Result.(structuredResult)
	if !out.Partial || res.Summary != (structuredSummary{Total: 7, Succeeded: 4, Failed: 3}) {
		t.Fatalf("partial %v, summary %+v", out.Partial, res.Summary)
	}
	for i, w := range listingCrawl {
		it := res.Items[i]
		if it.URL != srv.URL(w.path) || itemDepth(it.Depth) != w.depth || it.RenderedBy != renderBrowser {
			t.Fatalf("item %d = %s at depth %d read by %q, want %s at depth %d by the browser", i, it.URL, itemDepth(it.Depth), it.RenderedBy, w.path, w.depth)
		}
		if l, listed := byURL[it.URL]; listed {
			if !reflect.DeepEqual(it.Object, l.Object) || !reflect.DeepEqual(it.Error, l.Error) {
				t.Errorf("%s: crawled object %v (error %v), listed %v (error %v)", w.path, it.Object, it.Error, l.Object, l.Error)
			}
		}
		if n := srv.Hits(w.path); n != 2 && byURL[it.URL].URL != "" || n != 1 && byURL[it.URL].URL == "" {
			t.Errorf("%s fetched %d times by both runs", w.path, n)
		}
	}
	for i, w := range wantProducts() {
		it := res.Items[[]int{1, 2, 3, 5}[i]]
		if !reflect.DeepEqual(it.Object, w) {
			t.Errorf("%s = %v, want %v", it.URL, it.Object, w)
		}
	}
	for _, i := range []int{0, 4} {
		if e := res.Items[i].Error; e == nil || e.Code != engine.StepExecutionFailed || !strings.Contains(e.Message, "price: required property is missing") {
			t.Errorf("listing page %s: error %v", res.Items[i].URL, e)
		}
	}
	items := itemsJSON(t, env.fakeEnv)
	if len(items) != 7 || itemDepth(items[6].Depth) != 2 || items[6].Frontier != nil || items[3].Sources["name"] != "og:title" {
		t.Fatalf("items.json = %+v", items)
	}
	if strings.Contains(string(env.artifacts["items.json"]), "frontier") || strings.Contains(string(env.artifacts["items.json"]), "elsewhere.test") {
		t.Fatal("items.json shows the frontier records or the off-site link")
	}
	// One checkpoint per page, numbered in the order they finished, each
	// with its frontier record: the listing added the four pages it links to.
	if len(env.items) != 7 {
		t.Fatalf("%d checkpoints, want 7", len(env.items))
	}
	var first structuredItem
	for _, it := range env.items {
		if it.Key == srv.URL("/products/") {
			_ = json.Unmarshal(it.Output, &first)
		}
	}
	want := []string{srv.URL("/products/jsonld"), srv.URL("/products/microdata"), srv.URL("/products/og"), srv.URL("/products/page2")}
	if first.Frontier == nil || !reflect.DeepEqual(first.Frontier.Found, want) || itemDepth(first.Depth) != 0 {
		t.Fatalf("checkpoint of the start page: frontier %+v, depth %d", first.Frontier, itemDepth(first.Depth))
	}
	if p := env.progress[len(env.progress)-1]; p.DoneSteps != 7 || p.TotalSteps != 7 || strings.Contains(p.Message, "more may be found") {
		t.Fatalf("last progress %+v", p)
	}
}

// TestExtractStructuredURLsOrStartURL: the caller gives exactly one of
// urls and startUrl; both, neither, a crawl limit with urls and maxPages
// over maxUrls are refused as the engine refuses them at submit (input
// schema, then Check), naming the fields and what to do.
func TestExtractStructuredURLsOrStartURL(t *testing.T) {
	tpl := NewExtractStructured(nil, nil)
	s, err := engine.CompileSchema(tpl.Info().InputSchema)
	if err != nil {
		t.Fatal(err)
	}
	p := engine.Profile{MaxURLs: 1000, MaxTabsPerSession: 20, TrustLevel: "local"}
	submit := func(in string) error {
		if err := s.Validate(json.RawMessage(in), "inputs"); err != nil {
			return err
		}
		return tpl.Check(json.RawMessage(in), p)
	}
	for _, c := range []struct {
		name, inputs string
		want         []string
	}{
		{"both", `{"urls": ["https://shop.example/p/1"], "startUrl": "https://shop.example/"}`,
			[]string{"inputs.urls and inputs.startUrl are both given", "give exactly one", "urls to read exactly those pages", "startUrl to discover the pages by crawling"}},
		{"neither", `{"instruction": "prices"}`, []string{"inputs: missing property 'startUrl'", "inputs: missing property 'urls'"}},
		{"limit with urls", `{"urls": ["https://shop.example/p/1"], "maxDepth": 2}`,
			[]string{"inputs.maxDepth applies only to a crawl from inputs.startUrl", "leave it out with inputs.urls, or give startUrl instead of urls"}},
		{"maxPages over maxUrls", `{"startUrl": "https://shop.example/", "maxPages": 1001}`,
			[]string{"inputs.maxPages: 1001 exceeds this server's maxUrls 1000"}},
		{"unknown resource type", `{"startUrl": "https://shop.example/", "blockResources": ["image", "script"]}`,
			[]string{"inputs.blockResources[1]"}},
	} {
		err := submit(c.inputs)
		var e *engine.Error
		if !errors.As(err, &e) || e.Code != engine.InvalidParameter {
			t.Errorf("%s: %v, want INVALID_PARAMETER", c.name, err)
			continue
		}
		for _, w := range c.want {
			if !strings.Contains(e.Message, w) {
				t.Errorf("%s: %q lacks %q", c.name, e.Message, w)
			}
		}
	}
	// Run refuses neither too, naming both fields and the fix (a run
	// submitted without the schema check).
	env := schemaEnv{newEnv(t, `{}`), json.RawMessage(structuredSchema)}
	_, err = tpl.Run(context.Background(), env)
	if e := engine.AsError(err); e.Code != engine.InvalidParameter || e.Message != "inputs.urls or inputs.startUrl is required; give exactly one: "+
		"urls (1..maxUrls pages to read) or startUrl (a page to crawl from, with maxPages, maxDepth, sameOrigin, include, exclude)" {
		t.Fatalf("Run without urls and startUrl: %v", err)
	}
	for _, ok := range []string{`{"urls": ["https://shop.example/p/1"]}`, `{"startUrl": "https://shop.example/", "maxPages": 1000, "maxDepth": 0, "sameOrigin": false, "include": ["*/p/*"], "exclude": ["*/cart*"]}`} {
		if err := submit(ok); err != nil {
			t.Errorf("%s refused: %v", ok, err)
		}
	}
}

// samplingPages answers every sampling question with a price of 42 and
// counts the questions by the page they were about.
type samplingPages struct {
	mu    sync.Mutex
	asked map[string]int
}

func (s *samplingPages) ask(q engine.Question) (json.RawMessage, error) {
	var req struct {
		Params struct {
			Messages []struct {
				Content struct{ Text string }
			} `json:"messages"`
		} `json:"params"`
	}
	if err := json.Unmarshal(q.Request, &req); err != nil || len(req.Params.Messages) == 0 {
		return nil, fmt.Errorf("question %s: %v", q.Request, err)
	}
	text := req.Params.Messages[0].Content.Text
	page := ""
	if i := strings.Index(text, "Page URL: "); i >= 0 {
		page, _, _ = strings.Cut(text[i+len("Page URL: "):], "\n")
	}
	s.mu.Lock()
	s.asked[page]++
	s.mu.Unlock()
	return json.RawMessage(`{"role": "assistant", "model": "client-model-1", "stopReason": "endTurn",
		"content": {"type": "text", "text": "{\"price\": 42}"}}`), nil
}

func (s *samplingPages) counts() map[string]int {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := map[string]int{}
	for k, v := range s.asked {
		out[k] = v
	}
	return out
}

// TestExtractStructuredCrawlResume: a crawl stopped after three pages
// (the start page among them, completed by the client's model) and
// resumed from its checkpoints fetches no finished page again and asks
// the model nothing again: every page is fetched once and asked about at
// most once over both attempts, and the two give the crawl a fresh run
// gives.
func TestExtractStructuredCrawlResume(t *testing.T) {
	const priceOnly = `{"type": "object", "required": ["price"], "properties": {"price": {"type": "number"}}}`
	srv := fixture.New(t)
	tpl := NewExtractStructured(testManager(t), nil)
	inputs := mustJSON(t, map[string]any{"startUrl": srv.URL("/products/"), "concurrency": 1})
	model := &samplingPages{asked: map[string]int{}}

	first := schemaEnv{newEnv(t, inputs), json.RawMessage(priceOnly)}
	first.sampling, first.ask = true, model.ask
	ctx, cancel := context.WithCancelCause(context.Background())
	defer cancel(nil)
	stop := errors.New("stopped by the test")
	first.onCheckpoint = func(n int) {
		if n == 3 {
			cancel(stop)
		}
	}
	if _, err := runStructured(t, ctx, tpl, first); !errors.Is(err, stop) {
		t.Fatalf("stopped run returned %v", err)
	}
	first.mu.Lock()
	done := append([]engine.Item(nil), first.items...)
	first.mu.Unlock()
	if len(done) != 3 || done[0].Key != srv.URL("/products/") {
		t.Fatalf("checkpoints before the stop: %d, first %v", len(done), done)
	}
	if got := model.counts(); !reflect.DeepEqual(got, map[string]int{srv.URL("/products/"): 1}) {
		t.Fatalf("questions before the stop: %v, want one about the start page", got)
	}

	second := schemaEnv{newEnv(t, inputs), json.RawMessage(priceOnly)}
	second.sampling, second.ask = true, model.ask
	second.done = map[string]engine.Item{}
	for _, it := range done {
		second.done[it.Key] = it
	}
	rctx, rcancel := fixture.Context(t)
	defer rcancel()
	out, err := runStructured(t, rctx, tpl, second)
	if err != nil {
		t.Fatal(err)
	}
	res := out.Result.(structuredResult)
	if out.Partial || res.Summary.Total != 7 || res.Summary.Succeeded != 7 || len(second.items) != 4 {
		t.Fatalf("resumed: partial %v, summary %+v, %d new checkpoints (want 4)", out.Partial, res.Summary, len(second.items))
	}
	for i, w := range listingCrawl {
		it := res.Items[i]
		if it.URL != srv.URL(w.path) || itemDepth(it.Depth) != w.depth || it.Object == nil {
			t.Errorf("item %d = %s at depth %d, object %v (error %v); want %s at depth %d", i, it.URL, itemDepth(it.Depth), it.Object, it.Error, w.path, w.depth)
		}
		if n := srv.Hits(w.path); n != 1 {
			t.Errorf("%s fetched %d times over both attempts, want once", w.path, n)
		}
	}
	for _, it := range second.items {
		if _, was := second.done[it.Key]; was {
			t.Errorf("%s checkpointed again by the resumed attempt", it.Key)
		}
	}
	// The pages without a price of their own: the two listings, the
	// hinted page (this schema has no x-selector) and the one without a
	// price, each asked about once.
	want := map[string]int{srv.URL("/products/"): 1, srv.URL("/products/page2"): 1, srv.URL("/products/hinted"): 1, srv.URL("/products/noprice"): 1}
	if got := model.counts(); !reflect.DeepEqual(got, want) {
		t.Fatalf("questions over both attempts: %v, want %v", got, want)
	}
	if res.Items[0].Object["price"] != 42.0 || res.Items[1].Object["price"] != 129.9 {
		t.Fatalf("objects: start page %v, first product %v", res.Items[0].Object, res.Items[1].Object)
	}
}

// TestExtractStructuredBlockResources: the browser loads no image, font
// or media of the pages it reads by default, and everything with
// blockResources [] (media: when the tab was visible); the heading is
// the same.
func TestExtractStructuredBlockResources(t *testing.T) {
	srv := fixture.New(t)
	const schema = `{"type": "object", "required": ["heading"], "properties": {"heading": {"type": "string", "x-selector": "#name"},
		"visibility": {"type": "string", "x-selector": "html", "x-attr": "data-visibility"}}}`
	all := len(fixture.AssetPaths(0)["image"])
	for i, c := range []struct {
		name  string
		input any
		want  assetWant
	}{
		{"default", nil, assetWant{images: 0, fonts: 0, stylesheets: 1, mediaBlocked: true}},
		{"none", []string{}, assetWant{images: all, fonts: 1, stylesheets: 1}},
	} {
		n := 300 + i
		in := map[string]any{"urls": []string{srv.URL(fmt.Sprintf("/assets/page/%d", n))}, "waitFor": assetsSettled}
		if c.input != nil {
			in["blockResources"] = c.input
		}
		env := schemaEnv{newEnv(t, mustJSON(t, in)), json.RawMessage(schema)}
		ctx, cancel := fixture.Context(t)
		out, err := runStructured(t, ctx, NewExtractStructured(testManager(t), nil), env)
		cancel()
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		got := out.Result.(structuredResult).Items[0].Object
		if got["heading"] != fmt.Sprintf("Assets %d", n) {
			t.Fatalf("%s: object %v", c.name, got)
		}
		checkAssetRequests(t, srv, "extract_structured "+c.name, n, got["visibility"] == "visible", c.want)
	}
}

// TestExtractStructuredRenderAuto: render "auto" gives the objects render
// "browser" gives. Over the fixture's host (127.0.0.1) the first two
// /products/ pages are rendered both ways and match, the others are
// served over HTTP only; on a second host (localhost) the page whose
// product data a script writes sends its group (/products/) to the
// browser, naming itself, so the group's next page is read there without
// an HTTP fetch.
func TestExtractStructuredRenderAuto(t *testing.T) {
	srv := fixture.New(t)
	m := testManager(t)
	local := strings.Replace(srv.URL(""), "127.0.0.1", "localhost", 1)
	urls := append(productURLs(srv), local+"/products/scripted", local+"/products/og")
	ctx, cancel := fixture.Context(t)
	defer cancel()

	bEnv := schemaEnv{newEnv(t, mustJSON(t, map[string]any{"urls": urls, "concurrency": 1})), json.RawMessage(structuredSchema)}
	out, err := runStructured(t, ctx, NewExtractStructured(m, nil), bEnv)
	if err != nil {
		t.Fatal(err)
	}
	browserRes := out.Result.(structuredResult)
	hitsBefore := map[string]int{}
	for _, u := range urls {
		hitsBefore[u] = srv.HostHits(hostOf(u), pathOf(u))
	}

	env := schemaEnv{newEnv(t, mustJSON(t, map[string]any{"urls": urls, "concurrency": 1, "render": "auto"})), json.RawMessage(structuredSchema)}
	out, err = runStructured(t, ctx, NewExtractStructured(m, nil), env)
	if err != nil {
		t.Fatal(err)
	}
	res := out.Result.(structuredResult)
	if res.Summary != browserRes.Summary || res.Summary != (structuredSummary{Total: 7, Succeeded: 6, Failed: 1}) {
		t.Fatalf("summary auto %+v, browser %+v", res.Summary, browserRes.Summary)
	}
	if lamp := browserRes.Items[5].Object; !reflect.DeepEqual(lamp, map[string]any{"name": "Night Lamp", "price": 24.5, "currency": "EUR", "rating": 4.1, "inStock": true}) {
		t.Fatalf("the scripted page in the browser: %v (error %v)", lamp, browserRes.Items[5].Error)
	}
	for i := range urls {
		if !reflect.DeepEqual(res.Items[i].Object, browserRes.Items[i].Object) {
			t.Errorf("%s: auto %v (error %v), browser %v", urls[i], res.Items[i].Object, res.Items[i].Error, browserRes.Items[i].Object)
		}
	}
	items := itemsJSON(t, env.fakeEnv)
	type how struct{ by, reason string }
	switched := reasonGroup + "/products/" + reasonNeedsJS + "/products/scripted: "
	want := []how{{"browser", "sample"}, {"browser", "sample"}, {"http", ""}, {"http", ""}, {"http", ""}, {"browser", switched}, {"browser", switched}}
	// Requests per page in the auto run: HTTP and the browser for a
	// sample, one for the others (the switched host's page: the browser).
	wantHits := []int{2, 2, 1, 1, 1, 2, 1}
	for i, w := range want {
		it := items[i]
		if it.RenderedBy != w.by || !strings.HasPrefix(it.RenderReason, w.reason) || (w.reason == "" && it.RenderReason != "") {
			t.Errorf("%s: renderedBy %q, renderReason %q; want %q, %q…", it.URL, it.RenderedBy, it.RenderReason, w.by, w.reason)
		}
		if n := srv.HostHits(hostOf(urls[i]), pathOf(urls[i])) - hitsBefore[urls[i]]; n != wantHits[i] {
			t.Errorf("%s requested %d times by the auto run, want %d", urls[i], n, wantHits[i])
		}
	}
	if r := items[5].RenderReason; !strings.Contains(r, "properties only the browser filled (") || !strings.Contains(r, "price") {
		t.Errorf("the scripted page's reason %q does not name the properties only the browser filled", r)
	}
	if items[6].RenderReason != items[5].RenderReason {
		t.Errorf("the switched group's next page: reason %q, want the group's %q", items[6].RenderReason, items[5].RenderReason)
	}
}

// hostOf and pathOf split a fixture URL for Server.HostHits.
func hostOf(u string) string {
	h := strings.TrimPrefix(u, "http://")
	h, _, _ = strings.Cut(h, "/")
	h, _, _ = strings.Cut(h, ":")
	return h
}

func pathOf(u string) string {
	p := strings.TrimPrefix(u, "http://")
	if i := strings.IndexByte(p, '/'); i >= 0 {
		return p[i:]
	}
	return "/"
}
