package acceptance

// Acceptance 6: cancel of a batch_extract_pages run stuck on a page that never
// answers. The cancel answer already says canceled, the browser stops
// fetching within 2 s (the fixture sees the request aborted), and nothing
// written later changes the run.

import (
	"testing"
	"time"

	"github.com/browsertask/browsertask/internal/fixture"
)

func TestBlackboxCancelHangingRun(t *testing.T) {
	fixture.NeedChromium(t)
	t.Parallel()
	fx := fixture.New(t)
	cs := connectHTTP(t, startServe(t), nil)

	id := submitAsync(t, cs, "batch_extract_pages", obj{"urls": []any{fx.URL("/hang")}, "perPageTimeoutMs": 60000}, nil)
	ctx, cancel := fixture.Context(t)
	defer cancel()
	select {
	case <-fx.Hung():
	case <-ctx.Done():
		t.Fatalf("the browser never requested /hang; run: %v", getRun(t, cs, id))
	}
	if r := getRun(t, cs, id); r["status"] != "running" {
		t.Fatalf("while the browser waits on /hang the run should be running, got %v", r["status"])
	}
	drain(fx.Aborted())

	canceledAt := time.Now()
	c := callOK(t, cs, "cancel_task_run", obj{"runId": id, "reason": "stuck"})
	if c["success"] != true || c["status"] != "canceled" || c["runId"] != id {
		t.Fatalf("cancel answer: want success true, status canceled, got %v", c)
	}
	run := getRun(t, cs, id)
	if run["status"] != "canceled" || errCode(run) != "RUN_CANCELED" || run["result"] != nil {
		t.Fatalf("right after the cancel answer: want canceled/RUN_CANCELED/result null, got %v %v %v", run["status"], run["error"], run["result"])
	}
	if num(run, "finishedAt") < num(run, "createdAt") {
		t.Errorf("finishedAt %v", run["finishedAt"])
	}
	select {
	case at := <-fx.Aborted():
		if d := at.Sub(canceledAt); d > 2*time.Second {
			t.Errorf("the browser stopped fetching /hang %v after the cancel, want < 2 s", d)
		} else {
			t.Logf("browser stopped fetching %v after the cancel", d)
		}
	case <-time.After(2 * time.Second):
		t.Fatalf("the browser was still fetching /hang 2 s after the cancel")
	}

	time.Sleep(time.Second)
	later := getRun(t, cs, id)
	if later["status"] != "canceled" || num(later, "updatedAt") != num(run, "updatedAt") ||
		errCode(later) != "RUN_CANCELED" || num(later, "finishedAt") != num(run, "finishedAt") {
		t.Fatalf("a later write changed the canceled run: before %v/%v/%v, after %v/%v/%v",
			run["status"], run["updatedAt"], run["finishedAt"], later["status"], later["updatedAt"], later["finishedAt"])
	}
	if n := countRuns(t, cs, obj{"status": "running"}); n != 0 {
		t.Errorf("running runs after the cancel: %d", n)
	}
	// The server is still usable: a new run on a real page succeeds.
	ok := callOK(t, cs, "run_task_template", obj{"templateId": "batch_extract_pages",
		"inputs": obj{"urls": []any{fx.URL("/page/7")}}, "options": obj{"mode": "sync"}})
	if ok["status"] != "succeeded" {
		t.Fatalf("run after the cancel: %v %v", ok["status"], ok["error"])
	}
}
