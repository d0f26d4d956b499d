package acceptance

// Issue 11: runs that wait for a person. A login whose site asks for a
// one-time code after the password waits with inputRequest {kind: secret};
// the code comes from another process (answer_task_run over stdio from a
// second `browsertask mcp`, `browsertask answer`, the dashboard's form in
// Chromium), and the session is
// then logged in. The code is nowhere in the database files, the event log,
// the processes' stderr or any MCP reply. No answer within
// --input-timeout-ms fails the run (RUN_TIMEOUT, "no answer"); cancel
// while waiting is canceled within 2 s; a sync call answers at once when
// its run starts waiting. (The TypeScript clients' paths are in
// e2e/test/input.test.js.)

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/browsertask/browsertask/internal/fixture"
	"github.com/go-rod/rod"
	"github.com/go-rod/rod/lib/proto"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// replies records every MCP reply a test received, to prove a secret is
// in none of them.
type replies struct{ b strings.Builder }

func (a *replies) ok(t *testing.T, cs *sdk.ClientSession, tool string, args any) obj {
	t.Helper()
	m := callOK(t, cs, tool, args)
	j, _ := json.Marshal(m)
	a.b.Write(j)
	return m
}

// otpLogin starts a login in session sid on an OTP page and waits until it
// asks for the code; it returns the runId.
func otpLogin(t *testing.T, cs *sdk.ClientSession, rec *replies, fx *fixture.Server, sid, page string) string {
	t.Helper()
	h := rec.ok(t, cs, "run_task_template", obj{"templateId": "login", "sessionId": sid, "options": obj{"mode": "async"},
		"inputs": obj{"url": fx.URL(page), "username": fixture.LoginUser, "password": fixture.LoginPassword}})
	id := h["runId"].(string)
	run := waitRun(t, cs, id, "an inputRequest", func(r obj) bool { return r["inputRequest"] != nil || terminal(r["status"]) })
	ir := sub(run, "inputRequest")
	if run["status"] != "running" || ir["kind"] != "secret" || ir["requestId"] != "otp" || !strings.Contains(ir["message"].(string), "one-time code") {
		t.Fatalf("login on %s: %v", page, run)
	}
	if msg, _ := sub(run, "progress")["message"].(string); !strings.HasPrefix(msg, "waiting for input: ") {
		t.Errorf("progress.message = %q", msg)
	}
	return id
}

// loggedIn checks the run succeeded and the members page opens in sid.
func loggedIn(t *testing.T, cs *sdk.ClientSession, rec *replies, fx *fixture.Server, runID, sid string) {
	t.Helper()
	run := waitTerminal(t, cs, runID)
	j, _ := json.Marshal(run)
	rec.b.Write(j)
	if run["status"] != "succeeded" || sub(run, "result")["loggedIn"] != true || run["inputRequest"] != nil {
		t.Fatalf("login run: %v", run)
	}
	pages := runOK(t, cs, "batch_extract_pages", sid, membersInputs(fx))["pages"].([]any)
	if f := pages[0].(obj)["fields"].(obj); f["secret"] != "members-only-42" {
		t.Fatalf("members page after the one-time code: %v", pages[0])
	}
}

func TestBlackboxOneTimeCodeFromAnotherProcess(t *testing.T) {
	fixture.NeedChromium(t)
	t.Parallel()
	fx := fixture.New(t)
	db := filepath.Join(t.TempDir(), "bt.db")
	p := startServe(t, "--db", db)
	cs := connectHTTP(t, p, nil)
	rec := &replies{}

	// answer_task_run over stdio from a second process on the database.
	s1 := newSession(t, cs, nil)
	id := otpLogin(t, cs, rec, fx, s1, fixture.OTPLoginPages[0])
	other, p2 := startStdio(t, "--db", db)
	if code, msg := callErr(t, other, "answer_task_run", obj{"runId": id, "requestId": "otp", "confirm": true}); code != "INVALID_PARAMETER" || !strings.Contains(msg, "value") {
		t.Fatalf("confirm for a secret: %s %s", code, msg)
	}
	if code, _ := callErr(t, other, "answer_task_run", obj{"runId": id, "requestId": "nope", "value": fixture.OTPCode}); code != "INVALID_PARAMETER" {
		t.Fatalf("unknown requestId: %s", code)
	}
	ans := rec.ok(t, other, "answer_task_run", obj{"runId": id, "requestId": "otp", "value": fixture.OTPCode})
	if ans["answered"] != true || ans["kind"] != "secret" {
		t.Fatalf("answer_task_run: %v", ans)
	}
	loggedIn(t, cs, rec, fx, id, s1)

	// browsertask answer from a terminal-less shell, value on stdin.
	s2 := newSession(t, cs, nil)
	id2 := otpLogin(t, cs, rec, fx, s2, fixture.OTPLoginPages[2])
	out, errs, code := cli(t, fixture.OTPCode+"\n", "answer", id2, "--db", db)
	if code != 0 || strings.Contains(out+errs, fixture.OTPCode) {
		t.Fatalf("browsertask answer: exit %d\n%s\n%s", code, out, errs)
	}
	rec.b.WriteString(out + errs)
	loggedIn(t, cs, rec, fx, id2, s2)

	// The dashboard's form, driven in Chromium.
	s3 := newSession(t, cs, nil)
	id3 := otpLogin(t, cs, rec, fx, s3, fixture.OTPLoginPages[1])
	answerInDashboard(t, "http://"+p.addr+"/runs/"+id3, fixture.OTPCode)
	loggedIn(t, cs, rec, fx, id3, s3)

	// The code is nowhere: database files, events, stderr, MCP replies.
	for _, runID := range []string{id, id2, id3} {
		ev := rec.ok(t, cs, "get_task_run_events", obj{"runId": runID})
		kinds := map[string]int{}
		for _, e := range ev["events"].([]any) {
			kinds[e.(obj)["type"].(string)]++
		}
		if kinds["input"] != 2 {
			t.Errorf("run %s: %d input events, want 2 (asked, answered): %v", runID, kinds["input"], kinds)
		}
	}
	p.stop(5 * time.Second)
	if hits := fileContains(t, fixture.OTPCode, db, db+"-wal", db+"-shm", p.logPath, p2.logPath); len(hits) > 0 {
		t.Errorf("the one-time code is in %v", hits)
	}
	if strings.Contains(rec.b.String(), fixture.OTPCode) {
		t.Errorf("an MCP answer holds the one-time code")
	}
}

// answerInDashboard opens a run page in a separate Chromium, types code
// into its secret answer field and sends the form, then waits for the
// dashboard's notice.
func answerInDashboard(t *testing.T, runURL, code string) {
	t.Helper()
	b := rod.New().ControlURL(startCDPChromium(t))
	if err := b.Connect(); err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	ctx, cancel := fixture.Context(t)
	defer cancel()
	page, err := b.Context(ctx).Page(proto.TargetCreateTarget{URL: runURL})
	if err != nil {
		t.Fatal(err)
	}
	field := `#run-ask form.answer[data-kind="secret"] input[name="value"]`
	if _, err := page.Element(field); err != nil {
		t.Fatalf("no secret answer field on %s: %v", runURL, err)
	}
	if _, err := page.Eval(`s => document.querySelector(s).focus()`, field); err != nil {
		t.Fatal(err)
	}
	if err := page.InsertText(code); err != nil {
		t.Fatal(err)
	}
	if _, err := page.Eval(`s => document.querySelector(s).form.requestSubmit()`, field); err != nil {
		t.Fatal(err)
	}
	if _, err := page.ElementR("#answer-status .alert", "Answer sent"); err != nil {
		t.Fatalf("no notice after sending the answer: %v", err)
	}
}

func TestBlackboxWaitingLimits(t *testing.T) {
	fixture.NeedChromium(t)
	t.Parallel()
	fx := fixture.New(t)
	p := startServe(t, "--input-timeout-ms", "1500")
	cs := connectHTTP(t, p, nil)
	rec := &replies{}
	if prof := callOK(t, cs, "get_runtime_profile", nil); num(prof, "inputTimeoutMs") != 1500 {
		t.Fatalf("profile inputTimeoutMs = %v", prof["inputTimeoutMs"])
	}

	// Nobody answers: RUN_TIMEOUT, reason "no answer".
	s1 := newSession(t, cs, nil)
	id := otpLogin(t, cs, rec, fx, s1, fixture.OTPLoginPages[1])
	run := waitTerminal(t, cs, id)
	if e := sub(run, "error"); run["status"] != "failed" || e["errorCode"] != "RUN_TIMEOUT" || sub(e, "details")["reason"] != "no answer" {
		t.Fatalf("unanswered login: %v", run)
	}

	// A sync call answers at once, as async, with the question.
	p2 := startServe(t)
	cs2 := connectHTTP(t, p2, nil)
	s2 := newSession(t, cs2, nil)
	h := callOK(t, cs2, "run_task_template", obj{"templateId": "login", "sessionId": s2, "options": obj{"mode": "sync"},
		"inputs": obj{"url": fx.URL(fixture.OTPLoginPages[0]), "username": fixture.LoginUser, "password": fixture.LoginPassword}})
	if h["mode"] != "async" || h["status"] != "running" || sub(h, "inputRequest")["requestId"] != "otp" {
		t.Fatalf("sync call of a run that asks: %v", h)
	}

	// Cancel while waiting: canceled within 2 s of the answer to cancel.
	start := time.Now()
	c := callOK(t, cs2, "cancel_task_run", obj{"runId": h["runId"]})
	if c["success"] != true || c["status"] != "canceled" {
		t.Fatalf("cancel: %v", c)
	}
	if d := time.Since(start); d > 2*time.Second {
		t.Errorf("cancel of a waiting run took %v", d)
	}
	if r := getRun(t, cs2, h["runId"].(string)); r["status"] != "canceled" || r["inputRequest"] != nil {
		t.Fatalf("canceled run: %v", r)
	}
}

// shopSteps asks for a gift-card PIN (secret), then confirms before placing
// the order.
func shopSteps(fx *fixture.Server) obj {
	return obj{"startUrl": fx.URL("/shop/cart"), "steps": []any{
		obj{"action": "ask", "message": "Gift card PIN?", "selector": "#pin", "secret": true},
		obj{"action": "confirm", "message": "Place the order for 1 × Blue mug (12.00 EUR)?"},
		obj{"action": "click", "selector": "#place-order"},
		obj{"action": "wait_for", "text": "Order placed"},
		obj{"action": "extract", "name": "order", "selector": "#order"},
		obj{"action": "extract", "name": "giftcard", "selector": "#giftcard"},
	}}
}

// waitQuestion waits until run id asks requestID and returns the run.
func waitQuestion(t *testing.T, cs *sdk.ClientSession, id, requestID string) obj {
	t.Helper()
	return waitRun(t, cs, id, "question "+requestID, func(r obj) bool {
		ir, _ := r["inputRequest"].(obj)
		return (ir != nil && ir["requestId"] == requestID) || terminal(r["status"])
	})
}

// TestBlackboxRunStepsConfirm: yes places the order; no fails the run
// STEP_EXECUTION_FAILED, reason "declined", at the confirm step, and the
// fixture never saw an order.
func TestBlackboxRunStepsConfirm(t *testing.T) {
	fixture.NeedChromium(t)
	t.Parallel()
	fx := fixture.New(t)
	p := startServe(t)
	cs := connectHTTP(t, p, nil)
	for _, yes := range []bool{false, true} {
		id := submitAsync(t, cs, "run_steps", shopSteps(fx), nil)
		if r := waitQuestion(t, cs, id, "step-0"); sub(r, "inputRequest")["kind"] != "secret" {
			t.Fatalf("ask step: %v", r)
		}
		callOK(t, cs, "answer_task_run", obj{"runId": id, "requestId": "step-0", "value": fixture.ShopGiftCardPIN})
		if r := waitQuestion(t, cs, id, "step-1"); sub(r, "inputRequest")["kind"] != "confirm" {
			t.Fatalf("confirm step: %v", r)
		}
		if code, _ := callErr(t, cs, "answer_task_run", obj{"runId": id, "requestId": "step-1", "value": "yes"}); code != "INVALID_PARAMETER" {
			t.Fatalf("a value for a confirm: %s", code)
		}
		callOK(t, cs, "answer_task_run", obj{"runId": id, "requestId": "step-1", "confirm": yes})
		run := waitTerminal(t, cs, id)
		if !yes {
			e := sub(run, "error")
			d := sub(e, "details")
			if run["status"] != "failed" || e["errorCode"] != "STEP_EXECUTION_FAILED" || d["reason"] != "declined" || num(d, "stepIndex") != 1 {
				t.Fatalf("declined order: %v", run)
			}
			if n := fx.Orders(); n != 0 {
				t.Fatalf("a declined order reached the shop: %d orders", n)
			}
			continue
		}
		vals := sub(sub(run, "result"), "values")
		if run["status"] != "succeeded" || vals["order"] != "Order placed #1" || vals["giftcard"] != "Gift card applied" || fx.Orders() != 1 {
			t.Fatalf("confirmed order: %v (orders %d)", run, fx.Orders())
		}
		b, _ := json.Marshal(run)
		if strings.Contains(string(b), fixture.ShopGiftCardPIN) {
			t.Fatalf("the PIN is in the run: %s", b)
		}
	}
}
