package acceptance

// Issue "Results an agent can use": a run that stops early keeps what it
// finished, and answers fit the budget (--max-inline-bytes, 64 KiB).

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/browsertask/browsertask/internal/fixture"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// twentyPages is /page/1…/page/20 with /hang in place of page hangAt
// (1-based).
func twentyPages(fx *fixture.Server, hangAt int) []any {
	urls := make([]any, 0, 20)
	for i := 1; i <= 20; i++ {
		if i == hangAt {
			urls = append(urls, fx.URL("/hang"))
			continue
		}
		urls = append(urls, fx.URL(fmt.Sprintf("/page/%d", i)))
	}
	return urls
}

// keptDetails checks a stopped run's error details: counts, and the
// artifact it names is listed in artifactIds; it returns the artifact id
// ("" when none is named).
func keptDetails(t *testing.T, run obj, finished, failed, notStarted int64) string {
	t.Helper()
	d := sub(sub(run, "error"), "details")
	if num(d, "finished") != finished || num(d, "failed") != failed || num(d, "notStarted") != notStarted {
		t.Fatalf("error.details: want finished %d, failed %d, notStarted %d; got %v", finished, failed, notStarted, d)
	}
	id, _ := d["artifactId"].(string)
	if id == "" {
		return ""
	}
	listed := false
	for _, a := range run["artifactIds"].([]any) {
		listed = listed || a == id
	}
	if !listed || d["artifactName"] != "pages.json" {
		t.Fatalf("the kept artifact %s (%v) is not among artifactIds %v", id, d["artifactName"], run["artifactIds"])
	}
	if msg, _ := sub(run, "error")["message"].(string); !strings.Contains(msg, id) || !strings.Contains(msg, fmt.Sprintf("kept %d finished", finished)) {
		t.Fatalf("error.message should say what was kept: %q", msg)
	}
	return id
}

// checkKeptPages reads pages.json and checks it holds pages 1..n with
// their fields.
func checkKeptPages(t *testing.T, cs *sdk.ClientSession, artifactID string, n int) {
	t.Helper()
	data, mime, _ := readArtifact(t, cs, artifactID, 0, 1<<20)
	var pages []struct {
		URL    string            `json:"url"`
		Fields map[string]string `json:"fields"`
		Error  any               `json:"error"`
	}
	if err := json.Unmarshal(data, &pages); err != nil || mime != "application/json" {
		t.Fatalf("pages.json (%s): %v: %.300s", mime, err, data)
	}
	if len(pages) != n {
		t.Fatalf("pages.json holds %d pages, want %d", len(pages), n)
	}
	for i, p := range pages {
		want := map[string]string{"name": fmt.Sprintf("Item %d", i+1), "price": fmt.Sprintf("%d.00", i+1)}
		if !strings.HasSuffix(p.URL, fmt.Sprintf("/page/%d", i+1)) || p.Error != nil || fmt.Sprint(p.Fields) != fmt.Sprint(want) {
			t.Fatalf("pages.json[%d] = %+v, want /page/%d with fields %v", i, p, i+1, want)
		}
	}
}

func TestBlackboxKeepsWhatFinished(t *testing.T) {
	fixture.NeedChromium(t)
	t.Parallel()
	cs := connectHTTP(t, startServe(t), nil)
	fields := obj{"name": "#name", "price": ".price"}

	t.Run("timeout", func(t *testing.T) {
		t.Parallel()
		fx := fixture.New(t)
		// One tab: pages 1-10 finish, page 11 never answers, the run's
		// 20 s run out on it (pages take milliseconds each here).
		id := submitAsync(t, cs, "batch_extract_pages", obj{"urls": twentyPages(fx, 11), "fields": fields,
			"concurrency": 1, "perPageTimeoutMs": 120000}, obj{"timeoutMs": 20000})
		run := waitTerminal(t, cs, id)
		if run["status"] != "failed" || errCode(run) != "RUN_TIMEOUT" || run["result"] != nil {
			t.Fatalf("want failed/RUN_TIMEOUT/result null, got %v %v %v", run["status"], run["error"], run["result"])
		}
		art := keptDetails(t, run, 10, 0, 10)
		if art == "" {
			t.Fatalf("no artifact kept: %v", run["error"])
		}
		checkKeptPages(t, cs, art, 10)
	})

	t.Run("cancel", func(t *testing.T) {
		t.Parallel()
		fx := fixture.New(t)
		id := submitAsync(t, cs, "batch_extract_pages", obj{"urls": twentyPages(fx, 11), "fields": fields,
			"concurrency": 1, "perPageTimeoutMs": 120000}, nil)
		ctx, cancel := fixture.Context(t)
		defer cancel()
		select {
		case <-fx.Hung(): // pages 1-10 are checkpointed before page 11 starts
		case <-ctx.Done():
			t.Fatalf("the browser never reached /hang: %v", getRun(t, cs, id))
		}
		if c := callOK(t, cs, "cancel_task_run", obj{"runId": id}); c["success"] != true {
			t.Fatalf("cancel: %v", c)
		}
		run := waitRun(t, cs, id, "the kept pages", func(r obj) bool {
			return sub(sub(r, "error"), "details")["artifactId"] != nil
		})
		if run["status"] != "canceled" || errCode(run) != "RUN_CANCELED" || run["result"] != nil {
			t.Fatalf("want canceled/RUN_CANCELED/result null, got %v %v %v", run["status"], run["error"], run["result"])
		}
		checkKeptPages(t, cs, keptDetails(t, run, 10, 0, 10), 10)

		// Submitting the same inputs again continues from those pages: the
		// new run fetches none of them again and stops at page 11 again.
		again := submitAsync(t, cs, "batch_extract_pages", obj{"urls": twentyPages(fx, 11), "fields": fields,
			"concurrency": 1, "perPageTimeoutMs": 120000}, nil)
		select {
		case <-fx.Hung():
		case <-ctx.Done():
			t.Fatalf("the second run never reached /hang: %v", getRun(t, cs, again))
		}
		for i := 1; i <= 10; i++ {
			if n := fx.Hits(fmt.Sprintf("/page/%d", i)); n != 1 {
				t.Fatalf("/page/%d was fetched %d times, want once (the second run continues the first)", i, n)
			}
		}
		evs := callOK(t, cs, "get_task_run_events", obj{"runId": again})["events"].([]any)
		adopted := 0
		for _, ev := range evs {
			if e := ev.(obj); e["type"] == "adopted" {
				adopted++
				if d := sub(e, "data"); d["fromRunId"] != id || num(d, "items") != 10 {
					t.Fatalf("adopted event: %v, want fromRunId %s, items 10", d, id)
				}
			}
		}
		if adopted != 1 {
			t.Fatalf("want one adopted event, got %d in %v", adopted, evs)
		}
		if p := sub(getRun(t, cs, again), "progress"); num(p, "doneSteps") != 10 || num(p, "totalSteps") != 20 {
			t.Fatalf("the second run's progress: %v, want 10/20", p)
		}
		callOK(t, cs, "cancel_task_run", obj{"runId": again})
	})

	t.Run("screenshots", func(t *testing.T) {
		t.Parallel()
		fx := fixture.New(t)
		urls := twentyPages(fx, 4)[:8]
		id := submitAsync(t, cs, "screenshot_pages", obj{"urls": urls, "concurrency": 1, "perPageTimeoutMs": 120000}, nil)
		ctx, cancel := fixture.Context(t)
		defer cancel()
		select {
		case <-fx.Hung():
		case <-ctx.Done():
			t.Fatalf("the browser never reached /hang: %v", getRun(t, cs, id))
		}
		callOK(t, cs, "cancel_task_run", obj{"runId": id})
		run := waitRun(t, cs, id, "the kept count", func(r obj) bool {
			return sub(sub(r, "error"), "details")["finished"] != nil
		})
		if art := keptDetails(t, run, 3, 0, 5); art != "" {
			t.Fatalf("screenshot_pages names no pages.json, got %s", art)
		}
		ids := run["artifactIds"].([]any)
		if len(ids) != 3 {
			t.Fatalf("artifactIds = %v, want the 3 screenshots taken", ids)
		}
		for _, a := range ids {
			data, mime, _ := readArtifact(t, cs, a.(string), 0, 1<<20)
			if mime != "image/png" || !strings.HasPrefix(string(data), "\x89PNG") {
				t.Fatalf("artifact %v: %s, %d bytes, want a PNG", a, mime, len(data))
			}
		}
	})
}

// replySize calls a tool and returns its structured reply and the size
// of its JSON text block.
func replySize(t *testing.T, cs *sdk.ClientSession, tool string, args obj) (obj, int) {
	t.Helper()
	m := callOK(t, cs, tool, args)
	b, _ := json.Marshal(m)
	return m, len(b)
}

func TestBlackboxAnswersFitTheBudget(t *testing.T) {
	fixture.NeedChromium(t)
	t.Parallel()
	const budget = 64 << 10
	cs := connectHTTP(t, startServe(t), nil)
	fx := fixture.New(t)

	// A real 1000-page extraction with text.
	urls := make([]any, 1000)
	for i := range urls {
		urls[i] = fx.URL(fmt.Sprintf("/page/%d", i+1))
	}
	big := submitAsync(t, cs, "batch_extract_pages", obj{"urls": urls, "fields": obj{"name": "#name"}, "includeText": true}, nil)
	// 50 finished runs with 1000-page results, without a browser.
	for i := 0; i < 49; i++ {
		r := callOK(t, cs, "run_task_template", obj{"templateId": "dev_echo", "inputs": obj{"pages": 1000, "textBytes": 200}, "options": obj{"mode": "sync"}})
		if r["status"] != "succeeded" {
			t.Fatalf("dev_echo: %v %v", r["status"], r["error"])
		}
	}
	run := waitTerminal(t, cs, big)
	if run["status"] != "succeeded" {
		t.Fatalf("1000-page run: %v %v", run["status"], run["error"])
	}

	res, n := replySize(t, cs, "get_task_run", obj{"runId": big})
	r := sub(res, "result")
	if n > budget || r["truncated"] != true || num(r, "itemsTotal") != 1000 || num(r, "itemsInline") < 1 || num(r, "itemsInline") >= 1000 {
		t.Fatalf("get_task_run of a 1000-page run: %d bytes (budget %d), truncated %v, itemsInline %v of %v", n, budget, r["truncated"], r["itemsInline"], r["itemsTotal"])
	}
	if pages := r["pages"].([]any); int64(len(pages)) != num(r, "itemsInline") || sub(pages[0].(obj), "fields")["name"] != "Item 1" {
		t.Fatalf("inline pages: %d (itemsInline %v), first %v", len(pages), r["itemsInline"], pages[0])
	}
	data, _, _ := readArtifact(t, cs, r["artifactId"].(string), 0, 1<<20)
	var all []struct {
		URL  string `json:"url"`
		Text string `json:"text"`
	}
	if err := json.Unmarshal(data, &all); err != nil || len(all) != 1000 {
		t.Fatalf("the artifact the truncated result names should hold all 1000 pages: %v, %d", err, len(all))
	}
	for i, p := range all {
		if !strings.HasSuffix(p.URL, fmt.Sprintf("/page/%d", i+1)) || !strings.Contains(p.Text, fmt.Sprintf("Generated page %d.", i+1)) {
			t.Fatalf("pages.json[%d] = %s / %.60q", i, p.URL, p.Text)
		}
	}

	list, n := replySize(t, cs, "list_task_runs", obj{"limit": 50})
	rows := list["runs"].([]any)
	if n >= budget || len(rows) != 50 || list["truncated"] != nil {
		t.Fatalf("list_task_runs over 50 big runs: %d bytes, %d rows, truncated %v", n, len(rows), list["truncated"])
	}
	for _, row := range rows {
		if _, has := row.(obj)["result"]; has || num(row.(obj), "resultBytes") < 100000 {
			t.Fatalf("a list row carries its result or no resultBytes: resultBytes %v", row.(obj)["resultBytes"])
		}
	}
	t.Logf("get_task_run of the 1000-page run: %v pages inline, pages.json %d bytes; list of 50: %d bytes", r["itemsInline"], len(data), n)
}
