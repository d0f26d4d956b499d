package templates

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"io"
	"strings"

	"github.com/browsertask/browsertask/browser"
	"github.com/browsertask/browsertask/engine"
	"github.com/browsertask/browsertask/internal/extract/fetch"
	"github.com/browsertask/browsertask/internal/extract/modelfill"
	"github.com/browsertask/browsertask/internal/extract/page"
	"github.com/browsertask/browsertask/internal/extract/structured"
)

// structuredItem is one page of extract_structured: its checkpointed
// output and its entry in items.json.
type structuredItem struct {
	URL        string `json:"url"`
	FinalURL   string `json:"finalUrl"`
	HTTPStatus int    `json:"httpStatus"`
	// Object is the page's object, valid against options.outputSchema;
	// null when the page failed.
	Object map[string]any `json:"object"`
	// Sources maps each filled property's dot path to where its value
	// came from ("json-ld:Product.offers.price", "og:title",
	// "model:NAME"…).
	Sources map[string]string `json:"sources"`
	// Missing lists the properties nothing filled (optional ones on a
	// page that succeeded).
	Missing []string `json:"missing,omitempty"`
	// Partial is what was filled on a page whose object did not validate.
	Partial map[string]any `json:"partial,omitempty"`
	// Notes explain some misses (a value found that did not coerce).
	Notes []string `json:"notes,omitempty"`
	// ModelCalls, PromptTokens and CompletionTokens count this page's
	// questions to the model.
	ModelCalls       int   `json:"modelCalls,omitempty"`
	PromptTokens     int64 `json:"promptTokens,omitempty"`
	CompletionTokens int64 `json:"completionTokens,omitempty"`
	// Depth is the page's link hops from startUrl (a crawl only).
	Depth *int `json:"depth,omitempty"`
	// RenderedBy says how the page was read ("browser" or "http");
	// RenderReason, with render "auto", why the browser read it
	// (render_auto.go's reasons).
	RenderedBy   string        `json:"renderedBy,omitempty"`
	RenderReason string        `json:"renderReason,omitempty"`
	Error        *engine.Error `json:"error"`
	// SchemaHash identifies the options.outputSchema the object was made
	// for, in checkpoints only (see schemaScopedEnv); items.json omits it.
	SchemaHash string `json:"schemaHash,omitempty"`
	// Frontier is what the page added to a crawl's frontier
	// (crawl_frontier.go), in checkpoints only; items.json omits it.
	Frontier *crawlRecord `json:"frontier,omitempty"`
	// links are the page's links, for a crawl's frontier (not stored:
	// the frontier record keeps the ones it added).
	links []page.Link
	// pageContent is what inputs.formats adds (formats_structured.go).
	pageContent
}

// schemaHash is a short fingerprint of a run's options.outputSchema (the
// engine stores it compacted, so equal schemas give equal hashes).
func schemaHash(schema json.RawMessage) string {
	sum := sha256.Sum256(bytes.TrimSpace(schema))
	return hex.EncodeToString(sum[:8])
}

// schemaScopedEnv hides the checkpoints of earlier attempts made for
// another options.outputSchema. The engine continues a stopped run with the
// same inputs (ContinuesEarlierRuns) whatever its outputSchema, and an
// object made for one schema must not be reported for another: those pages
// are done again (their checkpoints are overwritten, index by index).
type schemaScopedEnv struct {
	engine.Env
	hash string
}

// FinishedItems returns the earlier checkpoints made for this run's schema.
func (e schemaScopedEnv) FinishedItems() map[string]engine.Item {
	prior := e.Env.FinishedItems()
	out := make(map[string]engine.Item, len(prior))
	for k, it := range prior {
		if madeFor(it, e.hash) {
			out[k] = it
		}
	}
	return out
}

// madeFor reports whether checkpoint it was made for the schema with hash.
func madeFor(it engine.Item, hash string) bool {
	var out struct {
		SchemaHash string `json:"schemaHash"`
	}
	return json.Unmarshal(it.Output, &out) == nil && out.SchemaHash == hash
}

// structuredEntry is one page in the run's result.
type structuredEntry struct {
	URL        string         `json:"url"`
	Depth      *int           `json:"depth,omitempty"`
	RenderedBy string         `json:"renderedBy,omitempty"`
	Object     map[string]any `json:"object"`
	Error      *engine.Error  `json:"error"`
	// pageContent is what inputs.formats adds, cut at maxChars.
	pageContent
}

// structuredSummary counts the pages and the model's usage.
type structuredSummary struct {
	Total            int   `json:"total"`
	Succeeded        int   `json:"succeeded"`
	Failed           int   `json:"failed"`
	PromptTokens     int64 `json:"promptTokens"`
	CompletionTokens int64 `json:"completionTokens"`
	ModelCalls       int   `json:"modelCalls"`
}

// structuredResult is extract_structured's result.
type structuredResult struct {
	Summary          structuredSummary `json:"summary"`
	Items            []structuredEntry `json:"items"`
	ArtifactID       string            `json:"artifactId"`
	NDJSONArtifactID string            `json:"ndjsonArtifactId,omitempty"`
	// MarkdownArtifactID names pages.md (format markdown).
	MarkdownArtifactID string `json:"markdownArtifactId,omitempty"`
}

// structuredRun is one execution of extract_structured.
type structuredRun struct {
	in     *structuredInputs
	schema *structured.Schema
	model  modelfill.Sampler
	hash   string // schemaHash of the run's outputSchema
	// links: collect each page's links (a crawl's frontier).
	links bool
	// env stores the screenshots of format screenshot.
	env engine.Env
}

// CheckOutputSchema holds options.outputSchema at submit to the rules Run
// compiles it by (compileOutputSchema), so that a schema Run would refuse,
// such as {"type":"string"}, is INVALID_PARAMETER before a run exists
// (engine.OutputSchemaChecker).
func (t *ExtractStructured) CheckOutputSchema(schema json.RawMessage) error {
	_, err := compileOutputSchema(schema)
	return err
}

// compileOutputSchema is the one compile of options.outputSchema, at
// submit and at run time. Errors: INVALID_PARAMETER naming
// options.outputSchema.
func compileOutputSchema(raw json.RawMessage) (*structured.Schema, error) {
	schema, err := structured.Compile(raw, "options.outputSchema")
	if err != nil {
		return nil, engine.Errorf(engine.InvalidParameter, "%v", err).
			WithDetails(map[string]any{"field": "options.outputSchema"})
	}
	return schema, nil
}

// Run fills options.outputSchema from every page — the URLs of inputs.urls,
// or the pages a crawl from inputs.startUrl finds (runCrawl) — not
// checkpointed by an earlier attempt, with `concurrency` workers (urlPool:
// one checkpoint per URL, so a resumed run neither fetches a finished page
// nor sends it to the model again), then writes items.json and
// items.ndjson. Errors: INVALID_PARAMETER when options.outputSchema is
// absent or describes no object with properties, STEP_EXECUTION_FAILED
// when every page failed (items.json is still written), EXECUTION_ERROR
// when the browser is lost, ctx's cause once ctx ends.
func (t *ExtractStructured) Run(ctx context.Context, env engine.Env) (*engine.Outcome, error) {
	in, err := parseStructuredInputs(env.Inputs())
	if err != nil {
		return nil, err
	}
	schema, err := compileOutputSchema(env.OutputSchema())
	if err != nil {
		return nil, err
	}
	r := &structuredRun{in: in, schema: schema, model: runModel(t.model, env), hash: schemaHash(env.OutputSchema()), links: in.crawling(), env: env}
	scoped := schemaScopedEnv{Env: env, hash: r.hash}
	pool := &urlPool{env: scoped, slim: true, setup: in.resourceBlocking.setup(), cutChars: in.resultCut(),
		open: func() (*browser.Session, error) { return openSession(ctx, t.b, env, "extract_structured") }}
	release, err := t.readPagesWith(ctx, env, r, pool)
	if err != nil {
		return nil, err
	}
	defer release()
	if in.crawling() {
		return t.runCrawl(ctx, env, r, pool)
	}
	urls := dedupe(in.URLs)
	if err := pool.runList(ctx, urls, in.Concurrency); err != nil {
		return nil, err
	}
	items := make([]*structuredItem, len(urls))
	for i, u := range urls {
		items[i] = restoreStructured(u, pool.outputs[i], pool.errs[i])
	}
	return finishStructured(ctx, env, r, items)
}

// readPagesWith makes pool.work read pages the way inputs.render says:
// in the browser (one of the pool's tabs), over HTTP, or with render
// "auto" (extract_structured_auto.go); in a named session always in the
// browser. The returned function releases what it opened (Run defers
// it). Errors: EXECUTION_ERROR (the HTTP client cannot be made).
func (t *ExtractStructured) readPagesWith(ctx context.Context, env engine.Env, r *structuredRun, pool *urlPool) (func(), error) {
	named := inBrowserState(t.b, env)
	pool.work = func(ctx context.Context, tb *browser.Tab, _ int, url string) (pageDone, error) {
		out, fatal := r.page(ctx, tb, url)
		if named && r.in.Render == renderAuto {
			out.RenderReason = "named session"
		}
		return pageDone{out: out, failure: out.Error}, fatal
	}
	if named || (r.in.Render != renderHTTP && r.in.Render != renderAuto) {
		return func() {}, nil
	}
	f, err := fetch.New(fetch.Options{Policy: urlPolicy(t.b, env.Profile()), Timeout: timeoutDur(r.in.PerPageTimeoutMs)})
	if err != nil {
		return nil, engine.Wrap(engine.ExecutionError, err, "HTTP client: %v", err)
	}
	pool.noTab = true
	if r.in.Render == renderHTTP {
		pool.work = func(ctx context.Context, _ *browser.Tab, _ int, url string) (pageDone, error) {
			out := r.fetched(ctx, f, url)
			return pageDone{out: out, failure: out.Error}, nil
		}
		return f.Close, nil
	}
	a := newStructuredAuto(r, f, pool.lazyTabs(ctx))
	a.hosts.restore(pool.env.FinishedItems())
	pool.work = func(ctx context.Context, _ *browser.Tab, _ int, url string) (pageDone, error) {
		out, fatal := a.page(ctx, url)
		if fatal != nil {
			return pageDone{}, fatal
		}
		return pageDone{out: out, failure: out.Error}, nil
	}
	return func() { a.tabs.close(); f.Close() }, nil
}

// runModel is the model a run asks for missing properties: the configured
// endpoint (--model-url) when there is one, else the model of the MCP
// client that submitted the run when it declared sampling, else none.
// Every answered question is counted in the run's metrics.
func runModel(configured modelfill.Sampler, env engine.Env) modelfill.Sampler {
	s := configured
	if s == nil && env.ClientCanSample() {
		s = modelfill.NewClientSampler(env)
	}
	if s == nil {
		return nil
	}
	return countingSampler{s: s, env: env}
}

// countingSampler adds each answer's cost to the run's metrics.
type countingSampler struct {
	s   modelfill.Sampler
	env engine.Env
}

// Sample asks s and counts the answer.
func (c countingSampler) Sample(ctx context.Context, req modelfill.SampleRequest) (modelfill.SampleResponse, error) {
	resp, err := c.s.Sample(ctx, req)
	if err == nil {
		c.env.CountModelUsage(engine.ModelUsage{Calls: 1, PromptTokens: resp.PromptTokens, CompletionTokens: resp.CompletionTokens})
	}
	return resp, err
}

// newItem starts the item of url read by how ("browser" or "http").
func (r *structuredRun) newItem(url, how string) *structuredItem {
	return &structuredItem{URL: url, Sources: map[string]string{}, SchemaHash: r.hash, RenderedBy: how}
}

// page loads one URL in tab tb and fills the schema from it: the page's
// own data first, then the model for what is missing (when there is one).
// The page's problems are in the returned item's Error; a non-nil error
// is fatal for the run (browser lost).
func (r *structuredRun) page(ctx context.Context, tb *browser.Tab, url string) (*structuredItem, error) {
	out, pp, fatal := r.browse(ctx, tb, url)
	if fatal != nil || pp == nil {
		return out, fatal
	}
	return r.complete(ctx, out, pp), nil
}

// browse loads one URL in tab tb and reads what the page's own data
// gives (no model yet): the parsed page, or nil with the page's problem
// in the item's Error; a non-nil error is fatal for the run.
func (r *structuredRun) browse(ctx context.Context, tb *browser.Tab, url string) (*structuredItem, *parsedPage, error) {
	out := r.newItem(url, renderBrowser)
	lp, fatal := loadPage(ctx, tb, url, r.in.WaitFor, r.in.PerPageTimeoutMs)
	out.FinalURL, out.HTTPStatus, out.Error = lp.nav.FinalURL, lp.nav.Status, lp.failure
	if fatal != nil || lp.failure != nil {
		return out, nil, fatal
	}
	doc, err := readOuterHTML(ctx, tb, url, r.in.PerPageTimeoutMs, r.schema.TextSelectors())
	if err != nil {
		e := engine.AsError(err)
		if e.Code == engine.ExecutionError && !engine.IsInternal(e) && ctx.Err() == nil {
			return out, nil, e
		}
		out.Error = e
		return out, nil, nil
	}
	base := out.FinalURL
	if base == "" {
		base = url
	}
	if e := browserContent(ctx, r.env, tb, &r.in.pageFormats, &out.pageContent, url, base, r.in.PerPageTimeoutMs); e != nil {
		out.Error = e
		return out, nil, nil
	}
	return out, r.parse(out, doc), nil
}

// fetched fetches one URL over HTTP (render "http") and fills the schema
// from it as page does; the page's problems are in the item's Error.
func (r *structuredRun) fetched(ctx context.Context, f *fetch.Fetcher, url string) *structuredItem {
	out, pg := r.fetch(ctx, f, url)
	if out.Error != nil || pg == nil {
		return out
	}
	d, err := f.Document(ctx, pg) // with its same-origin style sheets
	if err != nil {
		out.Error = parseFailure(out.URL, err, adviceBrowser)
		return out
	}
	pp := r.parseDoc(out, d)
	if pp == nil {
		return out
	}
	return r.complete(ctx, out, pp)
}

// fetch fetches one URL over HTTP: the item with the page's problem in
// its Error (HTTP >= 400, not HTML, a failed fetch) and the page as
// fetched (nil when the fetch failed or ctx ended).
func (r *structuredRun) fetch(ctx context.Context, f *fetch.Fetcher, url string) (*structuredItem, *fetch.Page) {
	out := r.newItem(url, renderHTTP)
	pg, err := f.Fetch(ctx, url)
	if err != nil {
		if ctx.Err() == nil {
			out.Error = engine.AsError(err)
		}
		return out, nil
	}
	out.FinalURL, out.HTTPStatus = pg.URL, pg.Status
	switch {
	case pg.Status >= 400:
		out.Error = engine.Errorf(engine.StepExecutionFailed, "%s answered HTTP %d %s", url, pg.Status, pg.StatusText).
			WithDetails(map[string]any{"url": url, "httpStatus": pg.Status})
	case !pg.IsHTML():
		out.Error = engine.Errorf(engine.StepExecutionFailed, "%s answered %s, not an HTML page; read it with render \"browser\"", url, pg.ContentType).
			WithDetails(map[string]any{"url": url, "contentType": pg.ContentType})
	default:
		addContent(&out.pageContent, &r.in.pageFormats, []byte(pg.Body), pg.URL)
	}
	return out, pg
}

// parsedPage is a page's HTML parsed, what its own data gave for the
// schema and, in a crawl, its links.
type parsedPage struct {
	page  *structured.Page
	found *structured.Result
	links []page.Link
}

// parse reads the schema's properties from the browser's HTML doc
// (outerHTMLExpr's, with the texts of the x-selectors' elements; no
// model), and its links when the run collects them. HTML our parser
// refuses (parse_failure.go) gives nil, with the page's error in out.
func (r *structuredRun) parse(out *structuredItem, doc string) *parsedPage {
	base := out.FinalURL
	if base == "" {
		base = out.URL
	}
	d, err := page.ParseString(doc, base)
	if err != nil {
		out.Error = parseFailure(out.URL, err, "") // outerHTMLExpr flattened it already
		return nil
	}
	d.TakeBrowserTexts()
	return r.parseDoc(out, d)
}

// parseDoc reads the schema's properties from a parsed page (no model),
// and its links when the run collects them.
func (r *structuredRun) parseDoc(out *structuredItem, d *page.Document) *parsedPage {
	base := out.FinalURL
	if base == "" {
		base = out.URL
	}
	pp := &parsedPage{page: structured.FromDocument(d, base)}
	pp.found = r.schema.Extract(pp.page)
	if r.links {
		pp.links = d.Links(crawlLinksRead) // the frontier reads them all (links_cap.go)
	}
	return pp
}

// complete fills out from the parsed page: what the page's own data gave,
// then the model for what is missing (when there is one), and validates
// the object.
func (r *structuredRun) complete(ctx context.Context, out *structuredItem, pp *parsedPage) *structuredItem {
	url := out.URL
	base := out.FinalURL
	if base == "" {
		base = url
	}
	out.links = pp.links
	page, found := pp.page, pp.found
	obj, missing := found.Object, found.Missing
	for p, src := range found.Sources {
		out.Sources[p] = src
	}
	out.Notes = found.Notes
	var modelProblems []string
	if len(missing) > 0 && r.model != nil {
		filled, err := modelfill.Fill(ctx, r.model, modelfill.Request{
			Schema: r.schema, Known: obj, Missing: missing,
			PageText: r.modelText(out, page), PageURL: base, Instruction: r.in.Instruction,
		})
		if err != nil {
			if ctx.Err() != nil {
				return out // cut off: not checkpointed
			}
			out.Partial, out.Missing = obj, missing
			out.Error = engine.Errorf(engine.StepExecutionFailed, "%s: asking the model for %s failed: %v", url, strings.Join(missing, ", "), err).
				WithDetails(map[string]any{"url": url, "stage": "model", "missing": missing})
			return out
		}
		obj, missing, modelProblems = filled.Object, filled.Missing, filled.Problems
		for p, src := range filled.Sources {
			out.Sources[p] = src
		}
		out.ModelCalls, out.PromptTokens, out.CompletionTokens = filled.Calls, filled.PromptTokens, filled.CompletionTokens
	}
	out.Missing = missing
	// found.Errors (an x-selector text holding several values) stay
	// problems whatever the model gave: the fix is in the schema.
	problems := r.schema.Problems(obj, found.Errors)
	if len(problems) == 0 {
		out.Object = obj
		return out
	}
	out.Partial = obj
	details := map[string]any{"url": url, "problems": problems}
	if len(missing) > 0 {
		details["missing"] = missing
	}
	if len(modelProblems) > 0 {
		details["modelProblems"] = modelProblems
	}
	hint := "; no model is configured to fill missing properties (--model-url, or a client that declares MCP sampling), or add an x-selector hint for them to options.outputSchema"
	switch {
	case len(missing) == 0 && len(found.Errors) > 0:
		hint = ""
	case r.model != nil:
		hint = "; neither the page's data nor the model gave them"
	}
	if notes := missingNotes(out.Notes, missing); len(notes) > 0 {
		details["notes"] = notes
		hint += " (" + strings.Join(notes, "; ") + ")"
	}
	out.Error = engine.Errorf(engine.StepExecutionFailed, "%s: the object does not match options.outputSchema: %s%s", url, strings.Join(problems, "; "), hint).
		WithDetails(details)
	return out
}

// readOuterHTML returns the loaded document's HTML within timeoutMs,
// with the text of the elements sels match marked (outerHTMLExpr).
// Errors: as extractFailure sorts them (NAVIGATION_TIMEOUT,
// STEP_EXECUTION_FAILED for the page; EXECUTION_ERROR when the browser is
// gone).
func readOuterHTML(ctx context.Context, tb *browser.Tab, url string, timeoutMs int, sels []string) (string, error) {
	xctx, cancel := context.WithTimeout(ctx, timeoutDur(timeoutMs))
	defer cancel()
	raw, err := tb.Eval(xctx, outerHTMLExpr(sels))
	if err != nil {
		return "", extractFailure(ctx, xctx, err, url, timeoutMs)
	}
	var doc string
	if err := json.Unmarshal(raw, &doc); err != nil {
		return "", engine.Errorf(engine.StepExecutionFailed, "reading %s failed: the document's HTML came back as %.40s", url, raw).
			WithDetails(map[string]any{"url": url, "stage": "extract"})
	}
	return doc, nil
}

// restoreStructured decodes a page's checkpointed output (this attempt's
// or an earlier one's); pageErr is the item's error, kept when the output
// has none.
func restoreStructured(url string, raw json.RawMessage, pageErr *engine.Error) *structuredItem {
	it := &structuredItem{}
	if len(raw) == 0 || json.Unmarshal(raw, it) != nil || it.URL == "" {
		it = &structuredItem{URL: url}
	}
	if it.Sources == nil {
		it.Sources = map[string]string{}
	}
	if it.Error == nil {
		it.Error = pageErr
	}
	if it.Error != nil {
		it.Object = nil
	}
	return it
}

// finishStructured writes items.json (every page, in input order or a
// crawl's breadth-first order, earlier attempts included) and
// items.ndjson (the objects of the pages that succeeded) and builds the
// outcome. Errors: STEP_EXECUTION_FAILED when no
// page succeeded, EXECUTION_ERROR when an artifact cannot be stored, ctx's
// cause when ctx ended.
func finishStructured(ctx context.Context, env engine.Env, r *structuredRun, items []*structuredItem) (*engine.Outcome, error) {
	res := structuredResult{Items: make([]structuredEntry, 0, len(items))}
	var tally pageTally
	objects := 0
	for _, it := range items {
		res.Items = append(res.Items, structuredEntry{URL: it.URL, Depth: it.Depth, RenderedBy: it.RenderedBy, Object: it.Object, Error: it.Error, pageContent: it.pageContent})
		tally.count(it.Error, map[string]any{"url": it.URL})
		res.Summary.ModelCalls += it.ModelCalls
		res.Summary.PromptTokens += it.PromptTokens
		res.Summary.CompletionTokens += it.CompletionTokens
		if it.Error == nil {
			objects++
		}
	}
	res.Summary.Total, res.Summary.Succeeded, res.Summary.Failed = tally.Total, tally.Succeeded, tally.Failed
	id, err := putItemsJSON(ctx, env, items)
	if err != nil {
		return nil, err
	}
	res.ArtifactID = id
	if objects > 0 {
		// One Write per line (the engine redacts a run's secrets per Write).
		nid, err := env.PutArtifactStream(ctx, "items.ndjson", "application/x-ndjson", func(w io.Writer) error {
			for _, it := range items {
				if it.Error != nil {
					continue
				}
				line, err := json.Marshal(it.Object)
				if err != nil {
					return engine.Wrap(engine.ExecutionError, err, "encode the object of %s: %v", it.URL, err)
				}
				if _, err := w.Write(append(line, '\n')); err != nil {
					return engine.Wrap(engine.ExecutionError, err, "write items.ndjson: %v", err)
				}
			}
			return nil
		})
		if err != nil {
			if ctx.Err() != nil {
				return nil, context.Cause(ctx)
			}
			return nil, err
		}
		res.NDJSONArtifactID = nid
	}
	if r.in.has(formatMarkdown) {
		if res.MarkdownArtifactID, err = r.pagesMD(ctx, env); err != nil {
			return nil, err
		}
	}
	return tally.outcome(res, map[string]any{"artifactId": id, "modelCalls": res.Summary.ModelCalls,
		"promptTokens": res.Summary.PromptTokens, "completionTokens": res.Summary.CompletionTokens})
}

// putItemsJSON stores items as the run's items.json artifact and returns
// its id. Errors: EXECUTION_ERROR, ctx's cause when ctx ended.
func putItemsJSON(ctx context.Context, env engine.Env, items []*structuredItem) (string, error) {
	// Written item by item (pages_stream.go): the file is never held
	// whole in memory.
	return streamPages(ctx, env, "items.json", func(add func(any) error) error {
		for _, it := range items {
			it.SchemaHash, it.Frontier = "", nil
			if err := add(it); err != nil {
				return err
			}
		}
		return nil
	})
}

// Keep stores the pages a stopped run finished as items.json, in
// checkpoint order, failed pages with their error (engine.Keeper);
// checkpoints continued from a run with another outputSchema and not done
// again are left out.
func (t *ExtractStructured) Keep(ctx context.Context, env engine.Env, items []engine.Item) (string, string, error) {
	hash := schemaHash(env.OutputSchema())
	out := make([]*structuredItem, 0, len(items))
	// items come without their outputs (engine.Keeper): read them back.
	err := env.EachItem(ctx, engine.ItemsQuery{After: -1}, func(it engine.Item) error {
		if madeFor(it, hash) {
			out = append(out, restoreStructured(it.Key, it.Output, itemError(it)))
		}
		return nil
	})
	if err != nil {
		return "", "", err
	}
	id, err := putItemsJSON(ctx, env, out)
	if in, perr := parseStructuredInputs(env.Inputs()); err == nil && perr == nil && in.has(formatMarkdown) {
		_, err = (&structuredRun{in: in, hash: hash}).pagesMD(ctx, env)
	}
	return id, "items.json", err
}
