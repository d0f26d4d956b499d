package templates

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/browsertask/browsertask/engine"
	"github.com/browsertask/browsertask/internal/extract/page"
	"github.com/browsertask/browsertask/internal/fixture"
)

func mustJSON(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func runBatch(t *testing.T, env *fakeEnv) (*engine.Outcome, error) {
	t.Helper()
	tpl := NewBatchExtractPages(testManager(t))
	// No deadline of its own: how long a run of a hundred pages in
	// Chromium takes is the machine's load, not a promise of the template
	// (60 s ended TestRenderAutoMixedSite with "context deadline exceeded"
	// at load 20-35); go test's -timeout stops a run that hangs.
	ctx := t.Context()
	if e := tpl.Info(); e.InputSchema != nil {
		s, err := engine.CompileSchema(e.InputSchema)
		if err != nil {
			t.Fatal(err)
		}
		if verr := s.Validate(env.inputs, "inputs"); verr != nil {
			t.Fatalf("inputs rejected by the schema: %v", verr)
		}
	}
	if err := tpl.Check(env.inputs, env.profile); err != nil {
		t.Fatalf("Check: %v", err)
	}
	return tpl.Run(ctx, env)
}

func TestBatchExtractFieldsAndPartial(t *testing.T) {
	srv := fixture.New(t)
	urls := []string{
		srv.URL("/static/fields.html"),
		srv.URL("/page/1"),
		srv.URL("/page/1"), // duplicate: dropped
		srv.URL("/status/404"),
		srv.URL("/redirect?to=/page/2"),
	}
	env := newEnv(t, mustJSON(t, map[string]any{
		"urls": urls,
		"fields": map[string]any{
			"name":    "#name",
			"price":   ".price",
			"tags":    map[string]any{"selector": ".tag", "all": true},
			"alt":     map[string]any{"selector": "#photo", "attr": "alt"},
			"next":    map[string]any{"selector": "#next", "attr": "href"},
			"missing": "#nope",
		},
		"includeLinks": true, "includeMeta": true, "concurrency": 2,
	}))
	out, err := runBatch(t, env)
	if err != nil {
		t.Fatal(err)
	}
	if !out.Partial {
		t.Fatal("a 404 among the pages must give a partial outcome")
	}
	res := out.Result.(batchResult)
	if res.Summary != (batchSummary{Total: 4, Succeeded: 3, Failed: 1}) || res.ArtifactID != "art_pages.json" {
		t.Fatalf("summary = %+v artifact %q", res.Summary, res.ArtifactID)
	}
	f := res.Pages[0]
	want := map[string]any{
		"name": "Blue Widget", "price": "19.99", "tags": []any{"alpha", "beta", "gamma"},
		"alt": "A widget photo", "next": srv.URL("/page/2"), "missing": nil,
	}
	if f.Title != "Fields Fixture" || f.HTTPStatus != 200 || f.Error != nil || !reflect.DeepEqual(f.Fields, want) {
		t.Fatalf("fields page = %+v\nwant fields %v", f, want)
	}
	// includeMeta: the meta tags are in the result's pages too.
	if f.Meta["description"] != "A page with known fields for extraction tests." || f.Meta["og:title"] != "Fields OG Title" {
		t.Fatalf("inline meta of the fields page = %v", f.Meta)
	}
	if p := res.Pages[1]; p.Title != "Page 1" || p.Fields["name"] != "Item 1" || p.Fields["price"] != "1.00" {
		t.Fatalf("page 1 = %+v", p)
	}
	nf := res.Pages[2]
	if nf.HTTPStatus != 404 || nf.Error == nil || nf.Error.Code != engine.StepExecutionFailed || nf.Title != "Status 404" {
		t.Fatalf("404 page = %+v (error %v)", nf, nf.Error)
	}
	if rd := res.Pages[3]; rd.URL != urls[4] || rd.FinalURL != srv.URL("/page/2") || rd.HTTPStatus != 200 || rd.Title != "Page 2" {
		t.Fatalf("redirect page = %+v", rd)
	}
	if srv.Hits("/page/1") != 1 {
		t.Fatalf("/page/1 fetched %d times, want 1 (dedupe)", srv.Hits("/page/1"))
	}

	// Checkpoints: one per unique URL, keyed by URL, indexed by position.
	if len(env.items) != 4 {
		t.Fatalf("checkpoints = %d", len(env.items))
	}
	byKey := map[string]engine.Item{}
	for _, it := range env.items {
		byKey[it.Key] = it
	}
	if it := byKey[urls[3]]; it.Index != 3-1 || it.Status != engine.ItemFailed || it.Error.Code != engine.StepExecutionFailed {
		t.Fatalf("404 item = %+v", it)
	}
	if it := byKey[urls[4]]; it.Index != 3 || it.Status != engine.ItemSucceeded {
		t.Fatalf("redirect item = %+v", it)
	}
	last := env.progress[len(env.progress)-1]
	if last.DoneSteps != 4 || last.TotalSteps != 4 || last.FailedSteps != 1 {
		t.Fatalf("final progress = %+v", last)
	}

	// pages.json has everything, in input order.
	pages := env.pagesJSON(t)
	if len(pages) != 4 || pages[0].URL != urls[0] || pages[1].URL != urls[1] || pages[2].URL != urls[3] || pages[3].URL != urls[4] {
		t.Fatalf("pages.json order: %+v", pages)
	}
	fp := pages[0]
	if fp.Text == nil || !strings.Contains(*fp.Text, "Blue Widget") || !strings.Contains(*fp.Text, "Ünïcödé ✓") {
		t.Fatalf("text = %v", fp.Text)
	}
	if fp.Meta["description"] != "A page with known fields for extraction tests." || fp.Meta["og:title"] != "Fields OG Title" ||
		fp.Meta["canonical"] != srv.URL("/static/fields.html") || fp.Meta["lang"] != "en" {
		t.Fatalf("meta = %v", fp.Meta)
	}
	wantLinks := []page.Link{{Href: srv.URL("/page/2"), Text: "Next page"}, {Href: srv.URL("/static/about.html"), Text: "About"}, {Href: "https://example.invalid/external", Text: "External"}}
	if !reflect.DeepEqual(fp.Links, wantLinks) {
		t.Fatalf("links = %v", fp.Links)
	}
	if pages[2].HTTPStatus != 404 || pages[2].Error == nil || pages[2].Fields["name"] != "Status 404" {
		t.Fatalf("404 in pages.json = %+v", pages[2])
	}
}

func TestBatchAllFail(t *testing.T) {
	srv := fixture.New(t)
	env := newEnv(t, mustJSON(t, map[string]any{
		"urls": []string{srv.URL("/status/500"), srv.URL("/status/404")}, "includeText": false,
	}))
	_, err := runBatch(t, env)
	var e *engine.Error
	if !errors.As(err, &e) || e.Code != engine.StepExecutionFailed {
		t.Fatalf("err = %v, want STEP_EXECUTION_FAILED", err)
	}
	errs, _ := e.Details["errors"].([]map[string]any)
	if len(errs) != 2 || errs[0]["httpStatus"] != 500 || errs[1]["httpStatus"] != 404 || e.Details["artifactId"] != "art_pages.json" {
		t.Fatalf("details = %v", e.Details)
	}
	pages := env.pagesJSON(t)
	if len(pages) != 2 || pages[0].HTTPStatus != 500 || pages[0].Text != nil {
		t.Fatalf("pages.json = %+v", pages)
	}
}

// TestBatchNavigationTimeout: a page that never answers fails with
// NAVIGATION_TIMEOUT and no HTTP status once perPageTimeoutMs has passed,
// the browser stops fetching it, and the worker goes on with the next URL;
// the tabs serve the session's next run. Only /hang pages share the short
// deadline: a page that must load within it would assert the machine's
// speed (on a loaded machine a trivial page took 0.9 of the 1000 ms).
func TestBatchNavigationTimeout(t *testing.T) {
	srv := fixture.New(t)
	hangs := []string{srv.URL("/hang?n=1"), srv.URL("/hang?n=2")}
	env := newEnv(t, mustJSON(t, map[string]any{
		"urls": hangs, "concurrency": 1, "perPageTimeoutMs": 1000, "fields": map[string]any{"name": "#name"},
		"retries": 0, // each deadline once: a timeout is otherwise retried (polite_pool.go)
	}))
	start := time.Now()
	_, err := runBatch(t, env)
	if e := engine.AsError(err); e == nil || e.Code != engine.StepExecutionFailed || e.Details["failed"] != 2 {
		t.Fatalf("run error %v, want STEP_EXECUTION_FAILED: all 2 pages failed", err)
	}
	for i, p := range env.pagesJSON(t) {
		if p.URL != hangs[i] || p.Error == nil || p.Error.Code != engine.NavigationTimeout || p.HTTPStatus != 0 {
			t.Fatalf("page %d = %+v err %v, want %s with NAVIGATION_TIMEOUT and no status", i, p, p.Error, hangs[i])
		}
	}
	// The browser dropped both requests, each after its full deadline, one
	// after the other: the second no sooner than 2 x 1000 ms after the start.
	wait, cancel := fixture.Context(t)
	defer cancel()
	var aborted []time.Duration
	for range hangs {
		select {
		case at := <-srv.Aborted():
			aborted = append(aborted, at.Sub(start))
		case <-wait.Done():
			t.Fatalf("the browser kept fetching /hang (aborted %d of 2)", len(aborted))
		}
	}
	slices.Sort(aborted)
	if aborted[0] < time.Second || aborted[1] < 2*time.Second {
		t.Fatalf("/hang requests dropped %v after the start, before their deadlines", aborted)
	}
	// The tab the timeouts happened in serves the session's next run.
	env = newEnv(t, mustJSON(t, map[string]any{"urls": []string{srv.URL("/page/5")}, "fields": map[string]any{"name": "#name"}}))
	out, err := runBatch(t, env)
	if err != nil {
		t.Fatal(err)
	}
	if p := out.Result.(batchResult).Pages[0]; p.Fields["name"] != "Item 5" || p.Error != nil {
		t.Fatalf("page 5 after the timeouts = %+v", p)
	}
}

func TestBatchResumeSkipsDoneItems(t *testing.T) {
	srv := fixture.New(t)
	urls := []string{srv.URL("/page/1"), srv.URL("/page/2"), srv.URL("/page/3")}
	env := newEnv(t, mustJSON(t, map[string]any{"urls": urls, "fields": map[string]any{"name": "#name"}}))
	// Checkpoints of an earlier attempt carry their index, as the store
	// keeps them (pages.json is read back from the checkpoints by index).
	earlier := func(i int, title string) engine.Item {
		raw, _ := json.Marshal(pageOut{URL: urls[i], FinalURL: urls[i], HTTPStatus: 200, Title: title, Fields: map[string]any{"name": "earlier"}})
		return engine.Item{Index: i, Key: urls[i], Status: engine.ItemSucceeded, Output: raw}
	}
	env.done = map[string]engine.Item{
		urls[0]: earlier(0, "From attempt 1"),
		urls[2]: earlier(2, "Also from attempt 1"),
	}
	out, err := runBatch(t, env)
	if err != nil {
		t.Fatal(err)
	}
	if srv.Hits("/page/1") != 0 || srv.Hits("/page/3") != 0 || srv.Hits("/page/2") != 1 {
		t.Fatalf("hits: page1=%d page2=%d page3=%d, want 0 1 0", srv.Hits("/page/1"), srv.Hits("/page/2"), srv.Hits("/page/3"))
	}
	if len(env.items) != 1 || env.items[0].Key != urls[1] || env.items[0].Index != 1 {
		t.Fatalf("checkpoints = %+v", env.items)
	}
	res := out.Result.(batchResult)
	if res.Summary.Total != 3 || res.Summary.Succeeded != 3 || out.Partial {
		t.Fatalf("summary = %+v", res.Summary)
	}
	pages := env.pagesJSON(t)
	if pages[0].Title != "From attempt 1" || pages[1].Title != "Page 2" || pages[2].Title != "Also from attempt 1" {
		t.Fatalf("pages.json titles = %q %q %q", pages[0].Title, pages[1].Title, pages[2].Title)
	}
	if env.progress[0].DoneSteps != 2 || env.progress[0].TotalSteps != 3 {
		t.Fatalf("first progress = %+v", env.progress[0])
	}
}

func TestBatchCancelStopsWithin2s(t *testing.T) {
	srv := fixture.New(t)
	urls := []string{srv.URL("/page/1")}
	for i := 0; i < 5; i++ {
		urls = append(urls, srv.URL(fmt.Sprintf("/hang?n=%d", i)))
	}
	env := newEnv(t, mustJSON(t, map[string]any{"urls": urls, "concurrency": 3}))
	tpl := NewBatchExtractPages(testManager(t))
	ctx, cancel := context.WithCancelCause(context.Background())
	type result struct {
		out *engine.Outcome
		err error
	}
	done := make(chan result, 1)
	go func() {
		o, err := tpl.Run(ctx, env)
		done <- result{o, err}
	}()
	waitCtx, waitCancel := fixture.Context(t)
	defer waitCancel()
	for i := 0; i < 2; i++ { // two tabs are stuck on /hang
		select {
		case <-srv.Hung():
		case <-waitCtx.Done():
			t.Fatal("/hang never requested")
		}
	}
	cause := errors.New("run canceled by test")
	canceledAt := time.Now()
	cancel(cause)
	select {
	case r := <-done:
		if took := time.Since(canceledAt); took > 2*time.Second {
			t.Fatalf("Run returned %s after cancel", took)
		}
		if !errors.Is(r.err, cause) || r.out != nil {
			t.Fatalf("Run = %v, %v; want the cancel cause", r.out, r.err)
		}
	case <-time.After(2 * time.Second):
		t.Fatal("Run still running 2 s after cancel")
	}
	for i := 0; i < 2; i++ {
		select {
		case at := <-srv.Aborted():
			if d := at.Sub(canceledAt); d > 2*time.Second {
				t.Fatalf("a /hang fetch stopped %s after cancel", d)
			}
		case <-time.After(2 * time.Second):
			t.Fatal("the browser kept fetching /hang 2 s after cancel")
		}
	}
	for _, it := range env.items {
		if strings.Contains(it.Key, "/hang") {
			t.Fatalf("a page cut off by the cancel was checkpointed: %+v", it)
		}
	}
	if _, ok := env.artifacts["pages.json"]; ok {
		t.Fatal("pages.json written for a cancelled run")
	}
}

func TestBatchManyPagesThroughput(t *testing.T) {
	srv := fixture.New(t)
	var urls []string
	for i := 1; i <= 40; i++ {
		urls = append(urls, srv.URL(fmt.Sprintf("/page/%d", i)))
	}
	env := newEnv(t, mustJSON(t, map[string]any{"urls": urls, "fields": map[string]any{"name": "#name"}, "concurrency": 4}))
	start := time.Now()
	out, err := runBatch(t, env)
	if err != nil {
		t.Fatal(err)
	}
	res := out.Result.(batchResult)
	if res.Summary.Succeeded != 40 {
		t.Fatalf("summary = %+v", res.Summary)
	}
	for i, p := range res.Pages {
		if p.Fields["name"] != fmt.Sprintf("Item %d", i+1) {
			t.Fatalf("page %d name = %v", i+1, p.Fields["name"])
		}
	}
	t.Logf("40 pages in %s (%.1f pages/s)", time.Since(start), 40/time.Since(start).Seconds())
}
