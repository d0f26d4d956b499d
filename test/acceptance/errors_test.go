package acceptance

// Acceptance 3: every error code reachable in this scope, provoked through
// MCP against the built binary.
//
//	errorCode                     test
//	INVALID_PARAMETER             TestBlackboxErrors/invalid_parameter (10 fields)
//	TEMPLATE_NOT_FOUND            TestBlackboxErrors/not_found
//	TEMPLATE_VERSION_UNSUPPORTED  TestBlackboxErrors/not_found (dev_echo@9)
//	RUN_NOT_FOUND                 TestBlackboxErrors/not_found (get and cancel of run_nope)
//	SESSION_NOT_FOUND             TestBlackboxErrors/not_found (sessionId sess_nope)
//	ARTIFACT_NOT_FOUND            TestBlackboxErrors/not_found (art_nope)
//	RUN_CANCELED                  TestBlackboxErrors/canceled, blackbox_cancel_test.go
//	RUN_TIMEOUT                   TestBlackboxErrors/timeout (dev_echo), TestBlackboxBrowserErrors/run_timeout_hang (/hang)
//	STEP_EXECUTION_FAILED         TestBlackboxErrors/step_failed (dev_echo fail), TestBlackboxBrowserErrors/all_pages_fail
//	ARTIFACT_EXPIRED              TestBlackboxArtifactExpired (--artifact-ttl-ms 300)
//	NAVIGATION_TIMEOUT            TestBlackboxBrowserErrors/navigation_timeout (/hang, perPageTimeoutMs 1000)
//	EXECUTION_ERROR               TestBlackboxInterrupted (kill -9 with a dev_echo_once run in flight)
//
// Not reachable in this scope (other templates/issues): ELEMENT_NOT_FOUND,
// PAGE_CRASHED, TRUST_LEVEL_NOT_ALLOWED, TPL_LOGIN_FIELD_NOT_FOUND.

import (
	"strings"
	"testing"
	"time"

	"github.com/browsertask/browsertask/internal/fixture"
)

func TestBlackboxErrors(t *testing.T) {
	t.Parallel()
	cs := connectHTTP(t, startServe(t), nil)
	echo := func(inputs obj, opts obj) obj {
		a := obj{"templateId": "dev_echo", "inputs": inputs}
		if opts != nil {
			a["options"] = opts
		}
		return a
	}

	t.Run("invalid_parameter", func(t *testing.T) {
		cases := []struct {
			name, tool string
			args       obj
			field      []string // every string must appear in the message
		}{
			{"options.mode", "run_task_template", echo(obj{}, obj{"mode": "fast"}), []string{"options.mode"}},
			{"options.timeoutMs 0", "run_task_template", echo(obj{}, obj{"timeoutMs": 0}), []string{"options.timeoutMs"}},
			{"options.timeoutMs 600001", "run_task_template", echo(obj{}, obj{"timeoutMs": 600001}), []string{"options.timeoutMs"}},
			{"sync timeoutMs above syncTimeoutMs", "run_task_template", echo(obj{}, obj{"mode": "sync", "timeoutMs": 300001}), []string{"options.timeoutMs"}},
			{"options.idempotencyKey too long", "run_task_template", echo(obj{}, obj{"idempotencyKey": strings.Repeat("k", 201)}), []string{"options.idempotencyKey"}},
			{"inputs unknown property", "run_task_template", echo(obj{"bogusField": 1}, nil), []string{"inputs", "bogusField"}},
			{"inputs wrong type", "run_task_template", echo(obj{"sleepMs": "slow"}, nil), []string{"inputs.sleepMs"}},
			{"inputs.urls empty", "run_task_template", obj{"templateId": "batch_extract_pages", "inputs": obj{"urls": []any{}}}, []string{"urls"}},
			{"inputs.urls not a URL", "run_task_template", obj{"templateId": "batch_extract_pages", "inputs": obj{"urls": []any{"not a url"}}}, []string{"urls"}},
			{"templateId missing", "run_task_template", obj{"inputs": obj{}}, []string{"templateId"}},
			{"outputSchema extract_structured cannot fill", "run_task_template", obj{"templateId": "extract_structured",
				"inputs": obj{"urls": []any{"http://127.0.0.1:9/p"}}, "options": obj{"outputSchema": obj{"type": "string"}}}, []string{"options.outputSchema"}},
			{"list limit 0", "list_task_runs", obj{"limit": 0}, []string{"limit"}},
			{"list limit 1001", "list_task_runs", obj{"limit": 1001}, []string{"limit"}},
			{"list offset -1", "list_task_runs", obj{"offset": -1}, []string{"offset"}},
			{"list status bogus", "list_task_runs", obj{"status": "bogus"}, []string{"status"}},
			{"get_artifact offset -1", "get_artifact", obj{"artifactId": "art_x", "offset": -1}, []string{"offset"}},
			{"get_artifact length 0", "get_artifact", obj{"artifactId": "art_x", "length": 0}, []string{"length"}},
			{"get_task_run runId missing", "get_task_run", obj{}, []string{"runId"}},
		}
		for _, c := range cases {
			code, msg := callErr(t, cs, c.tool, c.args)
			if code != "INVALID_PARAMETER" {
				t.Errorf("%s: want INVALID_PARAMETER, got %s: %s", c.name, code, msg)
				continue
			}
			for _, f := range c.field {
				if !strings.Contains(msg, f) {
					t.Errorf("%s: message must name %q: %s", c.name, f, msg)
				}
			}
		}
		// Unknown top-level and options fields are ignored (forward compatibility).
		run := callOK(t, cs, "run_task_template", obj{"templateId": "dev_echo", "inputs": obj{},
			"future": 1, "options": obj{"mode": "sync", "futureOption": true}})
		if run["status"] != "succeeded" {
			t.Errorf("unknown top-level/options fields must be ignored, got %v", run["status"])
		}
		if got := countRuns(t, cs, obj{"templateId": "dev_echo"}); got != 1 {
			t.Errorf("rejected submissions must create no run: dev_echo total %d, want 1", got)
		}
		if got := countRuns(t, cs, obj{"templateId": "extract_structured"}); got != 0 {
			t.Errorf("a refused outputSchema must create no run: extract_structured total %d, want 0", got)
		}
	})

	t.Run("not_found", func(t *testing.T) {
		for _, c := range []struct {
			tool string
			args obj
			want string
		}{
			{"run_task_template", obj{"templateId": "no_such_template", "inputs": obj{}}, "TEMPLATE_NOT_FOUND"},
			{"run_task_template", obj{"templateId": "dev_echo@9", "inputs": obj{}}, "TEMPLATE_VERSION_UNSUPPORTED"},
			{"get_task_run", obj{"runId": "run_nope"}, "RUN_NOT_FOUND"},
			{"get_task_run", obj{"runId": "run_00000000-0000-4000-8000-000000000000"}, "RUN_NOT_FOUND"},
			{"cancel_task_run", obj{"runId": "run_nope"}, "RUN_NOT_FOUND"},
			{"run_task_template", obj{"templateId": "dev_echo", "sessionId": "sess_nope", "inputs": obj{}}, "SESSION_NOT_FOUND"},
			{"get_artifact", obj{"artifactId": "art_nope"}, "ARTIFACT_NOT_FOUND"},
		} {
			if code, msg := callErr(t, cs, c.tool, c.args); code != c.want {
				t.Errorf("%s %v: want %s, got %s: %s", c.tool, c.args, c.want, code, msg)
			}
		}
		// dev_echo@1 is a valid pin.
		if r := callOK(t, cs, "run_task_template", obj{"templateId": "dev_echo@1", "inputs": obj{}, "options": obj{"mode": "sync"}}); r["status"] != "succeeded" || num(r, "templateVersion") != 1 {
			t.Errorf("dev_echo@1: %v %v", r["status"], r["templateVersion"])
		}
	})

	t.Run("canceled", func(t *testing.T) {
		id := submitAsync(t, cs, "dev_echo", obj{"sleepMs": 100, "items": 100}, nil)
		c := callOK(t, cs, "cancel_task_run", obj{"runId": id, "reason": "errors test"})
		if c["success"] != true || c["status"] != "canceled" {
			t.Fatalf("cancel: %v", c)
		}
		run := getRun(t, cs, id)
		if run["status"] != "canceled" || errCode(run) != "RUN_CANCELED" {
			t.Fatalf("want canceled/RUN_CANCELED, got %v %v", run["status"], run["error"])
		}
	})

	t.Run("timeout", func(t *testing.T) {
		start := time.Now()
		run, isErr := call(t, cs, "run_task_template", echo(obj{"sleepMs": 10000}, obj{"mode": "sync", "timeoutMs": 300}))
		if !isErr || run["status"] != "failed" || errCode(run) != "RUN_TIMEOUT" {
			t.Fatalf("want isError failed RUN_TIMEOUT, got %v %v", isErr, run)
		}
		if d := time.Since(start); d > 3*time.Second {
			t.Errorf("a 300 ms timeout took %v to end the run", d)
		}
	})

	t.Run("step_failed", func(t *testing.T) {
		run, isErr := call(t, cs, "run_task_template", echo(obj{"fail": true}, obj{"mode": "sync"}))
		if !isErr || run["status"] != "failed" || errCode(run) != "STEP_EXECUTION_FAILED" {
			t.Fatalf("want isError failed STEP_EXECUTION_FAILED, got %v %v", isErr, run)
		}
		if d := sub(sub(run, "error"), "details"); d == nil || d["stepIndex"] == nil {
			t.Errorf("STEP_EXECUTION_FAILED details should name the step: %v", run["error"])
		}
	})
}

func TestBlackboxArtifactExpired(t *testing.T) {
	t.Parallel()
	cs := connectHTTP(t, startServe(t, "--artifact-ttl-ms", "300", "--janitor-interval-ms", "100"), nil)
	run := callOK(t, cs, "run_task_template", obj{"templateId": "dev_echo",
		"inputs": obj{"content": "soon gone", "mimeType": "text/plain"}, "options": obj{"mode": "sync"}})
	art := run["artifactIds"].([]any)[0].(string)
	time.Sleep(500 * time.Millisecond)
	if code, msg := callErr(t, cs, "get_artifact", obj{"artifactId": art}); code != "ARTIFACT_EXPIRED" {
		t.Fatalf("artifact read after its TTL: want ARTIFACT_EXPIRED, got %s: %s", code, msg)
	}
	// A second read (after the janitor ran) still tells expired from unknown.
	time.Sleep(300 * time.Millisecond)
	if code, _ := callErr(t, cs, "get_artifact", obj{"artifactId": art}); code != "ARTIFACT_EXPIRED" {
		t.Errorf("tombstone: want ARTIFACT_EXPIRED after the janitor ran, got %s", code)
	}
	if code, _ := callErr(t, cs, "get_artifact", obj{"artifactId": "art_never"}); code != "ARTIFACT_NOT_FOUND" {
		t.Errorf("unknown artifact: want ARTIFACT_NOT_FOUND, got %s", code)
	}
}

// TestBlackboxInterrupted kills a serve with a non-resumable and a resumable
// run in flight; a new process on the same database fails the first with
// EXECUTION_ERROR "interrupted…" and finishes the second.
func TestBlackboxInterrupted(t *testing.T) {
	t.Parallel()
	a := startServe(t)
	csA := connectHTTP(t, a, nil)
	once := submitAsync(t, csA, "dev_echo_once", obj{"sleepMs": 100, "items": 100}, nil)
	resumable := submitAsync(t, csA, "dev_echo", obj{"sleepMs": 100, "items": 15}, nil)
	for _, id := range []string{once, resumable} {
		waitRun(t, csA, id, "doneSteps >= 2", func(r obj) bool {
			return r["status"] == "running" && num(sub(r, "progress"), "doneSteps") >= 2
		})
	}
	a.kill9()

	b := startServe(t, "--db", a.db)
	csB := connectHTTP(t, b, nil)
	run := waitTerminal(t, csB, once)
	msg, _ := sub(run, "error")["message"].(string)
	if run["status"] != "failed" || errCode(run) != "EXECUTION_ERROR" || !strings.Contains(msg, "interrupted") {
		t.Fatalf("non-resumable run after kill -9: want failed EXECUTION_ERROR \"interrupted…\", got %v %v", run["status"], run["error"])
	}
	res := waitTerminal(t, csB, resumable)
	if res["status"] != "succeeded" || num(sub(res, "progress"), "doneSteps") != 15 {
		t.Fatalf("resumable run after kill -9: want succeeded with 15 steps, got %v %v", res["status"], res["progress"])
	}
	if n := countRuns(t, csB, obj{"status": "running"}); n != 0 {
		t.Errorf("runs left running: %d", n)
	}
}

// pageErrCode returns a page's error code whether the error is an object
// {errorCode,…} or a string naming the code.
func pageErrCode(page obj) string {
	switch e := page["error"].(type) {
	case obj:
		s, _ := e["errorCode"].(string)
		if s == "" {
			s, _ = e["code"].(string)
		}
		return s
	case string:
		for _, c := range []string{"NAVIGATION_TIMEOUT", "STEP_EXECUTION_FAILED", "EXECUTION_ERROR", "INVALID_PARAMETER"} {
			if strings.Contains(e, c) {
				return c
			}
		}
		return e
	}
	return ""
}

func TestBlackboxBrowserErrors(t *testing.T) {
	fixture.NeedChromium(t)
	t.Parallel()
	fx := fixture.New(t)
	cs := connectHTTP(t, startServe(t), nil)

	t.Run("navigation_timeout", func(t *testing.T) {
		// perPageTimeoutMs applies to both pages: it must leave a loaded
		// machine time to open a tab and load /page/1 (1000 ms did not at
		// load 20-35, and the fast page failed too), while /hang never
		// answers whatever the bound.
		run, isErr := call(t, cs, "run_task_template", obj{"templateId": "batch_extract_pages",
			// retries 0: the 10 s deadline once, not retried twice.
			"inputs":  obj{"urls": []any{fx.URL("/hang"), fx.URL("/page/1")}, "perPageTimeoutMs": 10000, "retries": 0},
			"options": obj{"mode": "sync", "timeoutMs": 60000}})
		if isErr || run["status"] != "partial_success" {
			t.Fatalf("one hanging page of two: want partial_success, got isError=%v %v %v", isErr, run["status"], run["error"])
		}
		res := sub(run, "result")
		pages, _ := res["pages"].([]any)
		if len(pages) != 2 {
			t.Fatalf("want 2 pages in the result, got %v", res)
		}
		p0, p1 := pages[0].(obj), pages[1].(obj)
		if code := pageErrCode(p0); code != "NAVIGATION_TIMEOUT" {
			t.Errorf("/hang page: want error NAVIGATION_TIMEOUT, got %v", p0["error"])
		}
		if p1["error"] != nil || p1["title"] != "Page 1" {
			t.Errorf("/page/1: want no error and title Page 1, got %v", p1)
		}
		s := sub(res, "summary")
		if num(s, "total") != 2 || num(s, "succeeded") != 1 || num(s, "failed") != 1 {
			t.Errorf("summary: want 2/1/1, got %v", s)
		}
		if pr := sub(run, "progress"); num(pr, "failedSteps") != 1 || num(pr, "doneSteps") != 2 {
			t.Errorf("progress: want doneSteps 2, failedSteps 1, got %v", pr)
		}
	})

	t.Run("all_pages_fail", func(t *testing.T) {
		run, isErr := call(t, cs, "run_task_template", obj{"templateId": "batch_extract_pages",
			"inputs":  obj{"urls": []any{fx.URL("/hang"), fx.URL("/status/404"), fx.URL("/status/500")}, "perPageTimeoutMs": 1000},
			"options": obj{"mode": "sync", "timeoutMs": 60000}})
		if !isErr || run["status"] != "failed" || errCode(run) != "STEP_EXECUTION_FAILED" {
			t.Fatalf("all pages failing: want isError failed STEP_EXECUTION_FAILED, got %v %v %v", isErr, run["status"], run["error"])
		}
		if sub(sub(run, "error"), "details") == nil {
			t.Errorf("STEP_EXECUTION_FAILED should carry the first errors in details: %v", run["error"])
		}
	})

	t.Run("run_timeout_hang", func(t *testing.T) {
		// The timeout must leave the browser time to reach /hang: the
		// promise checked is "once RUN_TIMEOUT is answered, the browser has
		// stopped fetching", which says nothing when the run timed out
		// before its tab even asked for the page (with timeoutMs 1500 on a
		// loaded machine, launching the tab alone could take that long).
		const timeoutMs = 8000
		drain(fx.Aborted())
		drain(fx.Hung())
		start := time.Now()
		run, isErr := call(t, cs, "run_task_template", obj{"templateId": "batch_extract_pages",
			"inputs":  obj{"urls": []any{fx.URL("/hang")}, "perPageTimeoutMs": 60000},
			"options": obj{"mode": "sync", "timeoutMs": timeoutMs}})
		answered := time.Now()
		if !isErr || run["status"] != "failed" || errCode(run) != "RUN_TIMEOUT" {
			t.Fatalf("hang with timeoutMs %d: want isError failed RUN_TIMEOUT, got %v %v %v", timeoutMs, isErr, run["status"], run["error"])
		}
		// When the run timed out is read on the server's clock, from the
		// start of its execution (timeoutMs counts from there, not from a
		// queue wait or the client's call on a loaded machine).
		if ran := num(run, "finishedAt") - num(run, "startedAt"); ran < timeoutMs || ran > timeoutMs+2000 {
			t.Errorf("RUN_TIMEOUT after %d ms of execution for timeoutMs %d (answered %v after the call)", ran, timeoutMs, answered.Sub(start))
		}
		select {
		case <-fx.Hung():
		default:
			t.Fatalf("the browser never requested /hang within timeoutMs %d: nothing to stop", timeoutMs)
		}
		select {
		case at := <-fx.Aborted():
			if at.Sub(answered) > 2*time.Second {
				t.Errorf("browser stopped fetching /hang %v after the timeout answer", at.Sub(answered))
			}
		case <-time.After(2 * time.Second):
			t.Errorf("the browser did not stop fetching /hang within 2 s of RUN_TIMEOUT")
		}
	})
}

// drain empties a time channel.
func drain(c <-chan time.Time) {
	for {
		select {
		case <-c:
		default:
			return
		}
	}
}
