package acceptance

// Acceptance 1 and 2 (session part): the v1 contract's test list, run
// against the built binary over stdio (`browsertask mcp --http=off`) and over
// Streamable HTTP (`browsertask serve`), with the same client flow.

import (
	"context"
	"regexp"
	"sort"
	"strings"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/browsertask/browsertask/internal/fixture"
)

// bbTransport starts a process with args and returns a connected session.
type bbTransport struct {
	name    string
	connect func(t *testing.T, pl *progressLog, args ...string) *sdk.ClientSession
}

func bbTransports() []bbTransport {
	return []bbTransport{
		{"stdio", func(t *testing.T, pl *progressLog, args ...string) *sdk.ClientSession {
			cs, _ := startStdioProgress(t, pl, args...)
			return cs
		}},
		{"http", func(t *testing.T, pl *progressLog, args ...string) *sdk.ClientSession {
			return connectHTTPProgress(t, startServe(t, args...), nil, pl)
		}},
	}
}

var runIDRE = regexp.MustCompile(`^run_[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$`)

// autoBudgetMs is the small auto-sync budget the contract processes use.
const autoBudgetMs = 1000

func TestBlackboxContract(t *testing.T) {
	for _, tr := range bbTransports() {
		t.Run(tr.name, func(t *testing.T) {
			t.Parallel()
			pl := newProgressLog()
			cs := tr.connect(t, pl, "--auto-sync-budget-ms", "1000")
			t.Run("tools_list", func(t *testing.T) { contractToolsList(t, cs) })
			t.Run("runtime_profile", func(t *testing.T) { contractProfile(t, cs) })
			t.Run("templates", func(t *testing.T) { contractTemplates(t, cs) })
			t.Run("sync", func(t *testing.T) { contractSync(t, cs) })
			t.Run("sync_progress", func(t *testing.T) { contractProgress(t, cs, pl) })
			t.Run("sync_request_cancel", func(t *testing.T) { contractRequestCancel(t, cs) })
			t.Run("async_nonterminal", func(t *testing.T) { contractAsync(t, cs) })
			t.Run("auto", func(t *testing.T) { contractAuto(t, cs) })
			t.Run("cancel", func(t *testing.T) { contractCancel(t, cs) })
			t.Run("idempotency", func(t *testing.T) { contractIdempotency(t, cs) })
			t.Run("artifact_utf8", func(t *testing.T) { contractArtifact(t, cs) })
			// Last: it checks totals over every run the flow created.
			t.Run("list", func(t *testing.T) { contractList(t, cs) })
		})
	}
}

func contractToolsList(t *testing.T, cs *sdk.ClientSession) {
	ctx, cancel := fixture.Context(t)
	defer cancel()
	res, err := cs.ListTools(ctx, nil)
	if err != nil {
		t.Fatalf("tools/list: %v", err)
	}
	// The seven v1 tools must be there; the only extras allowed are the
	// additive v1.1 event tools (README, "Tools").
	want := []string{"cancel_task_run", "get_artifact", "get_runtime_profile", "get_task_run", "list_task_runs", "list_task_templates", "run_task_template"}
	v11 := map[string]bool{"get_task_run_events": true, "subscribe_task_run_events": true,
		// The browser-session tools (README, "Browser sessions") are additive too.
		"create_browser_session": true, "list_browser_sessions": true, "close_browser_session": true, "export_session_state": true,
		// Answering runs that wait for a person (README, "When a run needs you").
		"answer_task_run": true,
		// Persistent browser profiles (README, "Sign in once").
		"list_profiles": true, "sign_in_profile": true,
		// The session's tabs and console (internal/pagetools/tabs*.go, console*.go).
		"browser_tabs": true, "browser_console": true,
		// The interactive tools on a session's page (internal/pagetools).
		"browser_navigate": true, "browser_snapshot": true, "browser_act": true, "browser_wait": true, "browser_screenshot": true,
		// Files in and out of a session's page, and its network capture.
		"browser_upload": true, "browser_download": true, "browser_network": true}
	// --dev-templates (these daemons run with it) adds the conformance
	// suite's fixture tools; they are not product tools.
	fixture := func(name string) bool {
		switch name {
		case "greet", "slow_compute", "failing_job", "protocol_error_job", "confirm_delete", "multi_input", "json_schema_2020_12_tool":
			return true
		}
		return strings.HasPrefix(name, "test_")
	}
	var got []string
	for _, tool := range res.Tools {
		if fixture(tool.Name) {
			continue
		}
		if v11[tool.Name] {
			t.Logf("tools/list also has the v1.1 tool %s", tool.Name)
		} else {
			got = append(got, tool.Name)
		}
		if len(tool.Description) < 80 {
			t.Errorf("tool %s: description too short for a model: %q", tool.Name, tool.Description)
		}
		if tool.InputSchema == nil || tool.OutputSchema == nil {
			t.Errorf("tool %s: inputSchema and outputSchema are both required", tool.Name)
		}
	}
	sort.Strings(got)
	if strings.Join(got, ",") != strings.Join(want, ",") {
		t.Fatalf("tools/list: want exactly the seven v1 tools %v (plus v1.1 event tools), got %v", want, got)
	}
}

func contractProfile(t *testing.T, cs *sdk.ClientSession) {
	p := callOK(t, cs, "get_runtime_profile", nil)
	nums := map[string]int64{
		"maxConcurrentRuns": 5, "maxUrls": 1000, "maxTabsPerSession": 20,
		"syncTimeoutMs": 300000, "asyncTimeoutMs": 600000, "artifactMaxChunkSize": 262144,
		"artifactTtlMs": 86400000, "runTtlMs": 1800000, "autoSyncBudgetMs": autoBudgetMs,
	}
	for k, v := range nums {
		if got := num(p, k); got != v {
			t.Errorf("profile.%s: want %d, got %v", k, v, p[k])
		}
	}
	modes, _ := p["supportedModes"].([]any)
	if len(modes) != 3 || modes[0] != "sync" || modes[1] != "async" || modes[2] != "auto" {
		t.Errorf("profile.supportedModes: want [sync async auto], got %v", p["supportedModes"])
	}
	if p["trustLevel"] != "local" || p["isRemote"] != false {
		t.Errorf("profile: want trustLevel local, isRemote false; got %v, %v", p["trustLevel"], p["isRemote"])
	}
	if v, _ := p["version"].(string); v == "" {
		t.Errorf("profile.version missing: %v", p["version"])
	}
	if pv, _ := p["protocolVersions"].([]any); len(pv) < 2 || pv[0] != "2026-07-28" || pv[1] != "2025-11-25" {
		t.Errorf("profile.protocolVersions: want 2026-07-28, 2025-11-25 first, got %v", p["protocolVersions"])
	}
	if num(p, "taskPollIntervalMs") < 1 {
		t.Errorf("profile.taskPollIntervalMs missing: %v", p["taskPollIntervalMs"])
	}
	tm, _ := p["artifactTextMimeTypes"].([]any)
	hasJSON := false
	for _, m := range tm {
		hasJSON = hasJSON || m == "application/json"
	}
	if !hasJSON {
		t.Errorf("profile.artifactTextMimeTypes must list application/json, got %v", p["artifactTextMimeTypes"])
	}
	if _, ok := p["browser"]; !ok {
		t.Errorf("profile.browser key missing")
	}
}

func contractTemplates(t *testing.T, cs *sdk.ClientSession) {
	l := callOK(t, cs, "list_task_templates", nil)
	tpls, _ := l["templates"].([]any)
	seen := map[string]obj{}
	for _, x := range tpls {
		tp, _ := x.(obj)
		id, _ := tp["templateId"].(string)
		seen[id] = tp
		for _, k := range []string{"version", "versions", "title", "description", "inputSchema", "resultSchema", "trustLevel", "resumable", "examples"} {
			if _, ok := tp[k]; !ok {
				t.Errorf("template %s: field %s missing", id, k)
			}
		}
	}
	for _, id := range []string{"batch_extract_pages", "dev_echo", "dev_echo_once"} {
		if seen[id] == nil {
			t.Errorf("list_task_templates: %s missing (got %d templates)", id, len(tpls))
		}
	}
	if b := seen["batch_extract_pages"]; b != nil && (b["resumable"] != true || num(b, "version") != 1) {
		t.Errorf("batch_extract_pages: want resumable true, version 1; got %v, %v", b["resumable"], b["version"])
	}
}

// checkRunInvariants asserts the Run invariants of the v1 contract (README,
// "Tools"). A list_task_runs row (it has resultBytes) carries no result:
// resultBytes > 0 stands for a result.
func checkRunInvariants(t *testing.T, run obj) {
	t.Helper()
	id, _ := run["runId"].(string)
	fields := []string{"templateId", "templateVersion", "ownsSession", "status", "mode", "progress", "metrics", "result", "error", "artifactIds", "createdAt", "updatedAt", "startedAt", "finishedAt", "expiresAt"}
	hasResult := run["result"] != nil
	if _, row := run["resultBytes"]; row {
		if _, has := run["result"]; has {
			t.Errorf("list row %s carries its result", id)
		}
		fields[7] = "resultBytes"
		hasResult = num(run, "resultBytes") > 0
	}
	if !runIDRE.MatchString(id) {
		t.Errorf("runId %q is not run_ + UUIDv4", id)
	}
	if sid, _ := run["sessionId"].(string); !strings.HasPrefix(sid, "sess_") {
		t.Errorf("sessionId %q lacks sess_", run["sessionId"])
	}
	for _, k := range fields {
		if _, ok := run[k]; !ok {
			t.Errorf("run %s: field %s missing", id, k)
		}
	}
	st := run["status"]
	switch {
	case !terminal(st):
		if hasResult || run["error"] != nil {
			t.Errorf("run %s %v: non-terminal needs result == null && error == null, got %v / %v", id, st, run["result"], run["error"])
		}
		if run["finishedAt"] != nil {
			t.Errorf("run %s %v: finishedAt must be null", id, st)
		}
	case st == "succeeded" || st == "partial_success":
		if !hasResult || run["error"] != nil {
			t.Errorf("run %s %v: needs result != null && error == null, got %v / %v", id, st, run["result"], run["error"])
		}
	default:
		e := sub(run, "error")
		if e == nil || e["errorCode"] == nil || e["message"] == "" || e["recovery"] == "" {
			t.Errorf("run %s %v: needs an error {errorCode,message,recovery}, got %v", id, st, run["error"])
		}
	}
	if terminal(st) && (run["finishedAt"] == nil || num(run, "finishedAt") < num(run, "createdAt")) {
		t.Errorf("run %s %v: finishedAt %v must be set and >= createdAt", id, st, run["finishedAt"])
	}
	m := sub(run, "metrics")
	if num(m, "elapsedMs") < 0 || num(m, "queuedMs") < 0 {
		t.Errorf("run %s: metrics must be non-negative numbers, got %v", id, m)
	}
	if num(run, "createdAt") <= 0 || num(run, "updatedAt") < num(run, "createdAt") {
		t.Errorf("run %s: want updatedAt >= createdAt > 0, got %v, %v", id, run["updatedAt"], run["createdAt"])
	}
	if num(run, "expiresAt") <= num(run, "createdAt") {
		t.Errorf("run %s: expiresAt %v must be after createdAt", id, run["expiresAt"])
	}
}

func contractSync(t *testing.T, cs *sdk.ClientSession) {
	run := callOK(t, cs, "run_task_template", obj{"templateId": "dev_echo",
		"inputs":  obj{"sleepMs": 10, "items": 3, "content": "hello", "mimeType": "text/plain"},
		"options": obj{"mode": "sync"}})
	checkRunInvariants(t, run)
	if run["status"] != "succeeded" || run["mode"] != "sync" || run["deduplicated"] != false {
		t.Fatalf("sync: want succeeded/sync/deduplicated false, got %v/%v/%v", run["status"], run["mode"], run["deduplicated"])
	}
	pr := sub(run, "progress")
	if num(pr, "doneSteps") != 3 || num(pr, "totalSteps") != 3 || num(pr, "failedSteps") != 0 {
		t.Errorf("sync: progress want 3/3/0, got %v", pr)
	}
	if run["templateId"] != "dev_echo" || num(run, "templateVersion") != 1 || run["ownsSession"] != true {
		t.Errorf("sync: templateId/templateVersion/ownsSession = %v/%v/%v", run["templateId"], run["templateVersion"], run["ownsSession"])
	}
	if a, _ := run["artifactIds"].([]any); len(a) != 1 {
		t.Errorf("sync: want 1 artifact, got %v", run["artifactIds"])
	}
	if run["startedAt"] == nil || num(run, "startedAt") < num(run, "createdAt") {
		t.Errorf("sync: startedAt %v must be >= createdAt", run["startedAt"])
	}
	// The same run through get_task_run has the same terminal facts.
	got := getRun(t, cs, run["runId"].(string))
	checkRunInvariants(t, got)
	if got["status"] != "succeeded" || num(got, "updatedAt") != num(run, "updatedAt") {
		t.Errorf("get_task_run after sync: status %v updatedAt %v, want succeeded %v", got["status"], got["updatedAt"], run["updatedAt"])
	}

	// A sync run that fails is an isError result with the failed run inside.
	failed, isErr := call(t, cs, "run_task_template", obj{"templateId": "dev_echo",
		"inputs": obj{"fail": true}, "options": obj{"mode": "sync"}})
	if !isErr || failed["status"] != "failed" || errCode(failed) != "STEP_EXECUTION_FAILED" || failed["result"] != nil {
		t.Fatalf("failing sync run: want isError, failed, STEP_EXECUTION_FAILED, result null; got isError=%v %v", isErr, failed)
	}
	checkRunInvariants(t, failed)
}

func contractAsync(t *testing.T, cs *sdk.ClientSession) {
	h := callOK(t, cs, "run_task_template", obj{"templateId": "dev_echo",
		"inputs": obj{"sleepMs": 250, "items": 6}, "options": obj{"mode": "async"}})
	if st := h["status"]; (st != "queued" && st != "running") || h["mode"] != "async" || h["deduplicated"] != false {
		t.Fatalf("async handle: want status queued|running, mode async, deduplicated false; got %v", h)
	}
	if sid, _ := h["sessionId"].(string); !strings.HasPrefix(sid, "sess_") {
		t.Errorf("async handle: sessionId %v", h["sessionId"])
	}
	id := h["runId"].(string)
	// Non-terminal reads: invariants hold and updatedAt follows progress.
	var lastDone, lastUpdated int64 = -1, -1
	sawRunning := false
	// How long the run takes is not the promise: the wait ends near the
	// test's deadline (fixture.Context).
	ctx, cancel := fixture.Context(t)
	defer cancel()
	for {
		run := getRun(t, cs, id)
		checkRunInvariants(t, run)
		if terminal(run["status"]) {
			if run["status"] != "succeeded" {
				t.Fatalf("async run ended %v: %v", run["status"], run["error"])
			}
			if num(sub(run, "progress"), "doneSteps") != 6 {
				t.Errorf("async run: doneSteps want 6, got %v", run["progress"])
			}
			if num(sub(run, "metrics"), "elapsedMs") < 6*250 {
				t.Errorf("async run: elapsedMs %v < the 1500 ms it slept", sub(run, "metrics")["elapsedMs"])
			}
			break
		}
		if run["status"] == "running" {
			sawRunning = true
			if run["startedAt"] == nil {
				t.Errorf("running run without startedAt")
			}
		}
		done, upd := num(sub(run, "progress"), "doneSteps"), num(run, "updatedAt")
		if lastDone >= 0 && done > lastDone && upd <= lastUpdated {
			t.Errorf("progress moved %d -> %d but updatedAt did not (%d -> %d)", lastDone, done, lastUpdated, upd)
		}
		if done < lastDone || upd < lastUpdated {
			t.Errorf("progress or updatedAt went backwards: %d->%d, %d->%d", lastDone, done, lastUpdated, upd)
		}
		lastDone, lastUpdated = done, upd
		select {
		case <-ctx.Done():
			t.Fatalf("async run did not finish before the test's deadline: %v", run)
		case <-time.After(60 * time.Millisecond):
		}
	}
	if !sawRunning {
		t.Errorf("never observed the async run in status running")
	}
}

func contractAuto(t *testing.T, cs *sdk.ClientSession) {
	// Fast run: when it ends inside the budget the answer is sync. Whether it
	// did is read from the server's own clock (createdAt → finishedAt): on a
	// loaded machine even a 10 ms run can miss a 1 s budget, and then an
	// async reply is the right one.
	fast := callOK(t, cs, "run_task_template", obj{"templateId": "dev_echo", "inputs": obj{"sleepMs": 10}})
	switch fast["mode"] {
	case "sync":
		if fast["status"] != "succeeded" || fast["result"] == nil {
			t.Fatalf("auto fast answered sync: want succeeded with a result; got %v", fast)
		}
	case "async":
		end := waitTerminal(t, cs, fast["runId"].(string))
		if took := num(end, "finishedAt") - num(end, "createdAt"); end["status"] != "succeeded" || took < autoBudgetMs*8/10 {
			t.Fatalf("auto fast answered async though the run ended %v after %d ms (budget %d ms)", end["status"], took, autoBudgetMs)
		}
		t.Logf("auto fast answered async: the run took %d ms on this machine", num(end, "finishedAt")-num(end, "createdAt"))
	default:
		t.Fatalf("auto fast: want mode sync, got %v", fast)
	}
	// Slow run (3 s): still running at the budget → answered async, not
	// before the budget, and while the run still runs (that order is the
	// upper bound: it did not wait for the end).
	start := time.Now()
	slow := callOK(t, cs, "run_task_template", obj{"templateId": "dev_echo",
		"inputs": obj{"sleepMs": 1000, "items": 3}, "options": obj{"mode": "auto"}})
	d := time.Since(start)
	if slow["mode"] != "async" || (slow["status"] != "running" && slow["status"] != "queued") {
		t.Fatalf("auto slow: want mode async, status running; got %v", slow)
	}
	if d < autoBudgetMs*time.Millisecond*9/10 {
		t.Errorf("auto slow answered after %v, before the %d ms budget", d, autoBudgetMs)
	}
	end := waitTerminal(t, cs, slow["runId"].(string))
	if end["status"] != "succeeded" {
		t.Errorf("auto slow run ended %v", end["status"])
	}
	// The mode recorded on the run is the requested one.
	if end["mode"] != "auto" {
		t.Errorf("run.mode of an auto submission: want auto, got %v", end["mode"])
	}
}

// contractProgress: a sync call carrying a progressToken receives
// notifications/progress while it waits, with growing progress.
func contractProgress(t *testing.T, cs *sdk.ClientSession, pl *progressLog) {
	token := "tok-" + time.Now().Format("150405.000000")
	params := &sdk.CallToolParams{Name: "run_task_template", Arguments: obj{"templateId": "dev_echo",
		"inputs": obj{"sleepMs": 150, "items": 5}, "options": obj{"mode": "sync"}}}
	params.SetProgressToken(token)
	ctx, cancel := fixture.Context(t)
	defer cancel()
	res, err := cs.CallTool(ctx, params)
	if err != nil || res.IsError {
		t.Fatalf("sync call with a progressToken: %v %v", err, res)
	}
	// Notifications may trail the answer by a moment: wait for them, with
	// no bound of our own (how soon they come is not the promise).
	var got []*sdk.ProgressNotificationParams
	fixture.WaitUntil(t, "several progress notifications for a 5-step sync run", func() bool {
		got = pl.of(token)
		return len(got) >= 2
	})
	for i, p := range got {
		if i > 0 && p.Progress < got[i-1].Progress {
			t.Errorf("progress went backwards: %v then %v", got[i-1].Progress, p.Progress)
		}
		if p.Total != 0 && p.Total != 5 {
			t.Errorf("progress total %v, want 5", p.Total)
		}
	}
	// Notifications are throttled (one per ~200 ms), so the last one may lag
	// the end; it must still have moved past the start.
	if last := got[len(got)-1]; last.Progress < 1 {
		t.Errorf("last progress %v of 5: progress never moved", last.Progress)
	}
}

// contractRequestCancel: cancelling a sync request (notifications/cancelled)
// cancels its run.
func contractRequestCancel(t *testing.T, cs *sdk.ClientSession) {
	ctx, cancel := context.WithTimeout(context.Background(), 700*time.Millisecond)
	defer cancel()
	_, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: "run_task_template", Arguments: obj{"templateId": "dev_echo",
		"inputs": obj{"sleepMs": 200, "items": 50}, "options": obj{"mode": "sync"}}})
	if err == nil {
		t.Fatalf("a 10 s sync run answered within 700 ms")
	}
	l := callOK(t, cs, "list_task_runs", obj{"templateId": "dev_echo", "limit": 1})
	runs, _ := l["runs"].([]any)
	if len(runs) != 1 {
		t.Fatalf("no run found")
	}
	id := runs[0].(obj)["runId"].(string)
	// A run the cancellation missed ends succeeded (10 s of work) and fails
	// the check below: the wait needs no bound of its own.
	run := waitRun(t, cs, id, "canceled after the request was cancelled", func(r obj) bool { return terminal(r["status"]) })
	if run["status"] != "canceled" || errCode(run) != "RUN_CANCELED" {
		t.Fatalf("run of a cancelled sync request: want canceled/RUN_CANCELED, got %v %v", run["status"], run["error"])
	}
}
