package acceptance

// Issue 26 item 1: a 2.6 KB page of 513 nested <div>s made the HTML
// parser give up, and the worker goroutine reading it panicked outside
// every guard: each of three serve processes on one database claimed the
// run in turn and died on it.

import (
	"fmt"
	"strings"
	"testing"

	"github.com/browsertask/browsertask/internal/fixture"
)

// TestBlackboxDeepPageThreeProcesses: three serve processes on one
// database, one batch_extract_pages run (render "http") of the deep page
// and a normal one. The run finishes partial_success: the deep page failed
// with STEP_EXECUTION_FAILED naming the parser's 512-level limit, the
// normal page was read; all three processes are still alive, and each
// still runs a run to success.
func TestBlackboxDeepPageThreeProcesses(t *testing.T) {
	t.Parallel()
	fx := fixture.New(t)
	first := startServe(t)
	procs := []*proc{first, startServe(t, "--db", first.db), startServe(t, "--db", first.db)}
	cs := connectHTTP(t, first, nil)
	deep, normal := fx.URL("/static/deep.html"), fx.URL("/static/about.html")
	id := submitAsync(t, cs, "batch_extract_pages", obj{"urls": []string{deep, normal}, "render": "http",
		"fields": obj{"name": "#name"}}, nil)
	run := waitTerminal(t, cs, id)
	for i, p := range procs {
		if p.exited() {
			t.Fatalf("process %d exited: %v\n%s", i+1, p.waitErr, p.logTail(40))
		}
	}
	pages, _ := sub(run, "result")["pages"].([]any)
	if run["status"] != "partial_success" || len(pages) != 2 {
		t.Fatalf("run: status %v, %d pages, error %v", run["status"], len(pages), run["error"])
	}
	dp, np := pages[0].(obj), pages[1].(obj)
	msg := fmt.Sprint(sub(dp, "error")["message"])
	if dp["url"] != deep || pageErrCode(dp) != "STEP_EXECUTION_FAILED" ||
		!strings.Contains(msg, "nests elements deeper than the HTML parser's limit of 512 levels") || !strings.Contains(msg, `render "browser"`) {
		t.Fatalf("deep page: %v", dp)
	}
	if np["url"] != normal || np["error"] != nil || sub(np, "fields")["name"] != "About" {
		t.Fatalf("normal page: %v", np)
	}
	// Every process still serves and runs runs.
	for i, p := range procs {
		pcs := connectHTTP(t, p, nil)
		ok := waitTerminal(t, pcs, submitAsync(t, pcs, "batch_extract_pages", obj{"urls": []string{fx.URL(fmt.Sprintf("/page/%d", i))}, "render": "http"}, nil))
		if ok["status"] != "succeeded" {
			t.Fatalf("process %d: next run %v %v", i+1, ok["status"], ok["error"])
		}
	}
	for i, p := range procs {
		if p.exited() || p.logLine("panic") {
			t.Fatalf("process %d: exited %v, panic logged:\n%s", i+1, p.exited(), p.logTail(40))
		}
	}
}
