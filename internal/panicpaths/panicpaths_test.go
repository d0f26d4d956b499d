package panicpaths

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/browsertask/browsertask/engine"
	"github.com/browsertask/browsertask/internal/fixture"
	"github.com/browsertask/browsertask/internal/rawmcp"
)

// expect is what a path's injected panic must leave behind.
type expect int

const (
	pageFails expect = iota // one page failed: EXECUTION_ERROR "internal error in <site>"
	runFails                // the run failed with it
	runGoesOn               // the run still succeeded (a loop tick, a cleanup)
	runEnds                 // the run ended (its page may fail another way)
)

// path is one goroutine-spawning path: a run that reaches site.
type path struct {
	site     string
	template string
	inputs   map[string]any
	schema   string
	want     expect
}

// name is the subtest's name.
func (p path) name() string {
	r, _ := p.inputs["render"].(string)
	if _, crawl := p.inputs["startUrl"]; crawl {
		r += "_crawl"
	}
	return fmt.Sprintf("%s/%s_%s", p.site, p.template, r)
}

// schema is extract_structured's output schema in these runs.
const schema = `{"type":"object","required":["name"],"properties":{"name":{"type":"string"}}}`

// paths lists the paths, each with the run that reaches its site. Every
// run's URLs carry the path's own query (k=N) so that no two runs have
// the same inputs (a resubmission would be answered by the earlier run).
func paths(srv *fixture.Server) []path {
	k := 0
	u := func(p string) string {
		sep := "?"
		if strings.Contains(p, "?") {
			sep = "&"
		}
		return srv.URL(fmt.Sprintf("%s%sk=%d", p, sep, k))
	}
	two := func() []string { return []string{u("/page/1"), u("/page/2")} }
	batch := func(render string) map[string]any {
		return map[string]any{"urls": two(), "render": render, "fields": map[string]any{"h": "h1"}, "perPageTimeoutMs": 5000}
	}
	crawl := func(render string) map[string]any {
		return map[string]any{"startUrl": u("/page/1?max=2"), "render": render, "maxPages": 3, "fields": map[string]any{"h": "h1"}, "perPageTimeoutMs": 5000}
	}
	shots := func() map[string]any { return map[string]any{"urls": two(), "perPageTimeoutMs": 5000} }
	structured := func(render string) map[string]any {
		return map[string]any{"urls": []string{u("/products/jsonld"), u("/products/og")}, "render": render, "perPageTimeoutMs": 5000}
	}
	// fields.html has an image: the browser pauses its request for the
	// blockResources decision (browser.decide).
	withImage := func(tpl string) map[string]any {
		in := map[string]any{"urls": []string{u("/static/fields.html"), u("/static/about.html")}, "perPageTimeoutMs": 5000}
		if tpl == "batch_extract_pages" {
			in["fields"] = map[string]any{"h": "h1"}
		}
		return in
	}
	echo := func() map[string]any { return map[string]any{"items": 2 + k} }

	var ps []path
	add := func(site, tpl string, in map[string]any, want expect) {
		p := path{site: site, template: tpl, inputs: in, want: want}
		if tpl == "extract_structured" {
			p.schema = schema
		}
		ps = append(ps, p)
		k++
	}
	// The browser is launched by the first run that needs it.
	add("browser.process", "batch_extract_pages", batch("browser"), runFails)
	for _, r := range []string{"browser", "http", "auto"} {
		add("templates.urlPool.page", "batch_extract_pages", batch(r), pageFails)
		add("templates.urlPool.page", "crawl_site", crawl(r), pageFails)
		add("templates.urlPool.page", "extract_structured", structured(r), pageFails)
	}
	add("templates.urlPool.page", "screenshot_pages", shots(), pageFails)
	add("templates.urlPool.page", "save_pdf", shots(), pageFails)
	add("templates.urlPool.page", "extract_structured", map[string]any{"startUrl": u("/products/"), "maxPages": 3, "perPageTimeoutMs": 5000}, pageFails)
	for _, r := range []string{"browser", "http"} {
		add("templates.urlPool.worker", "batch_extract_pages", batch(r), runFails)
		add("templates.urlPool.worker", "crawl_site", crawl(r), runFails)
		add("templates.urlPool.worker", "extract_structured", structured(r), runFails)
	}
	add("templates.urlPool.worker", "screenshot_pages", shots(), runFails)
	add("templates.urlPool.worker", "save_pdf", shots(), runFails)
	for _, site := range []string{"engine.run", "engine.execute"} {
		add(site, "dev_echo", echo(), runFails)
		add(site, "batch_extract_pages", batch("http"), runFails)
		add(site, "crawl_site", crawl("browser"), runFails)
		add(site, "screenshot_pages", shots(), runFails)
		add(site, "extract_structured", structured("auto"), runFails)
	}
	for _, site := range []string{"engine.claim", "engine.heartbeat", "engine.recovery", "engine.janitor"} {
		add(site, "dev_echo", echo(), runGoesOn)
	}
	add("browser.decide", "batch_extract_pages", withImage("batch_extract_pages"), pageFails)
	add("browser.decide", "extract_structured", withImage("extract_structured"), runEnds)
	auto := withImage("batch_extract_pages")
	auto["render"] = "auto"
	add("browser.decide", "batch_extract_pages", auto, runEnds)
	add("engine.claim", "batch_extract_pages", batch("http"), runGoesOn)
	add("browser.decide", "crawl_site", map[string]any{"startUrl": u("/static/fields.html"), "maxPages": 2, "fields": map[string]any{"h": "h1"}}, pageFails)
	for _, tpl := range []string{"batch_extract_pages", "screenshot_pages", "save_pdf"} {
		in := shots()
		if tpl == "batch_extract_pages" {
			in = batch("browser")
		}
		add("browser.tabEvents", tpl, in, runEnds)
		add("browser.watchDocs", tpl, shots(), runEnds)
		add("browser.Tab.release", tpl, shots(), runGoesOn)
	}
	return ps
}

// TestInjectedPanicsAreContained starts each goroutine-spawning path with
// a panic injected at its site (engine.WithFaults) and shows the process
// survives it: the page or run it belonged to ends with EXECUTION_ERROR
// "internal error in <site>" (or goes on, for a loop tick or a cleanup),
// the stack is in the log, and the engine runs the next path. Before
// engine.Go, each of these panics ended the test binary.
func TestInjectedPanicsAreContained(t *testing.T) {
	if testing.Short() {
		t.Skip("starts some 60 runs in Chromium")
	}
	fixture.NeedChromium(t)
	srv := fixture.New(t)
	d := start(t)
	ps := paths(srv)
	if n := len(ps) + 5; n < 50 { // and the live view's and MCP's paths below
		t.Fatalf("%d paths, want at least 50", n)
	}
	ran := 0 // paths run (-run may select some)
	for _, p := range ps {
		t.Run(p.name(), func(t *testing.T) { ran++; d.check(t, p) })
	}
	t.Run("browser.live.frames", func(t *testing.T) { d.liveView(t, srv, "browser.live.frames", 1) })
	t.Run("browser.live.ack", func(t *testing.T) { d.liveView(t, srv, "browser.live.ack", 2) })
	t.Run("browser.live.start", func(t *testing.T) { d.liveView(t, srv, "browser.live.start", 3) })
	t.Run("mcp.progressRelay", d.progressRelay)
	t.Run("mcp.stdio.wait", d.stdioWait)
	// Still serving: a run with no fault armed succeeds.
	if r := d.run(t, path{template: "batch_extract_pages", inputs: map[string]any{"urls": []string{srv.URL("/page/9")}, "fields": map[string]any{"h": "h1"}}}); r.Status != engine.StatusSucceeded {
		t.Fatalf("run after the faults: %s %v", r.Status, r.Error)
	}
	if n := strings.Count(d.log.String(), "internal error: panic recovered"); n < ran {
		t.Errorf("%d panic stacks logged for %d paths", n, ran)
	}
}

// run submits p's run and waits for it to end.
func (d *daemon) run(t *testing.T, p path) *engine.Run {
	t.Helper()
	in, _ := json.Marshal(p.inputs)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	req := engine.SubmitRequest{TemplateID: p.template, Inputs: in, Mode: engine.ModeAsync}
	if p.schema != "" {
		req.OutputSchema = json.RawMessage(p.schema)
	}
	sub, err := d.eng.Submit(ctx, req)
	if err != nil {
		t.Fatalf("submit %s: %v", p.template, err)
	}
	r, err := d.eng.Wait(ctx, sub.Run.RunID, nil)
	if err != nil {
		t.Fatalf("wait %s: %v", sub.Run.RunID, err)
	}
	return r
}

// check runs one path with its site armed.
func (d *daemon) check(t *testing.T, p path) {
	d.f.arm(p.site)
	defer d.f.arm("")
	r := d.run(t, p)
	// A loop's tick may come after the run: wait for it (the test's
	// deadline only ends a failing test).
	ctx, cancel := fixture.Context(t)
	defer cancel()
	select {
	case <-d.f.hit:
	case <-ctx.Done():
		t.Fatalf("run %s (%s %v) never reached %s", r.RunID, r.Status, r.Error, p.site)
	}
	internal := func(e *engine.Error) bool {
		return e != nil && e.Code == engine.ExecutionError && strings.Contains(e.Message, "internal error in "+p.site+": injected fault at "+p.site)
	}
	switch p.want {
	case runFails:
		if r.Status != engine.StatusFailed || !internal(r.Error) {
			t.Fatalf("run %s: %s %v, want failed with the internal error", r.RunID, r.Status, r.Error)
		}
	case runGoesOn:
		if r.Status != engine.StatusSucceeded {
			t.Fatalf("run %s: %s %v, want succeeded", r.RunID, r.Status, r.Error)
		}
	case runEnds:
		if !r.Status.Terminal() {
			t.Fatalf("run %s: %s", r.RunID, r.Status)
		}
	case pageFails:
		items, err := d.eng.Items(context.Background(), r.RunID)
		if err != nil {
			t.Fatal(err)
		}
		failed := 0
		for _, it := range items {
			if internal(it.Error) {
				failed++
			} else if it.Error != nil {
				t.Errorf("page %s failed otherwise: %v", it.Key, it.Error)
			}
		}
		if failed != 1 {
			t.Fatalf("run %s (%s %v): %d of %d pages failed with the internal error, want 1", r.RunID, r.Status, r.Error, failed, len(items))
		}
		// The other pages were read; a crawl whose start page failed has
		// no other page, and a run whose pages all failed fails.
		if want := engine.StatusPartialSuccess; len(items) == 1 && r.Status != engine.StatusFailed || len(items) > 1 && r.Status != want {
			t.Fatalf("run %s of %d pages: %s %v", r.RunID, len(items), r.Status, r.Error)
		}
	}
}

// progressRelay: a tools/call with a progressToken starts the progress
// relay (mcp/progress.go); its panic leaves the call answered.
func (d *daemon) progressRelay(t *testing.T) {
	sid := rawmcp.OpenSession(t, d.addr)
	d.f.arm("mcp.progressRelay")
	defer d.f.arm("")
	body := `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"run_task_template","_meta":{"progressToken":"p1"},` +
		`"arguments":{"templateId":"dev_echo","inputs":{"items":2},"options":{"mode":"sync"}}}}`
	ctx, cancel := fixture.Context(t)
	defer cancel()
	code, out, _, err := rawmcp.Post(ctx, d.addr, sid, body)
	if err != nil || code != 200 || !strings.Contains(out, `\"status\":\"succeeded\"`) && !strings.Contains(out, `"status":"succeeded"`) {
		t.Fatalf("tools/call: %d %v %.400s", code, err, out)
	}
	select {
	case <-d.f.hit:
	default:
		t.Fatal("the progress relay never started")
	}
}

// stdioWait: the stdio transport's wait goroutine panics; ServeStdio
// returns the internal error instead of the process dying.
func (d *daemon) stdioWait(t *testing.T) {
	d.f.arm("mcp.stdio.wait")
	defer d.f.arm("")
	pr, pw := io.Pipe()
	defer pw.Close()
	err := d.mcp.ServeStdio(d.ctx, pr, io.Discard)
	if err == nil || !strings.Contains(err.Error(), "internal error in mcp.stdio.wait") {
		t.Fatalf("ServeStdio = %v, want the internal error", err)
	}
	select {
	case <-d.f.hit:
	default:
		t.Fatal("the stdio wait never started")
	}
}

// liveView: a viewer watches a tab of a running run (the tab waits on
// /hang, showing /page/1); the screencast's start (browser.live.start),
// its frame loop (browser.live.frames) or a frame's acknowledgement
// (browser.live.ack) panics. The process survives, the run ends; after an ack's panic the
// frames still come.
func (d *daemon) liveView(t *testing.T, srv *fixture.Server, site string, k int) {
	in, _ := json.Marshal(map[string]any{"urls": []string{srv.URL(fmt.Sprintf("/page/1?live=%d", k)), srv.URL(fmt.Sprintf("/hang?live=%d", k))},
		"concurrency": 1, "perPageTimeoutMs": 8000, "fields": map[string]any{"h": "h1"},
		// One request of /hang per run: a retried timeout would request it
		// again and leave a stale signal on srv.Hung() for the next case.
		"retries": 0})
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	sub, err := d.eng.Submit(ctx, engine.SubmitRequest{TemplateID: "batch_extract_pages", Inputs: in, Mode: engine.ModeAsync})
	if err != nil {
		t.Fatal(err)
	}
	runID := sub.Run.RunID
	select {
	case <-srv.Hung(): // the tab now waits on /hang
	case <-ctx.Done():
		t.Fatal("the run never requested /hang")
	}
	tabs := d.bm.LiveTabs(ctx, runID)
	if len(tabs) != 1 {
		t.Fatalf("live tabs of %s: %+v", runID, tabs)
	}
	d.f.arm(site)
	defer d.f.arm("")
	frames, err := d.bm.WatchTab(d.ctx, runID, tabs[0].ID, 640, 480)
	if err != nil {
		t.Fatal(err)
	}
	select {
	case <-d.f.hit:
	case <-ctx.Done():
		t.Fatalf("%s never started", site)
	}
	if site == "browser.live.ack" {
		select {
		case <-frames:
		case <-ctx.Done():
			t.Fatal("no frame after the acknowledgement's panic")
		}
	}
	r, err := d.eng.Wait(ctx, runID, nil)
	if err != nil || r.Status != engine.StatusPartialSuccess {
		t.Fatalf("run %s: %v %v %v", runID, r.Status, r.Error, err)
	}
}
