package templates

import (
	"context"
	"errors"
	"fmt"
	"os"
	"reflect"
	"regexp"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/browsertask/browsertask/engine"
	"github.com/browsertask/browsertask/internal/fixture"
)

// autoSamples is how many of a static group's n pages render "auto" also
// renders in the browser when the group is its host's first: the first
// autoFirstPages, then every autoSampleEvery-th until autoEnoughSamples.
func autoSamples(n int) int {
	if n <= autoFirstPages {
		return n
	}
	return min(autoFirstPages+(n-autoFirstPages)/autoSampleEvery, autoEnoughSamples)
}

// Reasons the mixed site's JavaScript hosts give (fixture.Mixed: the app
// shell's script builds the page; the hybrid host's price and tags come
// from a script), with the page that switched the group written
// "/mixed/*" (samplePage).
const (
	appReason    = reasonGroup + "/mixed/" + reasonNeedsJS + "/mixed/*: fields differ (name, next, price, sku, tags); title differs"
	hybridReason = reasonGroup + "/mixed/" + reasonNeedsJS + "/mixed/*: fields differ (price, tags)"
)

// samplePage writes the page a group reason names as "/mixed/*": which
// of a group's first samples resolves first depends on timing.
func samplePage(reason string) string {
	return mixedPagePath.ReplaceAllString(reason, "/mixed/*:")
}

var mixedPagePath = regexp.MustCompile(`/mixed/[0-9]+:`)

// mixedHost returns the mixed site's host of url.
func mixedHost(t *testing.T, m *fixture.Mixed, url string) fixture.MixedHost {
	t.Helper()
	for _, h := range m.Hosts() {
		if strings.HasPrefix(url, h.Base+"/") {
			return h
		}
	}
	t.Fatalf("%s is on none of the mixed hosts", url)
	return fixture.MixedHost{}
}

// TestRenderAutoMixedSite: batch_extract_pages render "auto" on the mixed
// site (two static hosts, an app shell and a host whose price a script
// fills in) gives every page the fields, title, final URL and status of a
// browser-only run; the JavaScript hosts' pages are all read by the
// browser with their group's reason, naming the page and the fields that
// proved it (the app shell's noscript alone switches nothing: its page is
// compared as a sample, and the fields only the browser has switch the
// group); each static host has exactly
// autoSamples(n) pages rendered in the browser ("sample"), the others over
// HTTP; the server sees each static page requested by the browser only
// when it was sampled, every page over HTTP at most once, and no page of a
// JavaScript host over HTTP once the host was switched (at most the pages
// in flight then).
func TestRenderAutoMixedSite(t *testing.T) {
	const perHost, conc = 25, 4
	m := fixture.NewMixed(t)
	urls := m.URLs(perHost)
	inputs := func(render string) string {
		return mustJSON(t, map[string]any{"urls": urls, "render": render, "fields": fixture.MixedFields(),
			"includeText": false, "concurrency": conc})
	}
	autoEnv := newEnv(t, inputs("auto"))
	autoOut, err := runBatch(t, autoEnv)
	if err != nil {
		t.Fatal(err)
	}
	type counts struct{ overHTTP, byBrowser int }
	fetched := map[string]counts{}
	for _, u := range urls {
		h := mixedHost(t, m, u)
		c := counts{}
		c.overHTTP, c.byBrowser = m.Fetches(h.Base, strings.TrimPrefix(u, h.Base))
		fetched[u] = c
	}
	browserEnv := newEnv(t, inputs("browser"))
	browserOut, err := runBatch(t, browserEnv)
	if err != nil {
		t.Fatal(err)
	}
	got, want := autoOut.Result.(batchResult), browserOut.Result.(batchResult)
	if len(got.Pages) != len(urls) || len(want.Pages) != len(urls) || got.Summary != want.Summary || got.Summary.Failed != 0 {
		t.Fatalf("auto %+v, browser %+v", got.Summary, want.Summary)
	}

	mismatches := 0
	byHost := map[string]map[string]int{} // base → renderedBy/renderReason → pages
	httpFetchesOfJSHosts := map[string]int{}
	for i, g := range got.Pages {
		w := want.Pages[i]
		if g.URL != w.URL || g.FinalURL != w.FinalURL || g.HTTPStatus != w.HTTPStatus || g.Title != w.Title || !reflect.DeepEqual(g.Fields, w.Fields) {
			mismatches++
			t.Errorf("page %s:\nauto    %s\nbrowser %s", g.URL, show(g), show(w))
		}
		if w.Fields["name"] == nil || w.Fields["price"] == nil {
			t.Fatalf("the browser's page %s has no fields: %s", w.URL, show(w))
		}
		h := mixedHost(t, m, g.URL)
		if byHost[h.Base] == nil {
			byHost[h.Base] = map[string]int{}
		}
		byHost[h.Base][g.RenderedBy+"/"+samplePage(g.RenderReason)]++
		c := fetched[g.URL]
		switch {
		case !h.JS() && g.RenderedBy == renderBrowser:
			if g.RenderReason != reasonSample || c.overHTTP != 1 || c.byBrowser != 1 {
				t.Errorf("sampled static page %s: reason %q, fetched %+v (want once each way)", g.URL, g.RenderReason, c)
			}
		case !h.JS():
			if g.RenderedBy != renderHTTP || g.RenderReason != "" || c.overHTTP != 1 || c.byBrowser != 0 {
				t.Errorf("static page %s: renderedBy %q %q, fetched %+v (want once over HTTP only)", g.URL, g.RenderedBy, g.RenderReason, c)
			}
		default:
			if c.overHTTP > 1 || c.byBrowser != 1 {
				t.Errorf("JavaScript page %s fetched %+v (want once by the browser, at most once over HTTP)", g.URL, c)
			}
			httpFetchesOfJSHosts[h.Base] += c.overHTTP
		}
	}
	if mismatches != 0 {
		t.Fatalf("%d of %d pages differ from the browser-only run", mismatches, len(urls))
	}
	for _, h := range m.Hosts() {
		var wantBy map[string]int
		switch h.Kind {
		case fixture.MixedStatic:
			s := autoSamples(perHost)
			wantBy = map[string]int{"browser/" + reasonSample: s, "http/": perHost - s}
		case fixture.MixedApp:
			wantBy = map[string]int{"browser/" + appReason: perHost}
		case fixture.MixedHybrid:
			wantBy = map[string]int{"browser/" + hybridReason: perHost}
		}
		if !reflect.DeepEqual(byHost[h.Base], wantBy) {
			t.Errorf("%s host %s: pages by renderer %v, want %v", h.Kind, h.Base, byHost[h.Base], wantBy)
		}
		if n := httpFetchesOfJSHosts[h.Base]; h.JS() && (n < 1 || n > conc) {
			t.Errorf("%s host %s: %d pages fetched over HTTP, want 1..%d (the pages in flight when it switched)", h.Kind, h.Base, n, conc)
		}
	}
	t.Logf("renderers by host: %v; HTTP fetches of the JavaScript hosts: %v", byHost, httpFetchesOfJSHosts)
}

// TestRenderAutoCrawl: crawl_site render "auto" across the mixed site's
// four hosts (sameOrigin false, 3 link hops: 36 pages) finds every page a
// browser would, the app shell's links included (they exist only once its
// script ran), with the fields the fixture defines; the JavaScript hosts'
// pages are read by the browser, the static hosts' by HTTP except the
// samples.
func TestRenderAutoCrawl(t *testing.T) {
	m := fixture.NewMixed(t)
	hosts := m.Hosts()
	env := newEnv(t, mustJSON(t, map[string]any{"startUrl": hosts[0].Base + "/mixed/0", "render": "auto",
		"sameOrigin": false, "include": []string{"*/mixed/*"}, "maxDepth": 3, "maxPages": 200,
		"fields": fixture.MixedFields(), "concurrency": 4}))
	out, err := runTemplate(t, NewCrawlSite(testManager(t)), env)
	if err != nil {
		t.Fatal(err)
	}
	res := resultOf(t, out)
	// Depth of /mixed/n on host 0, and on the others (reached from host 0's
	// page 0): 3 hops reach n <= 14 on host 0, n <= 6 elsewhere.
	wantPages := map[string]bool{}
	for i, h := range hosts {
		last := 6
		if i == 0 {
			last = 14
		}
		for n := 0; n <= last; n++ {
			wantPages[fmt.Sprintf("%s/mixed/%d", h.Base, n)] = true
		}
	}
	byHost := map[string]map[string]int{}
	pages := res["pages"].([]any)
	for _, raw := range pages {
		p := raw.(map[string]any)
		u := p["url"].(string)
		if !wantPages[u] {
			t.Fatalf("crawled %s, not one of the %d pages 3 hops reach", u, len(wantPages))
		}
		delete(wantPages, u)
		h := mixedHost(t, m, u)
		var n int
		if _, err := fmt.Sscanf(strings.TrimPrefix(u, h.Base), "/mixed/%d", &n); err != nil {
			t.Fatal(err)
		}
		var next any
		if 2*n+1 < fixture.MixedPages {
			next = fmt.Sprintf("%s/mixed/%d", h.Base, 2*n+1)
		}
		wantFields := map[string]any{"name": fmt.Sprintf("Item %d", n), "price": fmt.Sprintf("%d.50", n),
			"sku": fmt.Sprintf("SKU-%04d", n), "tags": []any{"tag-a", "tag-" + string(rune('x'+n%3))}, "next": next}
		if !reflect.DeepEqual(p["fields"], wantFields) || p["title"] != fmt.Sprintf("Item %d | Mixed shop", n) || p["error"] != nil {
			t.Errorf("page %s: %s\nwant fields %s", u, show(p), show(wantFields))
		}
		reason, _ := p["renderReason"].(string)
		if byHost[h.Base] == nil {
			byHost[h.Base] = map[string]int{}
		}
		byHost[h.Base][p["renderedBy"].(string)+"/"+samplePage(reason)]++
		overHTTP, byBrowser := m.Fetches(h.Base, strings.TrimPrefix(u, h.Base))
		if overHTTP > 1 || byBrowser > 1 || (!h.JS() && (byBrowser == 1) != (reason == reasonSample)) {
			t.Errorf("page %s (%s/%s) fetched %d times over HTTP, %d by the browser", u, p["renderedBy"], reason, overHTTP, byBrowser)
		}
	}
	if len(wantPages) != 0 {
		t.Fatalf("the crawl missed %d pages: %v", len(wantPages), wantPages)
	}
	for i, h := range hosts {
		n := 7
		if i == 0 {
			n = 15
		}
		var wantBy map[string]int
		switch h.Kind {
		case fixture.MixedStatic:
			s := autoSamples(n)
			wantBy = map[string]int{"browser/" + reasonSample: s, "http/": n - s}
		case fixture.MixedApp:
			wantBy = map[string]int{"browser/" + appReason + "; links differ": n} // the app builds its links too
		case fixture.MixedHybrid:
			wantBy = map[string]int{"browser/" + hybridReason: n}
		}
		if !reflect.DeepEqual(byHost[h.Base], wantBy) {
			t.Errorf("%s host %s: pages by renderer %v, want %v", h.Kind, h.Base, byHost[h.Base], wantBy)
		}
	}
}

// TestRenderAutoCrawlResume: a crawl_site auto run stopped after 8
// pages and resumed fetches none of them again, visits the same 36
// pages, and keeps its hosts' decisions: a JavaScript host switched in
// the first attempt has no page fetched over HTTP in the second.
func TestRenderAutoCrawlResume(t *testing.T) {
	const stopAt = 8
	m := fixture.NewMixed(t)
	hosts := m.Hosts()
	inputs := mustJSON(t, map[string]any{"startUrl": hosts[0].Base + "/mixed/0", "render": "auto",
		"sameOrigin": false, "include": []string{"*/mixed/*"}, "maxDepth": 3, "maxPages": 200,
		"fields": fixture.MixedFields(), "concurrency": 1})
	tpl := NewCrawlSite(testManager(t))
	first := newEnv(t, inputs)
	ctx, cancel := context.WithCancelCause(context.Background())
	defer cancel(nil)
	stop := errors.New("stopped by the test")
	first.onCheckpoint = func(n int) {
		if n == stopAt {
			cancel(stop)
		}
	}
	if _, err := tpl.Run(ctx, first); !errors.Is(err, stop) {
		t.Fatalf("stopped crawl returned %v", err)
	}
	first.mu.Lock()
	done := append([]engine.Item(nil), first.items...)
	first.mu.Unlock()
	second := newEnv(t, inputs)
	second.done = map[string]engine.Item{}
	switched := map[string]bool{} // base → a checkpoint switched it
	for _, it := range done {
		second.done[it.Key] = it
		if p := restorePage(it.Key, it.Output, nil); switchesGroup(p.RenderReason) {
			switched[mixedHost(t, m, it.Key).Base] = true
		}
	}
	if len(done) != stopAt || !switched[hosts[1].Base] {
		t.Fatalf("%d checkpoints, switched hosts %v (the app host's page 0 is among the first %d pages)", len(done), switched, stopAt)
	}
	before := map[string][2]int{}
	for _, h := range hosts {
		for n := 0; n < fixture.MixedPages; n++ {
			a, b := m.Fetches(h.Base, fmt.Sprintf("/mixed/%d", n))
			before[fmt.Sprintf("%s/mixed/%d", h.Base, n)] = [2]int{a, b}
		}
	}
	out, err := runTemplate(t, tpl, second)
	if err != nil {
		t.Fatal(err)
	}
	pages := resultOf(t, out)["pages"].([]any)
	if len(pages) != 36 || len(second.items) != 36-stopAt {
		t.Fatalf("resumed crawl: %d pages, %d new checkpoints", len(pages), len(second.items))
	}
	for _, raw := range pages {
		u := raw.(map[string]any)["url"].(string)
		h := mixedHost(t, m, u)
		a, b := m.Fetches(h.Base, strings.TrimPrefix(u, h.Base))
		da, db := a-before[u][0], b-before[u][1]
		_, wasDone := second.done[u]
		switch {
		case wasDone && (da != 0 || db != 0):
			t.Errorf("checkpointed page %s fetched again (%d over HTTP, %d by the browser)", u, da, db)
		case !wasDone && switched[h.Base] && (da != 0 || db != 1):
			t.Errorf("page %s of a host switched before the stop: %d over HTTP, %d by the browser (want the browser only)", u, da, db)
		}
	}
}

// TestRenderAutoResume: an auto run stopped after 16 pages (the first 4
// of each host, one at a time) and resumed fetches none of them again,
// and the resumed attempt keeps the host decisions its checkpoints show:
// no page of a JavaScript host is fetched over HTTP any more, and a
// static host's sampling goes on from where it was (its last page is its
// one sample in the resumed attempt).
func TestRenderAutoResume(t *testing.T) {
	// Each static host's last page is the autoSampleEvery-th after its
	// first ones: due for a sample.
	const perHost, stopAt = autoFirstPages + autoSampleEvery, 16
	m := fixture.NewMixed(t)
	urls := m.URLs(perHost)
	inputs := mustJSON(t, map[string]any{"urls": urls, "render": "auto", "fields": fixture.MixedFields(),
		"includeText": false, "concurrency": 1})
	tpl := NewBatchExtractPages(testManager(t))
	first := newEnv(t, inputs)
	ctx, cancel := context.WithCancelCause(context.Background())
	defer cancel(nil)
	stop := errors.New("stopped by the test")
	first.onCheckpoint = func(n int) {
		if n == stopAt {
			cancel(stop)
		}
	}
	if err := tpl.Check(first.inputs, first.profile); err != nil {
		t.Fatal(err)
	}
	if _, err := tpl.Run(ctx, first); !errors.Is(err, stop) {
		t.Fatalf("stopped run returned %v", err)
	}
	first.mu.Lock()
	done := append([]engine.Item(nil), first.items...)
	first.mu.Unlock()
	if len(done) != stopAt {
		t.Fatalf("%d checkpoints, want %d", len(done), stopAt)
	}
	before := map[string][2]int{}
	for _, u := range urls {
		h := mixedHost(t, m, u)
		a, b := m.Fetches(h.Base, strings.TrimPrefix(u, h.Base))
		before[u] = [2]int{a, b}
	}

	second := newEnv(t, inputs)
	second.done = map[string]engine.Item{}
	for _, it := range done {
		second.done[it.Key] = it
	}
	out, err := runBatch(t, second)
	if err != nil {
		t.Fatal(err)
	}
	res := out.Result.(batchResult)
	if res.Summary.Total != len(urls) || res.Summary.Succeeded != len(urls) || len(second.items) != len(urls)-stopAt {
		t.Fatalf("resumed: %+v, %d new checkpoints", res.Summary, len(second.items))
	}
	samples := map[string]int{}
	for _, p := range res.Pages {
		h := mixedHost(t, m, p.URL)
		a, b := m.Fetches(h.Base, strings.TrimPrefix(p.URL, h.Base))
		_, wasDone := second.done[p.URL]
		switch {
		case wasDone && (a != before[p.URL][0] || b != before[p.URL][1]):
			t.Errorf("checkpointed page %s fetched again", p.URL)
		case !wasDone && h.JS() && (a != 0 || b != 1 || p.RenderedBy != renderBrowser):
			t.Errorf("resumed page %s of the %s host: fetched %d over HTTP, %d by the browser, renderedBy %q (want the browser only)", p.URL, h.Kind, a, b, p.RenderedBy)
		case !wasDone && !h.JS() && p.RenderedBy == renderBrowser:
			samples[h.Base]++
		}
		if name, _ := p.Fields["name"].(string); p.Title != name+" | Mixed shop" || p.Fields["price"] == "…" {
			t.Errorf("page %s: %s", p.URL, show(p))
		}
		if r := samplePage(p.RenderReason); h.Kind == fixture.MixedHybrid && r != hybridReason || h.Kind == fixture.MixedApp && r != appReason {
			t.Errorf("page %s of the %s host: reason %q", p.URL, h.Kind, p.RenderReason)
		}
	}
	for _, h := range m.Hosts() {
		// 4 pages done (2 samples, 2 over HTTP): of the others only the
		// last is due for a sample.
		if !h.JS() && samples[h.Base] != 1 {
			t.Errorf("static host %s: %d samples in the resumed attempt, want 1", h.Base, samples[h.Base])
		}
	}
}

// TestRenderAutoWithoutBrowser: a resumed auto run whose remaining pages
// are all on a host whose samples already matched, and none of which is
// due for a sample, is served entirely over HTTP: it runs with no browser
// at all (the session is opened only when a page needs it).
func TestRenderAutoWithoutBrowser(t *testing.T) {
	m := fixture.NewMixed(t)
	base := m.Hosts()[0].Base
	var urls []string
	for n := 0; n < 8; n++ {
		urls = append(urls, fmt.Sprintf("%s/mixed/%d", base, n))
	}
	inputs := mustJSON(t, map[string]any{"urls": urls, "render": "auto", "fields": fixture.MixedFields(), "concurrency": 1})
	first := newEnv(t, inputs)
	ctx, cancel := context.WithCancelCause(context.Background())
	defer cancel(nil)
	stop := errors.New("stopped by the test")
	first.onCheckpoint = func(n int) {
		if n == 3 {
			cancel(stop)
		}
	}
	if _, err := NewBatchExtractPages(testManager(t)).Run(ctx, first); !errors.Is(err, stop) {
		t.Fatalf("stopped run returned %v", err)
	}
	second := newEnv(t, inputs)
	second.done = map[string]engine.Item{}
	for _, it := range first.items {
		second.done[it.Key] = it
	}
	rctx, rcancel := fixture.Context(t)
	defer rcancel()
	out, err := NewBatchExtractPages(nil).Run(rctx, second) // no browser
	if err != nil {
		t.Fatal(err)
	}
	res := out.Result.(batchResult)
	by := map[string]int{}
	for _, p := range res.Pages {
		by[p.RenderedBy+"/"+p.RenderReason]++
	}
	if res.Summary.Succeeded != 8 || !reflect.DeepEqual(by, map[string]int{"browser/sample": 2, "http/": 6}) {
		t.Fatalf("summary %+v, renderers %v", res.Summary, by)
	}
}

// TestRenderAutoPageKinds: in auto mode a response that is not HTML goes
// to the browser without a verdict on its host, a page answering 404 is
// served over HTTP with its error and is no sample, and the host's first
// two HTML pages are the samples.
func TestRenderAutoPageKinds(t *testing.T) {
	srv := fixture.New(t)
	urls := []string{srv.URL("/cookies"), srv.URL("/status/404"), srv.URL("/page/1"), srv.URL("/page/2"), srv.URL("/page/3")}
	env := newEnv(t, mustJSON(t, map[string]any{"urls": urls, "render": "auto", "fields": map[string]any{"name": "#name"}, "concurrency": 1}))
	out, err := runBatch(t, env)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, p := range out.Result.(batchResult).Pages {
		code := ""
		if p.Error != nil {
			code = string(p.Error.Code)
		}
		got = append(got, fmt.Sprintf("%s/%s/%v/%s", p.RenderedBy, p.RenderReason, p.Fields["name"], code))
	}
	want := []string{"browser/not HTML (text/plain)/<nil>/", "http//Status 404/STEP_EXECUTION_FAILED",
		"browser/sample/Item 1/", "browser/sample/Item 2/", "http//Item 3/"}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("pages:\n%q\nwant\n%q", got, want)
	}
	if srv.Hits("/page/3") != 1 || srv.Hits("/page/1") != 2 || srv.Hits("/status/404") != 1 {
		t.Fatalf("hits /page/1 %d, /page/3 %d, /status/404 %d", srv.Hits("/page/1"), srv.Hits("/page/3"), srv.Hits("/status/404"))
	}
}

func TestHostKey(t *testing.T) {
	for in, want := range map[string]string{
		"http://Example.com/a":          "http://example.com:80",
		"http://example.com:80/b?c":     "http://example.com:80",
		"https://example.com/":          "https://example.com:443",
		"https://example.com:8443/x":    "https://example.com:8443",
		"http://127.0.0.1:5000/mixed/1": "http://127.0.0.1:5000",
		"http://[::1]:5000/":            "http://[::1]:5000",
		"file:///tmp/x.html":            "",
		"/relative":                     "",
	} {
		if got := hostKey(in); got != want {
			t.Errorf("hostKey(%q) = %q, want %q", in, got, want)
		}
	}
}

// TestRenderAutoSpeed measures render "auto" against render "browser"
// (3 paired runs, medians; 400 pages of one static host, then the mixed
// site's 4 hosts x 50 pages), for choosing autoFirstPages and
// autoSampleEvery. It runs only with BROWSERTASK_MEASURE_AUTO=1:
//
//	BROWSERTASK_MEASURE_AUTO=1 go test -count=1 -run TestRenderAutoSpeed -v ./templates/
func TestRenderAutoSpeed(t *testing.T) {
	if os.Getenv("BROWSERTASK_MEASURE_AUTO") != "1" {
		t.Skip("a measurement: set BROWSERTASK_MEASURE_AUTO=1")
	}
	m := fixture.NewMixed(t)
	var static []string
	for n := 0; n < 400; n++ {
		static = append(static, fmt.Sprintf("%s/mixed/%d", m.Hosts()[0].Base, n))
	}
	rate := func(urls []string, render string) (float64, int) {
		env := newEnv(t, mustJSON(t, map[string]any{"urls": urls, "render": render, "fields": fixture.MixedFields(),
			"includeText": false, "concurrency": 4}))
		start := time.Now()
		out, err := runBatch(t, env)
		if err != nil {
			t.Fatal(err)
		}
		overHTTP := 0
		for _, p := range out.Result.(batchResult).Pages {
			if p.RenderedBy == renderHTTP {
				overHTTP++
			}
		}
		return float64(len(urls)) / time.Since(start).Seconds(), overHTTP
	}
	rate(static[:20], "browser") // the browser started
	for _, c := range []struct {
		name string
		urls []string
	}{{"400 static pages", static}, {"mixed site 4x50", m.URLs(50)}} {
		var ratios []float64
		var overHTTP int
		for range 3 {
			b, _ := rate(c.urls, "browser")
			a, n := rate(c.urls, "auto")
			ratios = append(ratios, a/b)
			overHTTP = n
			t.Logf("%s: auto %.1f pages/s, browser %.1f pages/s", c.name, a, b)
		}
		sort.Float64s(ratios)
		t.Logf("%s, first %d then 1 in %d: auto %.1fx browser (median), %.1f%% over HTTP",
			c.name, autoFirstPages, autoSampleEvery, ratios[1], 100*float64(overHTTP)/float64(len(c.urls)))
	}
}
