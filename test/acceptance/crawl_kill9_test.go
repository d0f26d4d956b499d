package acceptance

// Issue 15, acceptance: a crawl killed with kill -9 resumes without
// fetching a finished page again. crawl_site's frontier lives in the run's
// checkpoints; the next process on the same database rebuilds it and
// visits only what was not finished, however the pages finished out of
// order.

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/browsertask/browsertask/internal/fixture"
)

// TestBlackboxCrawlKill9Resume crawls the fixture's big site, whose pages
// answer after 20–80 ms so four tabs finish them out of order, kills the
// daemon once some pages are checkpointed, and resumes in a new process.
func TestBlackboxCrawlKill9Resume(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		render           string
		maxPages, killAt int
	}{
		{render: "http", maxPages: 200, killAt: 30},
		{render: "browser", maxPages: 80, killAt: 15},
	} {
		t.Run(c.render, func(t *testing.T) {
			if c.render == "browser" {
				fixture.NeedChromium(t)
			}
			t.Parallel()
			crawlKill9(t, c.render, c.maxPages, c.killAt)
		})
	}
}

// crawlKill9 is one kill -9 and resume of a crawl of maxPages pages (depth
// at most 3) over the big site read by render, killed once killAt pages
// are done.
func crawlKill9(t *testing.T, render string, maxPages, killAt int) {
	const prefix = "/big/slow/20/"
	fx := fixture.New(t)
	pageOf := func(u string) int {
		var n int
		if _, err := fmt.Sscanf(strings.TrimPrefix(u, fx.URL(prefix)), "%d", &n); err != nil {
			t.Fatalf("a page outside the crawled site: %s", u)
		}
		return n
	}

	a := startServe(t)
	csA := connectHTTP(t, a, nil)
	id := submitAsync(t, csA, "crawl_site", obj{"startUrl": fx.URL(prefix + "0"), "maxPages": maxPages, "maxDepth": 3,
		"concurrency": 4, "render": render, "fields": obj{"h": "h1"}}, nil)
	before := waitRun(t, csA, id, fmt.Sprintf("doneSteps >= %d", killAt), func(r obj) bool {
		if terminal(r["status"]) {
			t.Fatalf("run ended before the kill: %v %v", r["status"], r["error"])
		}
		return num(sub(r, "progress"), "doneSteps") >= int64(killAt)
	})
	a.kill9()

	items := checkpointedItems(t, a.db, id)
	if len(items) < int(num(sub(before, "progress"), "doneSteps")) {
		t.Fatalf("%d checkpoints in the database, fewer than the %v done steps reported", len(items), sub(before, "progress")["doneSteps"])
	}
	if len(items) >= maxPages {
		t.Fatalf("all %d pages were checkpointed before the kill: nothing left to resume", len(items))
	}
	done := map[int]bool{}
	for _, key := range items {
		n := pageOf(key)
		if done[n] {
			t.Fatalf("page %d checkpointed twice before the kill", n)
		}
		done[n] = true
		if h := fx.Hits(fmt.Sprintf("%s%d", prefix, n)); h != 1 {
			t.Errorf("checkpointed page %d fetched %d times before the kill", n, h)
		}
	}
	t.Logf("%s: %d of %d pages checkpointed at the kill", render, len(items), maxPages)

	b := startServe(t, "--db", a.db)
	csB := connectHTTP(t, b, nil)
	run := waitTerminal(t, csB, id)
	if run["status"] != "succeeded" {
		t.Fatalf("resumed run: want succeeded, got %v %v", run["status"], run["error"])
	}
	res := sub(run, "result")
	if s := sub(res, "summary"); num(s, "total") != int64(maxPages) || num(s, "succeeded") != int64(maxPages) || num(s, "failed") != 0 {
		t.Errorf("summary after resume: want %d/%d/0, got %v", maxPages, maxPages, s)
	}
	art, _ := res["artifactId"].(string)
	data, _, _ := readArtifact(t, csB, art, 0, 1<<40)
	var pages []struct {
		URL    string         `json:"url"`
		Depth  int            `json:"depth"`
		Fields map[string]any `json:"fields"`
		Error  any            `json:"error"`
	}
	if err := json.Unmarshal(data, &pages); err != nil {
		t.Fatalf("pages.json: %v", err)
	}
	if len(pages) != maxPages {
		t.Fatalf("pages.json: %d pages, want %d", len(pages), maxPages)
	}
	crawled := map[int]bool{}
	for _, p := range pages {
		n := pageOf(p.URL)
		if crawled[n] {
			t.Fatalf("page %d twice in the result", n)
		}
		crawled[n] = true
		if p.Depth != fixture.BigSiteDepth(n) || p.Depth > 3 || p.Error != nil || p.Fields["h"] != fmt.Sprintf("Page %d", n) {
			t.Errorf("page %d: %+v", n, p)
		}
	}
	for n := range crawled {
		if n > 0 && !crawled[(n-1)/8] {
			t.Errorf("page %d crawled without its parent", n)
		}
	}
	for n := range done {
		if !crawled[n] {
			t.Errorf("page %d, checkpointed before the kill, is missing from the result", n)
		}
	}
	fetchedTwice := 0
	for n := 0; n < fixture.BigSitePages; n++ {
		h := fx.Hits(fmt.Sprintf("%s%d", prefix, n))
		switch {
		case h > 0 && !crawled[n]:
			t.Errorf("page %d fetched %d times but not in the result (beyond maxPages)", n, h)
		case done[n] && h != 1:
			t.Errorf("page %d was checkpointed before the kill but fetched %d times in all", n, h)
		case h > 2 || (crawled[n] && h == 0):
			t.Errorf("page %d fetched %d times", n, h)
		case h == 2:
			fetchedTwice++ // in flight at the kill: never checkpointed
		}
	}
	if fetchedTwice > 4 {
		t.Errorf("%d pages fetched twice; at most the 4 in flight at the kill may be", fetchedTwice)
	}
	if all := checkpointedItems(t, a.db, id); len(all) != maxPages {
		t.Errorf("%d checkpoints after the resume, want %d", len(all), maxPages)
	}
	if n := countRuns(t, csB, obj{"status": "running"}); n != 0 {
		t.Errorf("runs left running: %d", n)
	}
}

// TestBlackboxCrawlMaxPagesOverMaxURLs: maxPages is bounded by the
// server's maxUrls (1000 by default), not by the schema: more is refused
// at submit, naming the field and the limit.
func TestBlackboxCrawlMaxPagesOverMaxURLs(t *testing.T) {
	t.Parallel()
	fx := fixture.New(t)
	p := startServe(t)
	cs := connectHTTP(t, p, nil)
	code, msg := callErr(t, cs, "run_task_template", obj{"templateId": "crawl_site",
		"inputs": obj{"startUrl": fx.URL("/big/0"), "maxPages": 5000}, "options": obj{"mode": "async"}})
	if code != "INVALID_PARAMETER" || !strings.Contains(msg, "inputs.maxPages") || !strings.Contains(msg, "maxUrls 1000") {
		t.Fatalf("maxPages 5000 on a server with maxUrls 1000: %s %q, want INVALID_PARAMETER naming inputs.maxPages and maxUrls 1000", code, msg)
	}
	if n := countRuns(t, cs, obj{}); n != 0 {
		t.Fatalf("%d runs created by a refused submission", n)
	}
}
