package mcp

import (
	"context"
	"encoding/json"
	"reflect"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/browsertask/browsertask/engine"
)

func TestTasksCapabilityAndToolExecution(t *testing.T) {
	eng := newEngine(t, taskTestConfig())
	srv := NewServer(eng, ServerOptions{Version: "test"})
	p := startRawPeer(t, srv)
	caps := p.initResult["capabilities"].(map[string]any)
	want := map[string]any{"list": map[string]any{}, "cancel": map[string]any{},
		"requests": map[string]any{"tools": map[string]any{"call": map[string]any{}}}}
	if !reflect.DeepEqual(caps["tasks"], want) {
		t.Fatalf("capabilities.tasks = %v, want %v", caps["tasks"], want)
	}
	if caps["tools"] == nil || caps["resources"] == nil {
		t.Fatalf("tools/resources capabilities missing: %v", caps)
	}
	tools := p.mustCall("tools/list", map[string]any{})["tools"].([]any)
	if len(tools) < 7 {
		t.Fatalf("tools/list: %d tools", len(tools))
	}
	for _, raw := range tools {
		tool := raw.(map[string]any)
		exec, has := tool["execution"]
		if tool["name"] == taskToolName {
			if !reflect.DeepEqual(exec, map[string]any{"taskSupport": "optional"}) {
				t.Fatalf("run_task_template execution = %v", exec)
			}
		} else if has {
			t.Fatalf("tool %v has execution %v; only run_task_template may", tool["name"], exec)
		}
	}
}

func TestTaskLifecycleOverStdio(t *testing.T) {
	synctest.Test(t, testTaskLifecycleOverStdio)
}

func testTaskLifecycleOverStdio(t *testing.T) {
	eng := newEngine(t, taskTestConfig())
	srv := NewServer(eng, ServerOptions{Version: "test"})
	p := startRawPeer(t, srv)

	params := taskCall(map[string]any{"items": 8, "sleepMs": 80}, map[string]any{"ttl": 60000}, nil)
	params["_meta"] = map[string]any{"progressToken": "p1"}
	createID, ch := p.start("tools/call", params)
	created, rerr := p.await(ch)
	if rerr != nil {
		t.Fatalf("task-augmented call: %v", rerr)
	}
	task := created["task"].(map[string]any)
	id, _ := task["taskId"].(string)
	if !strings.HasPrefix(id, "run_") || task["status"] != taskWorking {
		t.Fatalf("CreateTaskResult task = %v", task)
	}
	// ttl 60000 is floored at runTtlMs (120000 here); pollInterval is the profile's.
	if task["ttl"] != float64(120000) || task["pollInterval"] != float64(500) {
		t.Fatalf("ttl/pollInterval = %v/%v, want 120000/500", task["ttl"], task["pollInterval"])
	}
	for _, k := range []string{"createdAt", "lastUpdatedAt"} {
		s, _ := task[k].(string)
		if ts, err := time.Parse(time.RFC3339Nano, s); err != nil || !strings.HasSuffix(s, "Z") || time.Since(ts) > time.Minute {
			t.Fatalf("%s = %q is not a recent RFC 3339 UTC time (%v)", k, s, err)
		}
	}
	meta := created["_meta"].(map[string]any)
	if msg, _ := meta[metaImmediateResponse].(string); !strings.Contains(msg, id) {
		t.Fatalf("model-immediate-response = %q", msg)
	}
	if run, err := eng.Get(context.Background(), id); err != nil || run.Mode != engine.ModeAsync {
		t.Fatalf("run %s: %v, %v (mode forced async)", id, run, err)
	}

	// tasks/result blocks while the task works; tasks/get answers meanwhile.
	_, resultCh := p.start("tasks/result", map[string]any{"taskId": id})
	got := p.mustCall("tasks/get", map[string]any{"taskId": id})
	if got["taskId"] != id || got["status"] != taskWorking {
		t.Fatalf("tasks/get while working = %v", got)
	}
	select {
	case m := <-resultCh:
		t.Fatalf("tasks/result answered before the run ended: %v", m)
	default:
	}
	res, rerr := p.await(resultCh)
	if rerr != nil {
		t.Fatalf("tasks/result: %v", rerr)
	}
	rel := res["_meta"].(map[string]any)[metaRelatedTask].(map[string]any)
	if rel["taskId"] != id {
		t.Fatalf("related-task = %v", rel)
	}
	if res["isError"] == true {
		t.Fatalf("tasks/result isError for a succeeded run: %v", res)
	}
	// Exactly what a sync call returns for that run.
	run, err := eng.Get(context.Background(), id)
	if err != nil {
		t.Fatal(err)
	}
	wantSC, _ := json.Marshal(srv.syncReply(context.Background(), run, dedupInfo{}).StructuredContent)
	gotSC, _ := json.Marshal(res["structuredContent"])
	var a, b any
	_ = json.Unmarshal(wantSC, &a)
	_ = json.Unmarshal(gotSC, &b)
	if !reflect.DeepEqual(a, b) {
		t.Fatalf("tasks/result structuredContent\n got %s\nwant %s", gotSC, wantSC)
	}
	if sc := res["structuredContent"].(map[string]any); sc["status"] != "succeeded" || sc["mode"] != "sync" {
		t.Fatalf("structuredContent = %v", sc)
	}
	got = p.mustCall("tasks/get", map[string]any{"taskId": id})
	if got["status"] != taskCompleted {
		t.Fatalf("tasks/get after the end = %v", got)
	}

	// Progress: increasing, throttled, continuing after the CreateTaskResult.
	eventually(t, "final progress", func() bool {
		ps := p.notifications("notifications/progress")
		return len(ps) > 0 && ps[len(ps)-1].params["progress"] == float64(8)
	})
	ps := p.notifications("notifications/progress")
	after := 0
	for i, n := range ps {
		if n.params["progressToken"] != "p1" || n.params["total"] != float64(8) {
			t.Fatalf("progress %d = %v", i, n.params)
		}
		if i > 0 && n.params["progress"].(float64) <= ps[i-1].params["progress"].(float64) {
			t.Fatalf("progress not increasing: %v then %v", ps[i-1].params, n.params)
		}
		if i > 0 && i < len(ps)-1 && n.at.Sub(ps[i-1].at) < 150*time.Millisecond {
			t.Fatalf("progress not throttled: %v apart", n.at.Sub(ps[i-1].at))
		}
		if n.seq > p.answerSeq(createID) {
			after++
		}
	}
	if len(ps) < 2 || after < 2 {
		t.Fatalf("want >= 2 progress notifications after the CreateTaskResult, got %d of %d", after, len(ps))
	}
	// notifications/tasks/status: the change to completed, a full Task
	// without related-task meta.
	eventually(t, "status notification", func() bool {
		return len(p.notifications("notifications/tasks/status")) > 0
	})
	st := p.notifications("notifications/tasks/status")
	last := st[len(st)-1].params
	if last["taskId"] != id || last["status"] != taskCompleted || last["ttl"] != float64(120000) || last["createdAt"] == nil {
		t.Fatalf("tasks/status notification = %v", last)
	}
	if _, has := last["_meta"]; has {
		t.Fatalf("tasks/status carries _meta: %v", last)
	}
}

func TestTaskTTLCappedAndFloored(t *testing.T) {
	eng := newEngine(t, taskTestConfig())
	p := startRawPeer(t, NewServer(eng, ServerOptions{Version: "test"}))
	for _, c := range []struct {
		task map[string]any
		want float64
	}{
		{map[string]any{}, 120000},                 // none requested: runTtlMs
		{map[string]any{"ttl": 1000}, 120000},      // floored at runTtlMs
		{map[string]any{"ttl": 600000}, 600000},    // granted as asked
		{map[string]any{"ttl": 99999999}, 3600000}, // capped at maxTaskTtlMs
	} {
		res := p.mustCall("tools/call", taskCall(map[string]any{"items": 1}, c.task, nil))
		task := res["task"].(map[string]any)
		if task["ttl"] != c.want {
			t.Fatalf("task %v: ttl %v, want %v", c.task, task["ttl"], c.want)
		}
		got := p.mustCall("tasks/get", map[string]any{"taskId": task["taskId"]})
		if got["ttl"] != c.want {
			t.Fatalf("tasks/get ttl %v, want %v", got["ttl"], c.want)
		}
	}
	_, rerr := p.call("tools/call", taskCall(map[string]any{"items": 1}, map[string]any{"ttl": -5}, nil))
	wantRPCError(t, "negative ttl", rerr, -32602, "")
}

func TestTaskIdempotencyKeyGivesTheSameTask(t *testing.T) {
	synctest.Test(t, testTaskIdempotencyKeyGivesTheSameTask)
}

func testTaskIdempotencyKeyGivesTheSameTask(t *testing.T) {
	eng := newEngine(t, taskTestConfig())
	p := startRawPeer(t, NewServer(eng, ServerOptions{Version: "test"}))
	opts := map[string]any{"options": map[string]any{"idempotencyKey": "k-1", "mode": "sync"}}
	a := p.mustCall("tools/call", taskCall(map[string]any{"items": 3, "sleepMs": 100}, map[string]any{}, opts))["task"].(map[string]any)
	b := p.mustCall("tools/call", taskCall(map[string]any{"items": 3, "sleepMs": 100}, map[string]any{}, opts))["task"].(map[string]any)
	if a["taskId"] != b["taskId"] {
		t.Fatalf("same idempotencyKey gave tasks %v and %v", a["taskId"], b["taskId"])
	}
	// mode sync in the arguments is overridden: a task is always async.
	if run, err := eng.Get(context.Background(), a["taskId"].(string)); err != nil || run.Mode != engine.ModeAsync {
		t.Fatalf("run mode %v, %v", run, err)
	}
}

func TestTaskFailedRun(t *testing.T) {
	eng := newEngine(t, taskTestConfig())
	p := startRawPeer(t, NewServer(eng, ServerOptions{Version: "test"}))
	task := p.mustCall("tools/call", taskCall(map[string]any{"items": 2, "fail": true}, map[string]any{}, nil))["task"].(map[string]any)
	id := task["taskId"].(string)
	res := p.mustCall("tasks/result", map[string]any{"taskId": id})
	if res["isError"] != true {
		t.Fatalf("tasks/result of a failed run: isError %v", res["isError"])
	}
	sc := res["structuredContent"].(map[string]any)
	e := sc["error"].(map[string]any)
	if sc["status"] != "failed" || e["errorCode"] != "STEP_EXECUTION_FAILED" || e["message"] == "" || e["recovery"] == "" {
		t.Fatalf("failed run result = %v", sc)
	}
	got := p.mustCall("tasks/get", map[string]any{"taskId": id})
	if got["status"] != taskFailed || got["statusMessage"] != e["message"] {
		t.Fatalf("tasks/get of a failed run = %v (error message %q)", got, e["message"])
	}
}

func TestTaskCancelAndProtocolErrors(t *testing.T) {
	eng := newEngine(t, taskTestConfig())
	p := startRawPeer(t, NewServer(eng, ServerOptions{Version: "test"}))
	slow := p.mustCall("tools/call", taskCall(map[string]any{"items": 200, "sleepMs": 50}, map[string]any{}, nil))["task"].(map[string]any)
	id := slow["taskId"].(string)
	_, resultCh := p.start("tasks/result", map[string]any{"taskId": id})
	got := p.mustCall("tasks/cancel", map[string]any{"taskId": id})
	if got["taskId"] != id || got["status"] != taskCancelled || !strings.Contains(got["statusMessage"].(string), "tasks/cancel") {
		t.Fatalf("tasks/cancel = %v", got)
	}
	run, err := eng.Get(context.Background(), id)
	if err != nil || run.Status != engine.StatusCanceled || run.Error == nil || run.Error.Code != engine.RunCanceled {
		t.Fatalf("run after tasks/cancel: %+v, %v", run, err)
	}
	res, rerr := p.await(resultCh)
	if rerr != nil || res["isError"] != true || res["structuredContent"].(map[string]any)["status"] != "canceled" {
		t.Fatalf("tasks/result of the cancelled task: %v %v", res, rerr)
	}
	_, rerr = p.call("tasks/cancel", map[string]any{"taskId": id})
	wantRPCError(t, "cancel cancelled", rerr, -32602, "Cannot cancel task: already in terminal status 'cancelled'")

	done := p.mustCall("tools/call", taskCall(map[string]any{"items": 1}, map[string]any{}, nil))["task"].(map[string]any)
	p.mustCall("tasks/result", map[string]any{"taskId": done["taskId"]})
	_, rerr = p.call("tasks/cancel", map[string]any{"taskId": done["taskId"]})
	wantRPCError(t, "cancel completed", rerr, -32602, "Cannot cancel task: already in terminal status 'completed'")

	for _, m := range []string{"tasks/get", "tasks/result", "tasks/cancel"} {
		_, rerr = p.call(m, map[string]any{"taskId": "run_00000000-0000-4000-8000-000000000000"})
		wantRPCError(t, m+" unknown", rerr, -32602, "Failed to retrieve task: Task not found")
		_, rerr = p.call(m, map[string]any{})
		wantRPCError(t, m+" without taskId", rerr, -32602, "")
	}
	for _, c := range []string{"not-a-cursor", "dDE6eHg6cnVuXzE", ""} {
		_, rerr = p.call("tasks/list", map[string]any{"cursor": c})
		wantRPCError(t, "bad cursor "+c, rerr, -32602, "")
	}
	_, rerr = p.call("tools/call", map[string]any{"name": "get_task_run", "arguments": map[string]any{"runId": id}, "task": map[string]any{}})
	wantRPCError(t, "task on get_task_run", rerr, -32601, "")

	// Argument errors before any run: -32602 with the contract's error object.
	for _, c := range []struct {
		params map[string]any
		code   string
	}{
		{taskCall(map[string]any{"items": 0}, map[string]any{}, nil), "INVALID_PARAMETER"},
		{taskCall(nil, map[string]any{}, map[string]any{"templateId": "nope"}), "TEMPLATE_NOT_FOUND"},
		{taskCall(nil, map[string]any{}, map[string]any{"options": map[string]any{"timeoutMs": 0}}), "INVALID_PARAMETER"},
	} {
		_, rerr = p.call("tools/call", c.params)
		wantRPCError(t, c.code, rerr, -32602, "")
		data, _ := rerr["data"].(map[string]any)
		if data["errorCode"] != c.code || data["message"] == "" || data["recovery"] == "" {
			t.Fatalf("want data {errorCode %s, message, recovery}, got %v", c.code, rerr)
		}
	}
}

func TestTasksListPagesNewestFirst(t *testing.T) {
	eng := newEngine(t, taskTestConfig())
	p := startRawPeer(t, NewServer(eng, ServerOptions{Version: "test"}))
	ctx := context.Background()
	const n = 120
	created := map[string]bool{}
	for i := 0; i < n; i++ {
		sub, err := eng.Submit(ctx, engine.SubmitRequest{TemplateID: "dev_echo", Inputs: json.RawMessage(`{"items":1}`), Mode: engine.ModeAsync})
		if err != nil {
			t.Fatal(err)
		}
		created[sub.Run.RunID] = true
	}
	var seen []map[string]any
	cursor := ""
	pages := 0
	for {
		params := map[string]any{}
		if cursor != "" {
			params["cursor"] = cursor
		}
		res := p.mustCall("tasks/list", params)
		tasks := res["tasks"].([]any)
		pages++
		if pages == 1 {
			// A task created while paging must neither shift nor repeat the pages.
			if _, err := eng.Submit(ctx, engine.SubmitRequest{TemplateID: "dev_echo", Mode: engine.ModeAsync}); err != nil {
				t.Fatal(err)
			}
		}
		for _, x := range tasks {
			seen = append(seen, x.(map[string]any))
		}
		next, _ := res["nextCursor"].(string)
		if next == "" {
			break
		}
		if len(tasks) != taskPageSize {
			t.Fatalf("page %d has %d tasks, want %d before the last page", pages, len(tasks), taskPageSize)
		}
		cursor = next
	}
	if pages != 3 || len(seen) != n {
		t.Fatalf("%d pages, %d tasks; want 3 pages, %d tasks", pages, len(seen), n)
	}
	ids := map[string]bool{}
	for i, task := range seen {
		id := task["taskId"].(string)
		if ids[id] || !created[id] {
			t.Fatalf("task %d: %s duplicated or unexpected", i, id)
		}
		ids[id] = true
		if i > 0 {
			prev := seen[i-1]
			if task["createdAt"].(string) > prev["createdAt"].(string) ||
				(task["createdAt"] == prev["createdAt"] && id > prev["taskId"].(string)) {
				t.Fatalf("not newest first at %d: %v after %v", i, task, prev)
			}
		}
	}
}

func TestStdioShutdownReleasesWaitingTaskResult(t *testing.T) {
	synctest.Test(t, testStdioShutdownReleasesWaitingTaskResult)
}

func testStdioShutdownReleasesWaitingTaskResult(t *testing.T) {
	eng := newEngine(t, taskTestConfig())
	p := startRawPeerOn(t, NewServer(eng, ServerOptions{Version: "test"}), true)
	task := p.mustCall("tools/call", taskCall(map[string]any{"items": 300, "sleepMs": 50}, map[string]any{}, nil))["task"].(map[string]any)
	id := task["taskId"].(string)
	p.start("tasks/result", map[string]any{"taskId": id})
	synctest.Wait() // tasks/result is waiting on the run
	if !p.stop(3 * time.Second) {
		t.Fatal("ServeStdio did not return on shutdown while tasks/result was waiting")
	}
	// The wait ended, not the task: the run goes on (or is requeued).
	run, err := eng.Get(context.Background(), id)
	if err != nil || run.Status.Terminal() {
		t.Fatalf("run after shutdown: %+v, %v", run, err)
	}
}
