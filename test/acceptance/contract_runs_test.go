package acceptance

// Contract flows over existing runs (part of TestBlackboxContract): cancel
// of terminal and running runs, idempotencyKey dedupe, get_artifact chunk
// edges with multi-byte UTF-8 text, and list_task_runs totals and order.

import (
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/browsertask/browsertask/internal/fixture"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

func contractCancel(t *testing.T, cs *sdk.ClientSession) {
	done := callOK(t, cs, "run_task_template", obj{"templateId": "dev_echo", "inputs": obj{}, "options": obj{"mode": "sync"}})
	id := done["runId"].(string)
	c := callOK(t, cs, "cancel_task_run", obj{"runId": id})
	reason, _ := c["reason"].(string)
	if c["success"] != false || c["status"] != "succeeded" || c["runId"] != id || !strings.Contains(reason, "succeeded") {
		t.Fatalf("cancel of a succeeded run: want success false, status succeeded, a reason naming it; got %v", c)
	}
	if got := getRun(t, cs, id); got["status"] != "succeeded" || num(got, "updatedAt") != num(done, "updatedAt") {
		t.Errorf("cancel of a terminal run changed it: %v %v", got["status"], got["updatedAt"])
	}

	id = submitAsync(t, cs, "dev_echo", obj{"sleepMs": 200, "items": 50}, nil)
	waitRun(t, cs, id, "running", func(r obj) bool { return r["status"] == "running" })
	c = callOK(t, cs, "cancel_task_run", obj{"runId": id, "reason": "contract test"})
	if c["success"] != true || c["status"] != "canceled" {
		t.Fatalf("cancel of a running run: want success true, canceled; got %v", c)
	}
	run := getRun(t, cs, id)
	checkRunInvariants(t, run)
	if run["status"] != "canceled" || errCode(run) != "RUN_CANCELED" || run["result"] != nil {
		t.Fatalf("canceled run: want canceled/RUN_CANCELED/result null, got %v %v %v", run["status"], run["error"], run["result"])
	}
	again := callOK(t, cs, "cancel_task_run", obj{"runId": id})
	if again["success"] != false || again["status"] != "canceled" || again["reason"] == nil {
		t.Errorf("second cancel: want success false, canceled + reason; got %v", again)
	}
}

func contractIdempotency(t *testing.T, cs *sdk.ClientSession) {
	key := "contract-" + time.Now().Format("150405.000000")
	in := obj{"sleepMs": 300, "items": 2}
	first := callOK(t, cs, "run_task_template", obj{"templateId": "dev_echo", "inputs": in,
		"options": obj{"mode": "async", "idempotencyKey": key}})
	second := callOK(t, cs, "run_task_template", obj{"templateId": "dev_echo", "inputs": in,
		"options": obj{"mode": "async", "idempotencyKey": key}})
	if first["deduplicated"] != false || second["deduplicated"] != true || second["runId"] != first["runId"] {
		t.Fatalf("repeat inside the window: want same runId, deduplicated false then true; got %v / %v", first, second)
	}
	// Concurrent repeats: still one run.
	ctx, cancel := fixture.Context(t) // shared by the repeats: t is not for goroutines
	defer cancel()
	var wg sync.WaitGroup
	ids := make([]any, 8)
	for i := range ids {
		wg.Add(1)
		go func() {
			defer wg.Done()
			m, isErr, err := tryCall(ctx, cs, "run_task_template", obj{"templateId": "dev_echo", "inputs": in,
				"options": obj{"mode": "async", "idempotencyKey": key}})
			if err != nil || isErr || m["deduplicated"] != true {
				t.Errorf("concurrent repeat %d: err=%v isError=%v %v", i, err, isErr, m)
			}
			ids[i] = m["runId"]
		}()
	}
	wg.Wait()
	for i, id := range ids {
		if id != first["runId"] {
			t.Errorf("concurrent repeat %d: runId %v, want %v", i, id, first["runId"])
		}
	}
	// A repeat in sync mode answers in sync mode with the existing run, once it ends.
	s := callOK(t, cs, "run_task_template", obj{"templateId": "dev_echo", "inputs": in,
		"options": obj{"mode": "sync", "idempotencyKey": key}})
	if s["runId"] != first["runId"] || s["mode"] != "sync" || s["deduplicated"] != true || s["status"] != "succeeded" {
		t.Errorf("sync repeat: want the same run, mode sync, deduplicated, succeeded; got %v", s)
	}
	// The same key on another template is another scope.
	other := callOK(t, cs, "run_task_template", obj{"templateId": "dev_echo_once", "inputs": obj{},
		"options": obj{"mode": "async", "idempotencyKey": key}})
	if other["deduplicated"] != false || other["runId"] == first["runId"] {
		t.Errorf("same key, other template: want a new run, got %v", other)
	}
	waitTerminal(t, cs, other["runId"].(string))
}

// utf8Sample mixes 1-, 2-, 3- and 4-byte characters.
const utf8Sample = "héllo wörld — 日本語テキスト ✓ 🎉🚀 naïve café Ωμέγα 𝄞 end"

func contractArtifact(t *testing.T, cs *sdk.ClientSession) {
	content := strings.Repeat(utf8Sample, 5)
	run := callOK(t, cs, "run_task_template", obj{"templateId": "dev_echo",
		"inputs": obj{"content": content, "mimeType": "text/plain; charset=utf-8"}, "options": obj{"mode": "sync"}})
	ids, _ := run["artifactIds"].([]any)
	if len(ids) != 1 {
		t.Fatalf("want one artifact, got %v", run["artifactIds"])
	}
	art := ids[0].(string)
	if r := sub(run, "result"); r["artifactId"] != art {
		t.Errorf("result.artifactId %v != artifactIds[0] %v", r["artifactId"], art)
	}
	size := int64(len(content))

	whole := callOK(t, cs, "get_artifact", obj{"artifactId": art})
	if whole["artifactId"] != art || !strings.HasPrefix(whole["mimeType"].(string), "text/plain") ||
		num(whole, "totalSize") != size || num(whole, "offset") != 0 || num(whole, "length") != size ||
		whole["data"] != content || whole["complete"] != true {
		t.Fatalf("whole read: want all %d bytes complete, got offset=%v length=%v totalSize=%v complete=%v mime=%v",
			size, whole["offset"], whole["length"], whole["totalSize"], whole["complete"], whole["mimeType"])
	}
	// A length above artifactMaxChunkSize is clamped, not refused.
	if c := callOK(t, cs, "get_artifact", obj{"artifactId": art, "length": 1 << 30}); c["data"] != content {
		t.Errorf("huge length: want the whole text, got length %v", c["length"])
	}

	for _, want := range []int64{1, 2, 3, 5, 7} {
		var sb strings.Builder
		off := int64(0)
		for calls := 0; ; calls++ {
			c := callOK(t, cs, "get_artifact", obj{"artifactId": art, "offset": off, "length": want})
			n := num(c, "length")
			data, _ := c["data"].(string)
			if num(c, "offset") != off || n < 1 || int64(len(data)) != n || num(c, "totalSize") != size {
				t.Fatalf("length %d at %d: bad chunk offset=%v length=%v len(data)=%d", want, off, c["offset"], n, len(data))
			}
			if n > want && n > 4 {
				t.Fatalf("length %d at %d: chunk of %d bytes exceeds the request by more than one character", want, off, n)
			}
			if n > want && strings.Count(data, "") != 2 {
				t.Fatalf("length %d at %d: an oversize chunk must hold exactly one character, got %q", want, off, data)
			}
			if c["complete"] != (off+n == size) {
				t.Fatalf("length %d at %d: complete=%v but offset+length=%d, totalSize=%d", want, off, c["complete"], off+n, size)
			}
			sb.WriteString(data)
			off += n
			if c["complete"] == true {
				break
			}
			if calls > int(size) {
				t.Fatalf("length %d: no progress", want)
			}
		}
		if sb.String() != content {
			t.Fatalf("length %d: reassembled text differs from the content", want)
		}
	}

	// Edges: offset == size → empty complete chunk; offset > size and an
	// offset inside a character → INVALID_PARAMETER.
	end := callOK(t, cs, "get_artifact", obj{"artifactId": art, "offset": size})
	if num(end, "length") != 0 || end["data"] != "" || end["complete"] != true || num(end, "offset") != size {
		t.Errorf("offset == totalSize: want empty complete chunk, got %v", end)
	}
	if code, msg := callErr(t, cs, "get_artifact", obj{"artifactId": art, "offset": size + 1}); code != "INVALID_PARAMETER" || !strings.Contains(msg, "offset") {
		t.Errorf("offset > totalSize: want INVALID_PARAMETER naming offset, got %s %q", code, msg)
	}
	inside := int64(strings.Index(content, "é") + 1)
	if code, msg := callErr(t, cs, "get_artifact", obj{"artifactId": art, "offset": inside}); code != "INVALID_PARAMETER" || !strings.Contains(msg, "offset") {
		t.Errorf("offset inside a character: want INVALID_PARAMETER naming offset, got %s %q", code, msg)
	}
	// length 1 on a 4-byte character still yields that whole character.
	emoji := int64(strings.Index(content, "🎉"))
	c := callOK(t, cs, "get_artifact", obj{"artifactId": art, "offset": emoji, "length": 1})
	if c["data"] != "🎉" || num(c, "length") != 4 || c["complete"] != false {
		t.Errorf("length 1 at a 4-byte character: want the whole 🎉 (4 bytes), got %q length %v", c["data"], c["length"])
	}
}

func contractList(t *testing.T, cs *sdk.ClientSession) {
	all := callOK(t, cs, "list_task_runs", obj{"limit": 1000})
	runs, _ := all["runs"].([]any)
	if num(all, "total") != int64(len(runs)) || num(all, "limit") != 1000 || num(all, "offset") != 0 {
		t.Fatalf("list all: total %v, limit %v, offset %v, %d runs", all["total"], all["limit"], all["offset"], len(runs))
	}
	if len(runs) < 10 {
		t.Fatalf("the contract flow created at least 10 runs, list has %d", len(runs))
	}
	byStatus := map[string]int64{}
	byTemplate := map[string]int64{}
	for i, x := range runs {
		r := x.(obj)
		checkRunInvariants(t, r)
		byStatus[r["status"].(string)]++
		byTemplate[r["templateId"].(string)]++
		if i > 0 {
			p := runs[i-1].(obj)
			pc, c := num(p, "createdAt"), num(r, "createdAt")
			if pc < c || (pc == c && p["runId"].(string) < r["runId"].(string)) {
				t.Errorf("list order: run %d (%v, %v) after run %d (%v, %v): want createdAt desc, runId desc", i, c, r["runId"], i-1, pc, p["runId"])
			}
		}
	}
	// Default call: limit 50, offset 0, the same order.
	def := callOK(t, cs, "list_task_runs", nil)
	if num(def, "limit") != 50 || num(def, "offset") != 0 || num(def, "total") != int64(len(runs)) {
		t.Errorf("default list: want limit 50, offset 0, total %d; got %v %v %v", len(runs), def["limit"], def["offset"], def["total"])
	}
	// total is the filtered count, before paging.
	for st, n := range byStatus {
		if got := countRuns(t, cs, obj{"status": st}); got != n {
			t.Errorf("status=%s: total %d, want %d", st, got, n)
		}
	}
	for tpl, n := range byTemplate {
		if got := countRuns(t, cs, obj{"templateId": tpl}); got != n {
			t.Errorf("templateId=%s: total %d, want %d", tpl, got, n)
		}
	}
	if byStatus["canceled"] < 1 || byStatus["failed"] < 1 || byStatus["succeeded"] < 5 {
		t.Errorf("status counts look wrong for this flow: %v", byStatus)
	}
	if got := countRuns(t, cs, obj{"status": "succeeded", "templateId": "dev_echo_once"}); got != 1 {
		t.Errorf("status+templateId filter: want 1, got %d", got)
	}
	first := runs[0].(obj)
	if got := countRuns(t, cs, obj{"sessionId": first["sessionId"]}); got != 1 {
		t.Errorf("sessionId filter: want 1, got %d", got)
	}
	// Paging is a window of the same order.
	page := callOK(t, cs, "list_task_runs", obj{"limit": 3, "offset": 2})
	pr, _ := page["runs"].([]any)
	if num(page, "total") != int64(len(runs)) || len(pr) != 3 {
		t.Fatalf("page: total %v, %d runs", page["total"], len(pr))
	}
	for i := range pr {
		if pr[i].(obj)["runId"] != runs[i+2].(obj)["runId"] {
			t.Errorf("page item %d: %v, want %v", i, pr[i].(obj)["runId"], runs[i+2].(obj)["runId"])
		}
	}
	past := callOK(t, cs, "list_task_runs", obj{"offset": len(runs) + 5})
	if pr, _ := past["runs"].([]any); len(pr) != 0 || num(past, "total") != int64(len(runs)) {
		t.Errorf("offset past the end: want no runs and the full total, got %d runs total %v", len(pr), past["total"])
	}
}
