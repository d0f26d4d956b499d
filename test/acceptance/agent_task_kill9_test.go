package acceptance

// Issue 32, acceptance 4: agent_task killed with kill -9 in the middle of
// a checkout (the payment request reached the shop, its outcome was not
// recorded) resumes in the next process on the database: it looks at the
// page again, asks the person before repeating the payment, and the shop
// receives exactly one payment.

import (
	"encoding/json"
	"strings"
	"sync"
	"testing"

	"github.com/browsertask/browsertask/internal/fixture"
)

// checkoutModel is the scripted model of the checkout task: it pays, and
// answers from the page that says so, or (told the person said no to
// paying again) with what it knows.
func checkoutModel(t *testing.T) (*fixture.ScriptedModel, func() []string) {
	var mu sync.Mutex
	var prompts []string
	m := fixture.NewScriptedModel(t, func(prompt string) string {
		mu.Lock()
		prompts = append(prompts, prompt)
		mu.Unlock()
		page := prompt[strings.LastIndex(prompt, "Current page:\n"):]
		url := strings.Fields(strings.SplitN(page, "\n", 3)[1])
		reply := func(v any) string { b, _ := json.Marshal(v); return string(b) }
		switch {
		case strings.Contains(page, "Payment received, order #"):
			i := strings.Index(page, "Payment received, order #")
			text := page[i : i+len("Payment received, order #")+1]
			return reply(obj{"action": "answer", "result": obj{"order": text}, "evidence": obj{"order": obj{"url": url[len(url)-1], "text": text}}})
		case strings.Contains(prompt, "the person said no"):
			return reply(obj{"action": "answer", "result": obj{"order": "not paid again"}, "evidence": obj{"order": obj{"url": url[len(url)-1], "text": "Your basket"}}})
		case fixture.Ref(page, "button", "Pay now") != "":
			return reply(obj{"actions": []any{obj{"action": "click", "ref": fixture.Ref(page, "button", "Pay now")}}})
		}
		t.Errorf("unscripted state:\n%s", prompt)
		return `{"action":"ask_person","question":"unscripted"}`
	})
	return m, func() []string { mu.Lock(); defer mu.Unlock(); return append([]string(nil), prompts...) }
}

func TestBlackboxAgentTaskKill9MidCheckout(t *testing.T) {
	fixture.NeedChromium(t)
	t.Parallel()
	fx := fixture.New(t)
	arrived, release := fx.HoldPayments(t)
	model, prompts := checkoutModel(t)
	flags := []string{"--model-url", model.BaseURL(), "--model", "scripted"}
	a := startServe(t, flags...)
	csA := connectHTTP(t, a, nil)
	schema := obj{"type": "object", "required": []any{"order"}, "properties": obj{"order": obj{"type": "string"}}}
	id := submitAsync(t, csA, "agent_task", obj{"goal": "Pay for the basket", "startUrl": fx.URL("/agent/checkout")}, obj{"outputSchema": schema})

	// Paying is a commit: the person is asked first, and says yes.
	r := waitQuestion(t, csA, id, "agent-confirm-0")
	if ir := sub(r, "inputRequest"); ir["kind"] != "confirm" || !strings.Contains(ir["message"].(string), `"Pay now"`) {
		t.Fatalf("question before paying: %v", ir)
	}
	callOK(t, csA, "answer_task_run", obj{"runId": id, "requestId": "agent-confirm-0", "confirm": true})
	ctx, cancel := fixture.Context(t)
	defer cancel()
	select {
	case <-arrived:
	case <-ctx.Done():
		t.Fatalf("the payment never reached the shop: %v", getRun(t, csA, id))
	}
	// The shop holds the payment's answer: the run recorded the intent
	// and not the outcome when it dies.
	a.kill9()
	release()
	if items := checkpointedItems(t, a.db, id); len(items) != 1 || items[0] != "step 0 intent" {
		t.Fatalf("checkpoints at the kill: %v, want only step 0's intent", items)
	}

	b := startServe(t, append([]string{"--db", a.db}, flags...)...)
	csB := connectHTTP(t, b, nil)
	r = waitQuestion(t, csB, id, "agent-resume-0")
	if ir := sub(r, "inputRequest"); ir["kind"] != "confirm" || !strings.Contains(ir["message"].(string), "interrupted") {
		t.Fatalf("question after the resume: %v", ir)
	}
	callOK(t, csB, "answer_task_run", obj{"runId": id, "requestId": "agent-resume-0", "confirm": false})
	run := waitTerminal(t, csB, id)
	if run["status"] != "succeeded" {
		t.Fatalf("resumed run: %v %v", run["status"], run["error"])
	}
	if got := sub(sub(run, "result"), "answer")["order"]; got != "not paid again" {
		t.Fatalf("answer: %v", sub(run, "result"))
	}
	if n := fx.Payments(); n != 1 {
		t.Fatalf("the shop received %d payments, want exactly 1", n)
	}
	// The resumed process looked at the page again: its first question to
	// the model shows the checkout and says step 0 was interrupted.
	ps := prompts()
	if len(ps) != 3 || !strings.Contains(ps[1], "interrupted by a restart") || !strings.Contains(ps[1], "Pay now") {
		t.Fatalf("prompts: %d, the resumed one:\n%s", len(ps), ps[min(1, len(ps)-1)])
	}
}
