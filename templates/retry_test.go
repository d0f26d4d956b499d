package templates

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/browsertask/browsertask/engine"
	"github.com/browsertask/browsertask/internal/extract/modelfill"
	"github.com/browsertask/browsertask/internal/fixture"
)

// The tests of this file resubmit the inputs of a run that failed or was
// canceled and check, by counting requests, that the new run adopts only
// the pages that succeeded and fetches the failed ones again (issue 26,
// item 8). They run the real engine on a real database, with render
// "http" so no browser is needed: adoption is the engine's and the
// pool's, whatever reads the pages.

// TestBatchExtractResubmissionFetchesFailedPagesAgain: the page of a
// one-page run is down; the run fails; resubmitted while it is still
// down, the page is requested again and fails again; resubmitted once it
// is up, it is requested a third time and the run succeeds. On bfdb840
// the 2nd and 3rd runs adopted the failed page and answered its old error
// without a request.
func TestBatchExtractResubmissionFetchesFailedPagesAgain(t *testing.T) {
	site := newFlakySite(t)
	e := newRetryEngine(t, NewBatchExtractPages(nil))
	// retries 0: the down page (503) is requested once per submission.
	in := map[string]any{"urls": []string{site.url("/p/1")}, "fields": map[string]string{"h": "h1"}, "render": "http", "retries": 0}
	site.set("/p/1", true, false)
	for i := 1; i <= 2; i++ {
		run := e.wait(t, e.submit(t, "batch_extract_pages", in, ""))
		if run.Status != engine.StatusFailed || run.Error == nil || run.Error.Code != engine.StepExecutionFailed {
			t.Fatalf("submission %d while the page is down: %s %+v, want failed/STEP_EXECUTION_FAILED", i, run.Status, run.Error)
		}
		if n := site.hitsOf("/p/1"); n != i {
			t.Fatalf("after submission %d the page was requested %d times, want %d (each submission tries it)", i, n, i)
		}
	}
	site.set("/p/1", false, false)
	id := e.submit(t, "batch_extract_pages", in, "")
	run := e.wait(t, id)
	if run.Status != engine.StatusSucceeded {
		t.Fatalf("submission 3 once the page is up: %s %+v, want succeeded", run.Status, run.Error)
	}
	if n := site.hitsOf("/p/1"); n != 3 {
		t.Fatalf("the page was requested %d times in three submissions, want 3", n)
	}
	if got := e.adopted(t, id); len(got) != 0 {
		t.Fatalf("the third run adopted %v from runs with no page succeeded, want nothing", got)
	}
	var res struct {
		Pages []struct {
			Fields map[string]any `json:"fields"`
			Error  *engine.Error  `json:"error"`
		} `json:"pages"`
	}
	if err := json.Unmarshal(run.Result, &res); err != nil {
		t.Fatal(err)
	}
	if len(res.Pages) != 1 || res.Pages[0].Error != nil || res.Pages[0].Fields["h"] != "/p/1" {
		t.Fatalf("result pages %+v, want /p/1 extracted", res.Pages)
	}
}

// TestBatchExtractResubmissionAdoptsOnlySucceededPages: a canceled run
// had /p/1 succeed and /p/2 fail (down); resubmitted once the site is
// up, the new run adopts /p/1 alone (not requested again) and fetches
// /p/2 and the page it never reached.
func TestBatchExtractResubmissionAdoptsOnlySucceededPages(t *testing.T) {
	site := newFlakySite(t)
	e := newRetryEngine(t, NewBatchExtractPages(nil))
	in := map[string]any{"urls": []string{site.url("/p/1"), site.url("/p/2"), site.url("/p/3")},
		"fields": map[string]string{"h": "h1"}, "render": "http", "concurrency": 1, "retries": 0}
	site.set("/p/2", true, false)
	site.set("/p/3", false, true)
	first := e.submit(t, "batch_extract_pages", in, "")
	waitHung(t, site, "/p/3")
	if _, err := e.eng.Cancel(context.Background(), first, "test"); err != nil {
		t.Fatal(err)
	}
	if run := e.wait(t, first); run.Status != engine.StatusCanceled {
		t.Fatalf("first run: %s, want canceled", run.Status)
	}
	site.set("/p/2", false, false)
	site.set("/p/3", false, false)
	again := e.submit(t, "batch_extract_pages", in, "")
	run := e.wait(t, again)
	if run.Status != engine.StatusSucceeded || run.Progress.FailedSteps != 0 {
		t.Fatalf("the resubmission: %s, progress %+v, error %+v; want succeeded with no page failed", run.Status, run.Progress, run.Error)
	}
	for path, want := range map[string]int{"/p/1": 1, "/p/2": 2, "/p/3": 2} {
		if n := site.hitsOf(path); n != want {
			t.Errorf("%s requested %d times, want %d", path, n, want)
		}
	}
	if got := e.adopted(t, again); len(got) != 1 || got[0] != 1 {
		t.Fatalf("adopted events' items %v, want one event of 1 item (/p/1)", got)
	}
	items := e.items(t, again)
	for i, p := range []string{"/p/1", "/p/2", "/p/3"} {
		it, ok := items[site.url(p)]
		if !ok || it.Status != engine.ItemSucceeded || it.Index != i {
			t.Errorf("checkpoint of %s: %+v (found %v), want succeeded at index %d", p, it, ok, i)
		}
	}
}

// TestCrawlResubmissionAdoptsOnlySucceededPages: a canceled crawl had /
// and /p/2 succeed and /p/1 fail; the resubmission adopts / and /p/2,
// fetches /p/1 and /p/3, and its new checkpoints take indexes past the
// adopted ones (on bfdb840's numbering by pages done, /p/1's checkpoint
// would have overwritten /p/2's).
func TestCrawlResubmissionAdoptsOnlySucceededPages(t *testing.T) {
	site := newFlakySite(t)
	e := newRetryEngine(t, NewCrawlSite(nil))
	in := map[string]any{"startUrl": site.url("/"), "maxPages": 10, "maxDepth": 1,
		"fields": map[string]string{"h": "h1"}, "render": "http", "concurrency": 1, "retries": 0}
	site.set("/p/1", true, false)
	site.set("/p/3", false, true)
	first := e.submit(t, "crawl_site", in, "")
	waitHung(t, site, "/p/3")
	if _, err := e.eng.Cancel(context.Background(), first, "test"); err != nil {
		t.Fatal(err)
	}
	if run := e.wait(t, first); run.Status != engine.StatusCanceled {
		t.Fatalf("first run: %s, want canceled", run.Status)
	}
	site.set("/p/1", false, false)
	site.set("/p/3", false, false)
	again := e.submit(t, "crawl_site", in, "")
	run := e.wait(t, again)
	if run.Status != engine.StatusSucceeded || run.Progress.FailedSteps != 0 || run.Progress.DoneSteps != 4 {
		t.Fatalf("the resubmission: %s, progress %+v, error %+v; want succeeded, 4 pages, none failed", run.Status, run.Progress, run.Error)
	}
	for path, want := range map[string]int{"/": 1, "/p/1": 2, "/p/2": 1, "/p/3": 2} {
		if n := site.hitsOf(path); n != want {
			t.Errorf("%s requested %d times, want %d", path, n, want)
		}
	}
	if got := e.adopted(t, again); len(got) != 1 || got[0] != 2 {
		t.Fatalf("adopted events' items %v, want one event of 2 items (/ and /p/2)", got)
	}
	items := e.items(t, again)
	if len(items) != 4 {
		var got []string
		for k, it := range items {
			got = append(got, fmt.Sprintf("%d %s %s", it.Index, strings.TrimPrefix(k, site.url("")), it.Status))
		}
		t.Fatalf("%d checkpoints, want 4: %v", len(items), got)
	}
	for _, p := range []string{"/", "/p/1", "/p/2", "/p/3"} {
		if it := items[site.url(p)]; it.Status != engine.ItemSucceeded {
			t.Errorf("checkpoint of %s: %+v, want succeeded", p, it)
		}
	}
	if a, b := items[site.url("/p/1")].Index, items[site.url("/p/2")].Index; a <= b {
		t.Errorf("/p/1 (fetched again) is at index %d, /p/2 (adopted) at %d: want it after", a, b)
	}
}

// TestExtractStructuredResubmissionAsksTheModelAgain: the model refuses
// the key (401), the only page fails and so does the run; once the key is
// accepted, resubmitting the same inputs reads the page and asks the
// model again, and the run succeeds. On bfdb840 the resubmission adopted
// the failed page and failed with the old 401 without a request.
func TestExtractStructuredResubmissionAsksTheModelAgain(t *testing.T) {
	srv := fixture.New(t)
	fm := &flakyModel{refused: true}
	ms := httptest.NewServer(fm)
	defer ms.Close()
	model, err := modelfill.NewOpenAI(modelfill.OpenAIConfig{BaseURL: ms.URL + "/v1", Model: "flaky", APIKey: "sk-test-retry-401"})
	if err != nil {
		t.Fatal(err)
	}
	e := newRetryEngine(t, NewExtractStructured(nil, model))
	in := map[string]any{"urls": []string{srv.URL("/products/noprice")}, "render": "http"}
	run := e.wait(t, e.submit(t, "extract_structured", in, structuredSchema))
	if run.Status != engine.StatusFailed || run.Error == nil || !strings.Contains(run.Error.Message, "401") {
		t.Fatalf("the run with the key refused: %s %+v, want failed naming HTTP 401", run.Status, run.Error)
	}
	fm.mu.Lock()
	asked := fm.requests
	fm.refused = false
	fm.mu.Unlock()
	if asked == 0 || srv.Hits("/products/noprice") != 1 {
		t.Fatalf("first run: %d model requests, page requested %d times; want some and once", asked, srv.Hits("/products/noprice"))
	}
	id := e.submit(t, "extract_structured", in, structuredSchema)
	run = e.wait(t, id)
	if run.Status != engine.StatusSucceeded {
		t.Fatalf("the resubmission once the key is accepted: %s %+v, want succeeded", run.Status, run.Error)
	}
	fm.mu.Lock()
	again := fm.requests - asked
	fm.mu.Unlock()
	if again != 1 || srv.Hits("/products/noprice") != 2 {
		t.Fatalf("the resubmission made %d model requests and requested the page %d times in all; want 1 and 2", again, srv.Hits("/products/noprice"))
	}
	var res structuredResult
	if err := json.Unmarshal(run.Result, &res); err != nil {
		t.Fatal(err)
	}
	if len(res.Items) != 1 || res.Items[0].Object["price"] != 12.0 || res.Items[0].Error != nil {
		t.Fatalf("result items %+v, want the price the model gave", res.Items)
	}
}
