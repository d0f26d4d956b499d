package templates

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/browsertask/browsertask/engine"
	"github.com/browsertask/browsertask/internal/fixture"
)

// applyScript fills the three pages of /agent/apply and answers with the
// confirmation the site shows.
func applyScript(prompt, page string) string {
	switch {
	case strings.Contains(page, "Application received for"):
		text := "Application received for Ada Lovelace, plan pro"
		if !strings.Contains(page, text) {
			return ""
		}
		return act(map[string]any{"action": "answer", "result": map[string]any{"received": text},
			"evidence": map[string]any{"received": map[string]any{"url": urlOf(prompt), "text": text}}})
	case fixture.Ref(page, "button", "Submit application") != "":
		return act(map[string]any{"action": "click", "ref": fixture.Ref(page, "button", "Submit application")})
	case fixture.Ref(page, "combobox", "Plan") != "":
		return act(map[string]any{"action": "select", "ref": fixture.Ref(page, "combobox", "Plan"), "value": "Pro"},
			map[string]any{"action": "click", "ref": fixture.Ref(page, "button", "Next")})
	case fixture.Ref(page, "textbox", "Full name") != "":
		return act(map[string]any{"action": "fill", "ref": fixture.Ref(page, "textbox", "Full name"), "value": "Ada Lovelace"},
			map[string]any{"action": "fill", "ref": fixture.Ref(page, "textbox", "Email"), "value": "ada@example.com"},
			map[string]any{"action": "click", "ref": fixture.Ref(page, "button", "Next")})
	}
	return ""
}

// TestAgentTaskMultiPageFormThenReplay: the model fills a three-page
// application; the final "Submit application" asks the person first
// (confirm side-effects, the default); the answer is the site's
// confirmation. Then the result's replaySteps run as run_steps with no
// model (its server counts no more calls) and reach the same text, with
// the person asked the same yes.
func TestAgentTaskMultiPageFormThenReplay(t *testing.T) {
	srv := fixture.New(t)
	m, model, _ := agentModel(t, applyScript)
	env, a := askEnv(t, map[string]any{"goal": "Apply for the Pro plan as Ada Lovelace, ada@example.com", "startUrl": srv.URL("/agent/apply/1")},
		elicitAccept("confirm", true))
	res, err := runAgent(t, model, env, `{"type":"object","required":["received"],"properties":{"received":{"type":"string"}}}`)
	if err != nil {
		t.Fatal(err)
	}
	if got := answerOf(t, res); got != `{"received":"Application received for Ada Lovelace, plan pro"}` {
		t.Fatalf("answer = %s", got)
	}
	qs := a.questions()
	if len(qs) != 1 || qs[0].Kind != engine.QuestionConfirm || !strings.Contains(qs[0].Message, `"Submit application"`) {
		t.Fatalf("questions = %+v, want one confirm naming Submit application", qs)
	}
	if srv.Applications() != 1 || m.Calls() != 4 {
		t.Fatalf("applications = %d, model calls = %d; want 1 and 4", srv.Applications(), m.Calls())
	}
	// Each action is recorded twice: its intent, then its outcome.
	env.mu.Lock()
	items := append([]engine.Item(nil), env.items...)
	env.mu.Unlock()
	if len(items) != 12 || items[0].Key != "step 0 intent" || items[1].Key != "step 0 done" || items[11].Key != "step 5 done" {
		keys := []string{}
		for _, it := range items {
			keys = append(keys, it.Key)
		}
		t.Fatalf("items %q, want step 0 intent … step 5 done (6 actions)", keys)
	}

	replay, _ := json.Marshal(res["replaySteps"])
	calls := m.Calls()
	renv, ra := askEnv(t, map[string]any{}, elicitAccept("confirm", true))
	renv.inputs = replay
	out, err := runTemplate(t, NewRunSteps(testManager(t)), renv)
	if err != nil {
		t.Fatalf("replay %s: %v", replay, err)
	}
	if got := resultOf(t, out)["values"].(map[string]any)["received"]; got != "Application received for Ada Lovelace, plan pro" {
		t.Fatalf("replayed value = %v (steps %s)", got, replay)
	}
	if m.Calls() != calls {
		t.Fatalf("the replay asked the model %d times", m.Calls()-calls)
	}
	if srv.Applications() != 2 || len(ra.questions()) != 1 || ra.questions()[0].Kind != engine.QuestionConfirm {
		t.Fatalf("replay: applications = %d, questions %+v", srv.Applications(), ra.questions())
	}
}

// checkoutScript places the shop's order and answers with its number.
func checkoutScript(prompt, page string) string {
	switch {
	case strings.Contains(page, "Order placed #"):
		i := strings.Index(page, "Order placed #")
		text := strings.TrimRight(page[i:i+len("Order placed #")+1], `"`)
		return act(map[string]any{"action": "answer", "result": map[string]any{"order": text},
			"evidence": map[string]any{"order": map[string]any{"url": urlOf(prompt), "text": text}}})
	case fixture.Ref(page, "button", "Place order") != "":
		return act(map[string]any{"action": "click", "ref": fixture.Ref(page, "button", "Place order")})
	}
	return ""
}

// TestAgentTaskCheckoutAsksBeforePaying: "Place order" is a commit: the
// person is asked first; yes places exactly one order, no places none and
// the model is told.
func TestAgentTaskCheckoutAsksBeforePaying(t *testing.T) {
	srv := fixture.New(t)
	_, model, _ := agentModel(t, checkoutScript)
	env, a := askEnv(t, map[string]any{"goal": "Order the cart", "startUrl": srv.URL("/shop/cart")}, elicitAccept("confirm", true))
	res, err := runAgent(t, model, env, `{"type":"object","required":["order"],"properties":{"order":{"type":"string"}}}`)
	if err != nil {
		t.Fatal(err)
	}
	if got := answerOf(t, res); got != `{"order":"Order placed #1"}` || srv.Orders() != 1 {
		t.Fatalf("answer = %s, orders = %d", got, srv.Orders())
	}
	qs := a.questions()
	if len(qs) != 1 || qs[0].Kind != engine.QuestionConfirm || qs[0].RequestID != "agent-confirm-0" || !strings.Contains(qs[0].Message, `click "Place order"`) {
		t.Fatalf("questions = %+v", qs)
	}

	// No: nothing is ordered and the model hears it. A model that insists
	// is not put to the person again: each repeat is a failure in a row,
	// and maxFailuresInARow ends the run long before maxSteps.
	srv2 := fixture.New(t)
	env2, a2 := askEnv(t, map[string]any{"goal": "Order the cart", "startUrl": srv2.URL("/shop/cart"), "maxSteps": 20},
		elicitAccept("confirm", false))
	_, model2, prompts := agentModel(t, checkoutScript)
	_, err = runAgent(t, model2, env2, `{"type":"object","required":["order"],"properties":{"order":{"type":"string"}}}`)
	if e := engine.AsError(err); e == nil || e.Code != engine.StepExecutionFailed || e.Details["reason"] != "failures" {
		t.Fatalf("a model insisting after a no: %v, want STEP_EXECUTION_FAILED reason failures", err)
	}
	if srv2.Orders() != 0 {
		t.Fatalf("orders = %d after the person said no", srv2.Orders())
	}
	if qs := a2.questions(); len(qs) != 1 {
		t.Fatalf("the person was asked %d times, want once: %+v", len(qs), qs)
	}
	p := prompts()
	if len(p) != 4 || !strings.Contains(p[1], "the person said no") || !strings.Contains(p[2], "the person already said no") {
		t.Fatalf("model turns %d (want 4: the click asked about, then three repeats refused without asking); prompts %q", len(p), p)
	}
}

// TestAgentTaskAsksWhenStuck: a model that does not know what to search
// for asks the person (a text question, no field); the answer reaches the
// model in the next turn, which searches for it.
func TestAgentTaskAsksWhenStuck(t *testing.T) {
	srv := fixture.New(t)
	_, model, prompts := agentModel(t, func(prompt, page string) string {
		switch {
		case strings.Contains(page, "results"):
			return act(map[string]any{"action": "answer", "result": map[string]any{"first": "Tea pot"},
				"evidence": map[string]any{"first": map[string]any{"url": urlOf(prompt), "text": "Tea pot"}}})
		case strings.Contains(prompt, `the person answered "pot"`):
			box := fixture.Ref(page, "searchbox", "Search") + fixture.Ref(page, "textbox", "Search")
			return act(map[string]any{"action": "fill", "ref": box, "value": "pot"}, map[string]any{"action": "press", "ref": box, "value": "Enter"})
		case fixture.Ref(page, "button", "Search") != "":
			return act(map[string]any{"action": "ask_person", "question": "What should I search for?"})
		}
		return ""
	})
	env, a := askEnv(t, map[string]any{"goal": "Find the product the person wants", "startUrl": srv.URL("/agent/catalog")}, elicitAccept("value", "pot"))
	res, err := runAgent(t, model, env, `{"type":"object","required":["first"],"properties":{"first":{"type":"string"}}}`)
	if err != nil {
		t.Fatal(err)
	}
	if got := answerOf(t, res); got != `{"first":"Tea pot"}` {
		t.Fatalf("answer = %s", got)
	}
	qs := a.questions()
	if len(qs) != 1 || qs[0].Kind != engine.QuestionText || qs[0].Message != "What should I search for?" || !strings.HasPrefix(qs[0].RequestID, "agent-0-") {
		t.Fatalf("questions = %+v", qs)
	}
	if len(prompts()) != 3 {
		t.Fatalf("model calls = %d, want 3", len(prompts()))
	}
}

// TestAgentTaskScreenshotWhenAsked: the model asks for a screenshot; the
// next turn carries the PNG (an image part of the chat completion) and
// the run keeps it as the artifact step-0.png.
func TestAgentTaskScreenshotWhenAsked(t *testing.T) {
	srv := fixture.New(t)
	m, model, _ := agentModel(t, func(prompt, page string) string {
		if strings.Contains(prompt, "step 0: screenshot — taken") {
			return act(map[string]any{"action": "answer", "result": map[string]any{"title": "Catalog"},
				"evidence": map[string]any{"title": map[string]any{"url": urlOf(prompt), "text": "Catalog"}}})
		}
		return act(map[string]any{"action": "screenshot"})
	})
	env := newEnv(t, mustJSON(t, map[string]any{"goal": "Read the heading", "startUrl": srv.URL("/agent/catalog")}))
	if _, err := runAgent(t, model, env, `{"type":"object","properties":{"title":{"type":"string"}}}`); err != nil {
		t.Fatal(err)
	}
	if m.Calls() != 2 || m.Images() != 1 {
		t.Fatalf("model calls %d with %d images, want 2 calls and 1 image", m.Calls(), m.Images())
	}
	png, mime := env.artifact("step-0.png")
	if mime != "image/png" || len(png) < 8 || string(png[1:4]) != "PNG" {
		t.Fatalf("artifact step-0.png: %s, %d bytes", mime, len(png))
	}
}
